//go:build race

package main

// raceEnabled: the oracle volume tests (274 cases, each followed by an
// export of the whole state) skip under the race detector; `make test`
// runs them without it. The module's code has no concurrency of its own:
// the host paths they use are covered under -race by core/module's tests.
const raceEnabled = true
