// Package module will hold the tool-module runtime: the module manifest
// (tools with JSON Schemas, owned and read tables, host libraries), the
// content-addressed module registry, the compiled-module cache and the pools
// of warm wazero instances shared across sessions. It lands with the
// tool-module work; nothing is implemented here yet.
package module
