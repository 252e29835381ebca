// Package builtin looks up weft's built-in harnesses by name: "react"
// (plugins/harness/react), "hermes" (plugins/harness/hermes) and "native"
// (plugins/harness/native).
package builtin
