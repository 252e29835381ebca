// Package clock will give tool modules per-session virtual time as host
// functions, so a tool call is deterministic given its state, arguments, seed
// and clock. It lands with the tool-module work; nothing is implemented here
// yet.
package clock
