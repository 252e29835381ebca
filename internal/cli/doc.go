// Package cli implements the weft command-line interface: the cobra command
// tree, the global flags (--json, --log-level, --log-format), output and
// logging conventions, error reporting and exit codes. cmd/weft only wires
// the process (arguments, standard streams, signals, build stamps) into Run,
// so every command here is testable in-process.
package cli
