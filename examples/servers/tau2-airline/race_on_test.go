//go:build race

package airline

// raceEnabled: the oracle volume tests (230 cases, each changed state
// followed by an export of the whole state) skip under the race detector;
// `make test` runs them without it. The server has no concurrency of its
// own: the interpreter's is covered under -race by sdk/interp and
// core/module.
const raceEnabled = true
