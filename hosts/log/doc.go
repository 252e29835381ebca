// Package log is the weft_log_v1 host library (docs/abi.md): log records and
// MCP progress notifications from tool modules, delivered to the Logger bound
// to the context passed to the guest call with WithLogger (the runtime tags
// them with the session and tool call).
package log
