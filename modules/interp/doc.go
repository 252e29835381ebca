// Command interp is the shared interpreter of synthesized servers as a weft
// tool module: a WASI reactor (ABI v1, sdk/tool's exports and imports)
// whose weft_v1_call runs sdk/interp.Dispatch, so one compiled module and
// one pool of warm instances serve every synthesized server of a runtime
// (core/module.Runtime.LoadServer). Its manifest names it weft-interp and
// declares no tools and no tables: each server brings its own manifest, and
// its table policy is applied by the host per tool.
//
// Build it into the registry with
//
//	make build               # bin/weft, then the interpreter
//	weft module build ./modules/interp
//
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared; schema.sql is empty). A
// server bundle references the interpreter by its bundle digest
// (docs/design/021-synthesized-servers.md).
package main
