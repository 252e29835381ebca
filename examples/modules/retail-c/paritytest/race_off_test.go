//go:build !race

package paritytest

const raceEnabled = false
