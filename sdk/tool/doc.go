// Package tool will be the guest SDK for tool backends compiled with
// GOOS=wasip1 GOARCH=wasm: typed tool registration, the manifest export and a
// database/sql driver over the sql host library. It depends on nothing of the
// host side, so a third party imports only sdk. It lands with the tool-module
// work; nothing is implemented here yet.
package tool
