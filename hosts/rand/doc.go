// Package rand is the weft_rand_v1 host library (docs/abi.md): per-session
// seeded randomness for tool modules, so replaying a session replays its
// random choices. A call reads the Rand stream of the call environment
// (hosts.Call: the ChaCha8 stream of the session seed and call sequence)
// bound to the context of the guest call.
package rand
