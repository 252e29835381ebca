package module

import (
	"context"
	"errors"

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
func SQLExecutor(s StateSQL) sqlhost.Executor { return stateExecutor{s} }

type stateExecutor struct{ s StateSQL }

func (e stateExecutor) Query(ctx context.Context, q string, args ...any) (*sqlhost.Rows, error) {
	r, err := e.s.Query(ctx, q, args...)
	if err != nil || r == nil {
		return nil, err
	}
	return &sqlhost.Rows{Columns: r.Columns, Values: r.Values}, nil
}

func (e stateExecutor) Exec(ctx context.Context, q string, args ...any) (sqlhost.Result, error) {
	r, err := e.s.Exec(ctx, q, args...)
	return sqlhost.Result{RowsAffected: r.RowsAffected, LastInsertID: r.LastInsertID}, err
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
	case errors.Is(err, state.ErrReadOnlySchema):
		return sqlhost.KindDenied
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
func NativeSQL(s StateSQL, m *Manifest) func(ctx context.Context, req []byte) []byte {
	h := &sqlhost.Handler{Exec: SQLExecutor(s), Policy: m.SQLPolicy()}
	return h.Handle
}
