// Command weft is the weft command-line interface. It only wires the process
// into internal/cli, where the commands live: arguments, standard streams,
// interrupt signals and the build stamps set by the Makefile through
// -ldflags "-X main.version=... -X main.commit=...".
package main
