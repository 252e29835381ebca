//go:build race

package cli

// raceEnabled: the end-to-end weft run tests (real episodes through plugin
// processes) skip under the race detector, where every plugin process is a
// race-instrumented test binary; make test runs them without it. The
// pipeline they drive is covered under -race by internal/pipeline.
const raceEnabled = true
