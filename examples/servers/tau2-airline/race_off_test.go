//go:build !race

package airline

// raceEnabled: see race_on_test.go.
const raceEnabled = false
