package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"runtime/debug"

	"github.com/weft-dev/weft/sdk/abi"
)

// Dispatch is a module's request entry point when its Go code runs
// natively: the guest SDK's tool.Dispatch, or any function that answers a
// call request (docs/abi.md, "Call request") with the response JSON, using h
// for the host libraries.
type Dispatch func(ctx context.Context, h abi.Host, request []byte) []byte

// NewNative returns a Module that runs a module's Go code natively, for
// testing it without compiling to wasm: manifest is the module's manifest
// JSON (tool.ManifestJSON()), dispatch its entry point (tool.Dispatch).
//
// The manifest is validated as Compile validates it (*ModuleError,
// ErrInvalidModule), and the Module behaves as a compiled one: Call,
// ReadResource and GetPrompt validate arguments, run each request as a unit
// of work on the session's workspace under the manifest's table policy,
// with the session's virtual clock, the random stream of the call's
// sequence number (RandStream), its log and progress sinks and cfg's
// timeouts, and classify the answer the same way (moduletest.Run takes it
// too). What wasm adds is absent: a call cannot be stopped while Go code
// runs (its context is done at the deadline, which the SQL library and a
// well-behaved tool observe), there is no memory cap, and a panic that
// escapes dispatch is ErrTrap. Calls are safe for concurrent use and run one
// at a time (as the SDK's Dispatch does), each call's deadline starting when
// it runs. Digest is "native:sha256:<hex of the manifest>".
func NewNative(manifest []byte, dispatch Dispatch, cfg Config) (*Module, error) {
	sum := sha256.Sum256(manifest)
	digest := "native:sha256:" + hex.EncodeToString(sum[:])
	bad := func(reason string, err error) error {
		return &ModuleError{Digest: digest, Reason: reason, Err: err}
	}
	if dispatch == nil {
		return nil, bad("no dispatch function", nil)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m := &Module{rt: &Runtime{cfg: cfg, slots: make(chan struct{}, cfg.MaxConcurrentCalls)}, digest: digest, native: dispatch}
	if err := json.Unmarshal(manifest, &m.manifest); err != nil {
		return nil, bad("manifest is not JSON", err)
	}
	if m.schemas, err = m.manifest.compileSchemas(); err != nil {
		return nil, bad("manifest", err)
	}
	m.manifestJSON = append([]byte(nil), manifest...)
	m.policy = m.manifest.SQLPolicy()
	return m, nil
}

// runNative runs req through the native dispatch function with a
// NativeHost over env.
func (m *Module) runNative(ctx context.Context, env *callEnv, req []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return m.native(ctx, &NativeHost{env: env, ctx: ctx}, req), nil
}

// NativeHost serves the host libraries (abi.Host, what the guest SDK's
// tool.Dispatch takes) to a module running natively, for one call: the
// same environment Module.Call binds for wasm (SQL in the call's unit of
// work under the manifest's table policy, the session's virtual clock, the
// random stream of the call's sequence number, the session's log and
// progress sinks). A Module from NewNative creates one per call; use
// NewNativeHost to drive tool.Dispatch by hand.
type NativeHost struct {
	env *callEnv
	ctx context.Context
}

var _ abi.Host = (*NativeHost)(nil)

// NewNativeHost returns the host of one native call of session s: SQL on x
// (a *state.Unit or *state.Workspace) under m's table policy, the session's
// clock now, and the random stream of the session's next sequence number
// (which it consumes, as a call does), the session's Log and Progress unless
// opts replace them. ctx is the context of the SQL statements.
func NewNativeHost(ctx context.Context, s *Session, x StateSQL, m *Manifest, opts ...CallOption) *NativeHost {
	seq := s.seq.Add(1) - 1
	return &NativeHost{env: newCallEnv(s, m.Name, x, m.SQLPolicy(), m.FilesPolicy(), seq, 0, opts), ctx: ctx}
}

// FS serves one weft_fs_v1 request (abi.FSHost): on the call's unit of
// work under the manifest's files policy; an "other" error when x is no
// StateFiles.
func (h *NativeHost) FS(req []byte) []byte {
	if h.env.FS == nil {
		return []byte(`{"error":{"kind":"other","message":"no workspace files bound to this call"}}`)
	}
	return h.env.FS(h.ctx, req)
}

var _ abi.FSHost = (*NativeHost)(nil)

// SQL serves one weft_sql_v1 request.
func (h *NativeHost) SQL(req []byte) []byte { return h.env.SQL(h.ctx, req) }

// SQLBatch serves one weft_sql_v2 request (abi.SQLBatchHost).
func (h *NativeHost) SQLBatch(req []byte) []byte { return h.env.SQLBatch(h.ctx, req) }

var _ abi.SQLBatchHost = (*NativeHost)(nil)

// Now is the session clock at the start of the call, Unix nanoseconds.
func (h *NativeHost) Now() int64 { return h.env.Now }

// Rand fills p from the call's random stream.
func (h *NativeHost) Rand(p []byte) { _, _ = io.ReadFull(h.env.Rand, p) }

// Log forwards a log record to the call's log sink (level clamped to
// 0..3; dropped when there is none).
func (h *NativeHost) Log(level int, msg string) {
	if h.env.Log != nil {
		h.env.Log(min(max(level, 0), 3), msg)
	}
}

// Progress forwards a progress notification to the call's progress sink.
func (h *NativeHost) Progress(p, total float64, msg string) {
	if h.env.Progress != nil {
		h.env.Progress(p, total, msg)
	}
}

// Denied lists the statements the table policy refused during the call.
func (h *NativeHost) Denied() []string { return h.env.Denied() }
