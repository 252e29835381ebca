//go:build !race

package tau2retail_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
