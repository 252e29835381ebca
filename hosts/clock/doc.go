// Package clock is the weft_clock_v1 host library (docs/abi.md): per-session
// virtual time for tool modules, so a tool call is deterministic given its
// state, arguments, seed and clock. A call reads the Now of the call
// environment (hosts.Call) bound to the context of the guest call.
package clock
