//go:build race

package tau2retail_test

// raceEnabled: the oracle volume tests (274 cases, each changed state
// exported whole) skip under the race detector, as the Go retail module's
// do; the interpreter's concurrency is covered under -race by sdk/interp's
// and core/module's tests.
const raceEnabled = true
