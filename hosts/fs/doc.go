// Package fs will expose the session's workspace files to tool modules as
// host functions. It lands with the tool-module work; nothing is implemented
// here yet.
package fs
