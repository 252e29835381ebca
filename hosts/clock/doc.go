// Package clock is the weft_clock_v1 host library (docs/abi.md): per-session
// virtual time for tool modules, so a tool call is deterministic given its
// state, arguments, seed and clock. The Clock of a call is bound to the
// context passed to the guest call with WithClock.
package clock
