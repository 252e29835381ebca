// Package fshost exposes the session's workspace files to tool modules:
// the weft_fs_v1 host library of docs/abi.md. Handler implements the
// request/response JSON (sdk/abi FSRequest, FSResponse) over a small
// Executor interface (the module runtime adapts a state unit of work to
// it), checking the path syntax (ValidPath) and the manifest's files
// policy (Policy: reads and writes as "**", "dir/**" or path.Match globs)
// before anything runs; HostModule builds the wazero host module that
// routes a guest's call/take to the FS handler of the call environment
// (hosts.Call.FS) bound to the call's context. It imports nothing of core.
// Design: docs/design/025-workspace-files.md.
package fshost
