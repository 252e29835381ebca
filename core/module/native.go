package module

import (
	"context"
	"io"

	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

// NativeHost serves the host libraries to a module running natively (the
// guest SDK's tool.Dispatch, whose Host interface it implements) for one
// call of session s: SQL on x (a *state.Unit or *state.Workspace) under m's
// table policy, the session's clock, and the random stream of the session's
// next sequence number (consumed by NewNativeHost), exactly as Module.Call
// binds them for wasm.
type NativeHost struct {
	s      *Session
	ctx    context.Context
	sql    *sqlhost.Handler
	now    int64
	rand   io.Reader
	Denied []string // statements the table policy refused
}

// NewNativeHost returns the host of one native call.
func NewNativeHost(ctx context.Context, s *Session, x StateSQL, m *Manifest) *NativeHost {
	seq := s.seq.Add(1) - 1
	h := &NativeHost{s: s, ctx: ctx, now: s.now(), rand: RandStream(s.Seed, seq)}
	h.sql = &sqlhost.Handler{Exec: SQLExecutor(x), Policy: m.SQLPolicy(),
		OnDenied: func(d *sqlhost.DeniedError) { h.Denied = append(h.Denied, d.Statement) }}
	return h
}

// SQL serves one weft_sql_v1 request.
func (h *NativeHost) SQL(req []byte) []byte { return h.sql.Handle(h.ctx, req) }

// Now is the session clock in Unix nanoseconds.
func (h *NativeHost) Now() int64 { return h.now }

// Rand fills p from the call's random stream.
func (h *NativeHost) Rand(p []byte) { _, _ = io.ReadFull(h.rand, p) }

// Log forwards to the session's Log.
func (h *NativeHost) Log(level int, msg string) { logger{h.s}.Log(level, msg) }

// Progress forwards to the session's Progress.
func (h *NativeHost) Progress(p, total float64, msg string) { logger{h.s}.Progress(p, total, msg) }
