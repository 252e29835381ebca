// Package log will let tool modules write structured log records through a
// host function, tagged with the session and tool call. It lands with the
// tool-module work; nothing is implemented here yet.
package log
