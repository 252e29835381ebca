//go:build race

package pipeline

// raceEnabled: the volume test skips under the race detector; make test
// runs it without.
const raceEnabled = true
