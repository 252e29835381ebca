// Package tau2retail is the tau2-bench retail domain re-expressed as a
// synthesized server (weft.server/v1, sdk/spec): server.json declares the
// 16 tools (the names, descriptions and input schemas of the hand-written
// Go module examples/modules/retail), program.star implements them in
// Starlark against sdk/interp's builtins, schema.sql is its relational
// layout (JSON columns for nested records) and seed.json its seed rows,
// converted from tau2's db.json by Convert (cmd/tau2-retail-seed, `make
// tau2-retail-seed`). The package's tests replay both retail oracle files
// against it with core/module/moduletest. See README.md.
package tau2retail
