package module

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"time"

	"github.com/weft-dev/weft/core/state"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

// StateSQL is what the SQL host library runs statements on: a *state.Unit
// (inside a tool call) or a *state.Workspace.
type StateSQL interface {
	Query(ctx context.Context, q string, args ...any) (*state.Rows, error)
	Exec(ctx context.Context, q string, args ...any) (state.Result, error)
}

// SQLExecutor adapts a state unit of work (or workspace) to the SQL host
// library's Executor; its errors are classified into the ABI error kinds by
// ClassifySQLError.
func SQLExecutor(s StateSQL) sqlhost.Executor { return stateExecutor{s: s} }

// SandboxedSQL is SQLExecutor with sb bound to every statement: the engine
// then checks the table policy where it resolves names (so CTEs and derived
// tables are scoped as the engine scopes them), refuses functions with
// process-wide state, reads the virtual clock and seeded stream for
// NOW()/RAND()/UUID() and column defaults, and bounds what the host
// computes (state.Sandbox). A refused table or function is returned as a
// *sqlhost.DeniedError.
func SandboxedSQL(s StateSQL, sb *state.Sandbox) sqlhost.Executor {
	return stateExecutor{s: s, sb: sb}
}

type stateExecutor struct {
	s  StateSQL
	sb *state.Sandbox
}

func (e stateExecutor) bind(ctx context.Context) context.Context {
	if e.sb == nil {
		return ctx
	}
	return state.WithSandbox(ctx, e.sb)
}

// denial turns a state ErrDenied into the host library's *DeniedError.
func (e stateExecutor) denial(q string, err error) error {
	var se *state.Error
	if err == nil || !errors.As(err, &se) || se.Kind != state.ErrDenied {
		return err
	}
	d := &sqlhost.DeniedError{Table: se.Table, Statement: q}
	if se.Err != nil {
		d.Reason = se.Err.Error()
	}
	if se.Table != "" && e.sb != nil && e.sb.Tables.CanRead(se.Table) {
		d.Write = true
	}
	return d
}

func (e stateExecutor) Query(ctx context.Context, q string, args ...any) (*sqlhost.Rows, error) {
	r, err := e.s.Query(e.bind(ctx), q, args...)
	if err != nil || r == nil {
		return nil, e.denial(q, err)
	}
	return &sqlhost.Rows{Columns: r.Columns, Values: r.Values}, nil
}

func (e stateExecutor) Exec(ctx context.Context, q string, args ...any) (sqlhost.Result, error) {
	r, err := e.s.Exec(e.bind(ctx), q, args...)
	return sqlhost.Result{RowsAffected: r.RowsAffected, LastInsertID: r.LastInsertID}, e.denial(q, err)
}

// callSandbox is the state.Sandbox of one call: the table policy pol, the
// call's virtual clock (nanos, Unix nanoseconds) and the call's SQL random
// stream (SQLRandStream(seed, seq)).
func callSandbox(pol sqlhost.Policy, nanos func() int64, seed, seq uint64) *state.Sandbox {
	return &state.Sandbox{
		Tables: state.NewTablePolicy(pol.Owns, pol.Reads),
		Now:    func() time.Time { return time.Unix(0, nanos()).UTC() },
		Rand:   &lazyStream{seed: seed, seq: seq, sql: true},
	}
}

// SQLRandStream is the random stream SQL's RAND(), UUID(), UUID_SHORT() and
// RANDOM_BYTES() read in call number seq of a session seeded with seed:
// ChaCha8 keyed by sha256("weft.sql.rand/v1" || seed || seq), both
// little-endian uint64. It is separate from the guest's stream
// (RandStream), so SQL randomness does not shift what the guest draws.
func SQLRandStream(seed, seq uint64) io.Reader {
	in := make([]byte, 0, 32)
	in = append(in, "weft.sql.rand/v1"...)
	in = binary.LittleEndian.AppendUint64(in, seed)
	in = binary.LittleEndian.AppendUint64(in, seq)
	return rand.NewChaCha8(sha256.Sum256(in))
}

func (stateExecutor) Classify(err error) string { return ClassifySQLError(err) }

// ClassifySQLError maps a state error to its weft_sql_v1 error kind
// (docs/abi.md); anything unrecognised is "other".
func ClassifySQLError(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, state.ErrDuplicateKey):
		return sqlhost.KindDuplicateKey
	case errors.Is(err, state.ErrNoSuchTable):
		return sqlhost.KindNoSuchTable
	case errors.Is(err, state.ErrNoSuchColumn):
		return sqlhost.KindNoSuchColumn
	case errors.Is(err, state.ErrSyntax):
		return sqlhost.KindSyntax
	case errors.Is(err, state.ErrTypeMismatch), errors.Is(err, state.ErrBadArgument):
		return sqlhost.KindTypeMismatch
	case errors.Is(err, state.ErrNotNull):
		return sqlhost.KindNotNull
	case errors.Is(err, state.ErrReadOnlySchema), errors.Is(err, state.ErrDenied):
		return sqlhost.KindDenied
	case errors.Is(err, state.ErrResourceLimit):
		return sqlhost.KindResourceLimit
	}
	return sqlhost.KindOther
}

// SQLPolicy is the SQL host library's table policy of a manifest.
func (m *Manifest) SQLPolicy() sqlhost.Policy {
	return sqlhost.Policy{Owns: m.Tables.Owns, Reads: m.Tables.Reads}
}

// NativeSQL returns a weft_sql_v1 handler that runs a module's SQL requests
// on s under m's table policy, for running a module's tools natively (the
// guest SDK's native entry point) without wasm.
//
// Its statements run sandboxed (SandboxedSQL) with the table policy, the
// clock at DefaultEpoch and the SQL random stream of seed 0, call 0: a
// NativeHost gives a call its session's clock and stream.
func NativeSQL(s StateSQL, m *Manifest) func(ctx context.Context, req []byte) []byte {
	epoch := DefaultEpoch.UnixNano()
	sb := callSandbox(m.SQLPolicy(), func() int64 { return epoch }, 0, 0)
	h := &sqlhost.Handler{Exec: SandboxedSQL(s, sb), Policy: m.SQLPolicy()}
	return h.Handle
}
