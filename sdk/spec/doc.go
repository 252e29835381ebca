// Package spec is the synthesized-server format weft.server/v1: an MCP
// server as data — tool definitions (name, description, input JSON Schema,
// optional output schema, read-only or not, the tables each tool reads and
// writes, the error codes it may return), the schema DDL, seed rows, a
// closed set of error codes, and one Starlark program holding a function
// per tool. One shared interpreter module (sdk/interp, compiled once to
// wasm) runs every server: registering a server compiles nothing.
//
// A Server is written as one JSON file, or as a directory whose
// server.json names its program, schema and seed files (ProgramFile,
// SchemaFile, SeedFile); Load reads either. Validate checks what can be
// checked without running anything (names, schemas, error codes, declared
// tables against the DDL's CREATE TABLE names); each problem is an *Error
// naming the server, the tool and the field. The format is documented in
// docs/synthesis.md and decided in docs/design/021-synthesized-servers.md.
//
// Standard library and sdk/abi only.
package spec
