// Package interp is the shared interpreter of synthesized servers
// (sdk/spec, weft.server/v1): it answers ABI v1 call requests that carry a
// Program by running the named tool's Starlark function (go.starlark.net)
// against the host libraries (abi.Host). Compiled programs are cached by
// digest, least recently used dropped past Options.MaxProgramBytes of
// estimated memory (ProgramCharge; default 128 MiB), so one instance
// serves many servers; each call runs with a step
// budget, and the program sees only what the builtins give it:
//
//	query(sql, *args)     -> list of dicts, one per row (column -> value)
//	query_one(sql, *args) -> the first row as a dict, or None
//	execute(sql, *args)   -> the number of rows affected
//	tool_error(code, msg) -> ends the call with a tool error (code from the server's errors)
//	now()                 -> the session's virtual clock, "2006-01-02T15:04:05" UTC
//	now_unix()            -> the same clock in seconds since the Unix epoch
//	rand_int(n)           -> an int in [0, n) from the session's seeded stream
//	log(msg)              -> a log record at level info
//	json, math            -> the go.starlark.net json and math modules
//
// SQL placeholders are ? and bound in order (never spliced); a dict or
// list argument is bound as its JSON text, and a JSON column reads back as
// the value it holds. Any failed statement, fail(), or a runtime error ends
// the call with an internal error (a module bug, attributed to the
// environment); missing or unexpected arguments are tool errors.
//
// The same code runs natively (Dispatch with core/module.NewNative) and
// compiled to wasm (modules/interp). Decision record:
// docs/design/021-synthesized-servers.md.
package interp
