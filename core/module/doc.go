// Package module is the tool-module runtime (docs/abi.md, ABI v1): the
// module manifest, its validation, and a wazero-based Runtime that compiles
// each module once per sha256 digest, keeps a bounded pool of warm instances
// per module shared by all sessions, and runs tool calls as units of work on
// the calling session's state.Workspace:
//
//	rt, _ := module.NewRuntime(ctx, module.Config{CacheDir: dir})
//	mod, _ := rt.Compile(ctx, wasm)              // validated manifest: mod.Manifest()
//	s := &module.Session{Workspace: ws, Seed: 7, Clock: module.NewVirtualClock(t0)}
//	res, err := mod.Call(ctx, s, "get_order_details", args)
//
// Every module is instrumented before compiling (interrupt.go): deadline
// checks at function entries and loop headers that call the host every
// 32,768 checks, so a call stops at its deadline and a spinning guest never
// blocks the Go garbage collector. With Config.ModuleMemoryMiB, compiled
// modules are kept in an LRU under that budget and compiled again (from the
// file cache) after an eviction (lru.go, Runtime.LRUStats).
//
// A successful call commits its SQL writes; a tool error (res.IsError) and
// every failure roll them back. Failures are typed: *ArgumentError
// (ErrInvalidArguments), ErrUnknownTool, and *CallError with Kind ErrTrap,
// ErrDeadline, ErrStepBudget, ErrCanceled, ErrMemoryLimit or ErrMalformedOutput; the
// instance of a failed call is discarded. The guest's clock (weft_clock_v1
// and WASI clocks) is the session's virtual clock and its randomness
// (weft_rand_v1 and WASI random_get) the ChaCha8 stream of (seed, call
// sequence), so replaying a session's calls in order reproduces them.
//
// The wire types (Manifest, Content, ResourceContents, PromptMessage, the
// Result's CallResult) are sdk/abi's, shared with the guest SDK. Each call
// runs in one environment (hosts.Call, built once per call): the WASI
// binding and every host library read it; CallOption (WithLog,
// WithProgress) routes one call's log records and progress elsewhere than
// the Session's.
//
// Testing a module natively: NewNative(tool.ManifestJSON(), tool.Dispatch,
// cfg) is a *Module over the module's Go code, with the real host
// libraries on a state workspace, the session's virtual clock and the
// seeded random stream of each call; Call, ReadResource, GetPrompt and
// moduletest.Run work on it as on a compiled module (docs/abi.md, "Testing
// a module natively"). NewNativeHost serves one call to tool.Dispatch by
// hand; SQLExecutor and ClassifySQLError wire a state workspace to the
// hosts/sql library.
package module
