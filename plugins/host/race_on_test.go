//go:build race

package host_test

// raceEnabled: the volume tests (hundreds of episodes) skip under the race
// detector; `make test` runs them without it (the concurrency paths they
// use are exercised under -race by the smaller tests of this package).
const raceEnabled = true
