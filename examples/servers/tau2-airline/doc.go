// Package airline is the tau2-bench airline domain written in weft's
// synthesized-server format (weft.server/v1, sdk/spec): server.json holds
// tau2's 14 tool definitions (names, descriptions and input schemas as
// tau2's tools.json gives them, read_only, the tables each tool reads and
// writes, its error codes from a closed set), schema.sql the relational
// schema, program.star one Starlark function per tool plus export(), and
// seed.json tau2's db.json converted by the domain's own converter
// (./convert, `make airline-seed`).
//
// The package has no Go code of its own: its tests replay the tau2 oracle
// files (examples/data/tau2-airline/oracle) through core/module/moduletest,
// the harness of `weft module test`, over module.NewNativeServer, and check
// that export() gives db.json back. scripts/oracle-test.sh airline FILE runs
// any cases file of the same format.
package airline
