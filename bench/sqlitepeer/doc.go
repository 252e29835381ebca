// Package sqlitepeer benchmarks weft's SQL state against SQLite (the
// pure-Go driver modernc.org/sqlite) over the same retail schema and the
// same statements, per tool call and for a GRPO group (decision 035,
// docs/benchmarks.md). It is its own Go module so that SQLite's
// dependencies do not move the versions of the main module's.
package sqlitepeer
