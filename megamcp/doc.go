// Package megamcp is weft's serving layer: many sessions of tool modules in
// one process, reached over MCP (Streamable HTTP or stdio) and an admin
// HTTP+JSON API.
//
// A Session is a lifecycle group of modules (a task's servers) over one
// private workspace forked from a version; the modules' compiled code and
// warm Wasm instances are shared by every session, the state is not. Each
// session has an unguessable id (128 random bits), a generation, a virtual
// clock, a seed and a ledger.
//
// A tool call (Server.Call, or tools/call over MCP) runs: fence check (the
// request's generation, if any, must be current: *FencedError otherwise) ->
// argument validation -> the module call in a unit of work on the session's
// workspace (committed on success, rolled back on a tool error or failure)
// -> ledger append -> result. The call is acknowledged only after its record
// is in the session's write-ahead log on disk (Config.Fsync says whether it
// is also fsync'ed); a failed append undoes the call.
//
// Sessions are checkpointed in the background (Config.CheckpointInterval):
// the checkpoint is a row-level delta (state.ExportDelta) against the
// version the session was created from or last restored to, so it costs
// what the session changed. Open on a data directory recovers every session
// from its checkpoint plus a replay of the ledger records after it: tool
// modules are deterministic given (state, arguments, seed, sequence number,
// virtual clock), so replay reproduces each acknowledged call exactly.
// Restore bumps the generation, fencing requests made before it.
//
// On-disk layout of Config.DataDir:
//
//	sessions/<id>/meta.json        modules, seed, initial version, clock
//	sessions/<id>/ledger.wal       the ledger: CRC-framed JSON Records
//	sessions/<id>/checkpoint.json  the last checkpoint (delta + position)
//	versions/<hash>.json           versions (weft.state/v1), by state hash
//
// The HTTP API is documented in docs/api.md; the design and its trade-offs
// in docs/design/005-megamcp.md.
package megamcp
