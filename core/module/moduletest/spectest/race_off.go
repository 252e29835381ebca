//go:build !race

package spectest

// RaceEnabled: the test binary runs under the race detector.
const RaceEnabled = false
