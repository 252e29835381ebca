// Command everything is a weft tool module with the server fixtures of the
// MCP conformance suite (@modelcontextprotocol/conformance 0.1.16): tools
// returning every content type, logging and progress, a tool error, a tool
// with a JSON Schema 2020-12 input schema, two static resources, a resource
// template and four prompts. It is deterministic (no wall time, no
// randomness) and owns no tables. Build it with
//
//	weft module build ./examples/modules/everything
//
// or, for the bare wasm,
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o everything.wasm ./examples/modules/everything
//
// README.md lists what each fixture returns.
package main
