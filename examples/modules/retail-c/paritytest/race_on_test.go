//go:build race

package paritytest

// raceEnabled: under -race the parity test runs its -short slice.
const raceEnabled = true
