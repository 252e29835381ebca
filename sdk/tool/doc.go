// Package tool is the guest SDK for weft tool modules written in Go: typed
// MCP tool registration with JSON Schemas derived by reflection, read-only
// MCP resources, resource templates and prompts (Resource,
// ResourceTemplate, Prompt), rich tool content (Result: images, audio,
// resource links, embedded resources), the manifest, call dispatch, and a
// database/sql driver over the weft_sql_v1 host library. docs/abi.md (ABI
// v1) is the contract it implements.
//
// A module is a package main built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o module.wasm ./mymodule
//
// with an empty main and its registrations in init:
//
//	func init() {
//		tool.Module(tool.Info{Name: "hello", Version: "1.0.0", Owns: []string{"notes"}})
//		tool.Register("add_note", "Adds a note.", addNote)
//	}
//
//	func main() {}
//
// On GOOS=wasip1 the package exports weft_abi_v1, weft_v1_alloc,
// weft_v1_manifest and weft_v1_call and imports the weft_sql_v1,
// weft_clock_v1, weft_rand_v1 and weft_log_v1 host libraries. On every other
// GOOS nothing is exported: ManifestJSON and Dispatch (with a Host of the
// caller's choosing) are the entry points, for tests and native hosts;
// core/module.NewNative(tool.ManifestJSON(), tool.Dispatch, cfg) runs a
// module that way against the real host libraries (docs/abi.md, "Testing a
// module natively"). Now and Rand read the session's clock and random
// stream in both builds.
//
// A module whose requests are not registered Go functions (the shared
// interpreter of synthesized servers, modules/interp) keeps these exports
// and imports and installs its own manifest and entry point with Serve.
//
// The wire types (manifest, results, content, SQL request and response) are
// sdk/abi's, shared with the host. The package depends only on the
// standard library and sdk/abi, and on nothing of the weft host side.
package tool
