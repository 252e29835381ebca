// Package rand is the weft_rand_v1 host library (docs/abi.md): per-session
// seeded randomness for tool modules, so replaying a session replays its
// random choices. The stream of a call (an io.Reader, e.g. a ChaCha8 seeded
// from the session seed and call sequence) is bound to the context passed to
// the guest call with WithSource.
package rand
