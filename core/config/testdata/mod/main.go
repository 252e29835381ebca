// Package main stands in for a module source directory in the config tests
// (CheckModulePath wants a Go file); it is never built.
package main

func main() {}
