// Package log is the weft_log_v1 host library (docs/abi.md): log records and
// MCP progress notifications from tool modules, delivered to the Log and
// Progress of the call environment (hosts.Call) bound to the context of the
// guest call (the runtime routes them to the session or the request that
// made the call).
package log
