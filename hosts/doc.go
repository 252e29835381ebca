// Package hosts is the root of the host-function libraries that tool modules
// import, one versioned namespace per subpackage (sql, fs, clock, rand, log).
// Each library takes small interfaces (an SQL executor, a clock, a seed) and
// imports nothing of core; the module runtime wires a session's state into
// them. The libraries land with the tool-module work.
package hosts
