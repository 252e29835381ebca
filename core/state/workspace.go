package state

import (
	"context"
	"encoding/json"

	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// Workspace is a private, mutable state forked from a Version. SQL runs on it
// with bound parameters only. Methods are safe to call from several
// goroutines (they serialize), but a workspace is meant to be driven by one
// session at a time.
//
// Every statement is atomic: a failing statement leaves the workspace as it
// was before the statement. A Unit groups statements into one unit of work
// (a tool call is one unit) that commits or rolls back as a whole.
type Workspace struct {
	store *Store

	mu     sync.Mutex
	cat    *catalog
	tables []*tableData // owned by this workspace; entries are immutable
	files  *fileTree    // immutable; replaced by each file write
	base   *Version
	unit   *Unit
	ddl    bool // schema changes allowed (only while loading)
	save   []*tableData
	info   *queryInfo // the previous statement's, for LAST_INSERT_ID() etc.
}

// Base returns the version this workspace was forked from or last restored to.
func (w *Workspace) Base() *Version {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.base
}

// Snapshot freezes the current state as a new Version. O(number of tables);
// the workspace stays usable and later writes do not affect the Version. It
// fails with ErrUnitInProgress while a unit is open.
func (w *Workspace) Snapshot() (*Version, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unit != nil {
		return nil, &Error{Kind: ErrUnitInProgress}
	}
	return w.store.newVersionFiles(w.cat, w.tables, w.files), nil
}

// Restore replaces the workspace's state with v (any version of the same
// store). O(number of tables). It fails with ErrUnitInProgress while a unit is
// open and ErrForeignStore for a version of another store.
func (w *Workspace) Restore(v *Version) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unit != nil {
		return &Error{Kind: ErrUnitInProgress}
	}
	if v.store != w.store {
		return &Error{Kind: ErrForeignStore}
	}
	w.cat = v.cat
	w.tables = slices.Clone(v.tables)
	w.files = v.files
	w.base = v
	return nil
}

// Hash returns the content hash of the workspace's current state; equal to
// the Hash of a Snapshot taken now.
func (w *Workspace) Hash() Hash {
	w.mu.Lock()
	defer w.mu.Unlock()
	return hashState(w.tables, w.files)
}

// Rows is a materialized query result: Columns[j] names column j and
// Values[i][j] is its value in row i, in the engine's Go representation
// (int8..int64 and uint8..uint64 for integer types, float32/float64,
// decimal.Decimal, string, []byte, time.Time, types.JSONDocument, nil for
// NULL).
type Rows struct {
	Columns []string
	Values  [][]any
}

// Result reports what a write statement did.
type Result struct {
	RowsAffected int64
	LastInsertID uint64
}

// Query runs a statement that returns rows. args bind to the ? placeholders
// in order. Errors are *Error (see the Err* kinds); the workspace is unchanged
// by a failed statement. ErrUnitInProgress while a unit is open: run the
// statement through the Unit instead.
func (w *Workspace) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unit != nil {
		return nil, &Error{Kind: ErrUnitInProgress, Statement: query}
	}
	rows, _, err := w.run(ctx, query, args)
	return rows, err
}

// Exec runs a statement for its effect (INSERT, UPDATE, DELETE, REPLACE).
// Same rules as Query.
func (w *Workspace) Exec(ctx context.Context, query string, args ...any) (Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unit != nil {
		return Result{}, &Error{Kind: ErrUnitInProgress, Statement: query}
	}
	_, res, err := w.run(ctx, query, args)
	return res, err
}

// Unit is an open unit of work on a workspace. Statements run through it see
// each other's effects; Commit keeps them, Rollback (or any failure the caller
// decides is fatal) removes every trace. A Unit is used by one goroutine.
type Unit struct {
	w     *Workspace
	cat   *catalog
	saved []*tableData
	files *fileTree
	done  bool
}

// Begin opens a unit of work. Only one unit may be open on a workspace
// (ErrUnitInProgress otherwise). O(number of tables).
func (w *Workspace) Begin() (*Unit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.unit != nil {
		return nil, &Error{Kind: ErrUnitInProgress}
	}
	u := &Unit{w: w, cat: w.cat, saved: slices.Clone(w.tables), files: w.files}
	w.unit = u
	return u, nil
}

func (u *Unit) check() error {
	if u.done || u.w.unit != u {
		return &Error{Kind: ErrUnitDone}
	}
	return nil
}

// Query runs a row-returning statement inside the unit.
func (u *Unit) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	u.w.mu.Lock()
	defer u.w.mu.Unlock()
	if err := u.check(); err != nil {
		return nil, err
	}
	rows, _, err := u.w.run(ctx, query, args)
	return rows, err
}

// Exec runs a write statement inside the unit. A failed statement is undone
// on its own; the unit stays open for the caller to commit or roll back.
func (u *Unit) Exec(ctx context.Context, query string, args ...any) (Result, error) {
	u.w.mu.Lock()
	defer u.w.mu.Unlock()
	if err := u.check(); err != nil {
		return Result{}, err
	}
	_, res, err := u.w.run(ctx, query, args)
	return res, err
}

// Commit keeps the unit's effects. ErrUnitDone if already finished.
func (u *Unit) Commit() error {
	u.w.mu.Lock()
	defer u.w.mu.Unlock()
	if err := u.check(); err != nil {
		return err
	}
	u.done = true
	u.w.unit = nil
	return nil
}

// Rollback restores the workspace to its state at Begin. ErrUnitDone if
// already finished.
func (u *Unit) Rollback() error {
	u.w.mu.Lock()
	defer u.w.mu.Unlock()
	if err := u.check(); err != nil {
		return err
	}
	u.w.cat = u.cat
	u.w.tables = u.saved
	u.w.files = u.files
	u.done = true
	u.w.unit = nil
	return nil
}

// Do runs fn as one unit of work: committed when fn returns nil, rolled back
// when it returns an error or panics (the panic is re-raised).
func (w *Workspace) Do(fn func(u *Unit) error) (err error) {
	u, err := w.Begin()
	if err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			_ = u.Rollback()
			panic(p)
		}
		if err != nil {
			_ = u.Rollback()
			return
		}
		err = u.Commit()
	}()
	return fn(u)
}

// run executes one statement with w.mu held, restoring every table pointer
// when it fails.
func (w *Workspace) run(ctx context.Context, query string, args []any) (*Rows, Result, error) {
	w.save = append(w.save[:0], w.tables...)
	savedCat := w.cat
	rows, res, err := w.exec(ctx, query, args)
	if err != nil {
		w.tables = append(w.tables[:0], w.save...)
		w.cat = savedCat
		return nil, Result{}, classify(err, query)
	}
	return rows, res, nil
}

func (w *Workspace) exec(ctx context.Context, query string, args []any) (rows *Rows, res Result, err error) {
	if p := w.fastPlanFor(query); p != nil && SandboxFrom(ctx).resolveNone() {
		if p.write != nil {
			if res, ok, err := p.runWrite(ctx, w, args); ok {
				w.store.fast.hits.Add(1)
				return &Rows{}, res, err
			}
		} else if rows, ok, err := p.run(ctx, w, args); ok {
			w.store.fast.hits.Add(1)
			return rows, Result{}, err
		}
	}
	w.store.fast.slow.Add(1)
	if isSessionStatement(query) {
		return nil, Result{}, errSessionState(firstWord(query))
	}
	// (host file access below is ErrDenied in a sandbox, as the refused
	// functions are.)
	if hostFileAccess(query) {
		kind := ErrStatementFailed
		if SandboxFrom(ctx) != nil {
			kind = ErrDenied
		}
		return nil, Result{}, &Error{Kind: kind, Err: fmt.Errorf("host file access (LOAD_FILE, INTO OUTFILE/DUMPFILE, LOAD DATA INFILE) is not allowed: a state reads and writes only its tables")}
	}
	bindings, err := toBindings(args)
	if err != nil {
		return nil, Result{}, err
	}
	sb := SandboxFrom(ctx)
	if sb != nil {
		if err := sandboxRefusal(query); err != nil {
			return nil, Result{}, err
		}
	}
	sess := w.store.getSession()
	sess.bind(w)
	sess.sb, sess.planned = sb, false
	defer func() {
		sess.unbind()
		w.store.putSession(sess)
		if p := recover(); p != nil {
			err = fmt.Errorf("engine panic: %v", p)
		}
	}()
	sctx := sql.NewContext(ctx, sql.WithSession(sess))
	if sb != nil {
		// NOW() and its family, and column defaults using them, read the
		// statement's query time: the session's virtual clock.
		t := time.Unix(0, 0).UTC()
		if sb.Now != nil {
			t = sb.Now().UTC()
		}
		sctx.SetQueryTime(t)
	}
	schema, iter, _, err := w.store.engine.QueryWithBindings(sctx, query, nil, bindings, nil)
	if err != nil {
		return nil, Result{}, err
	}
	var out [][]any
	var size, maxSize int64
	if sb != nil {
		maxSize = sb.limit(sb.Limits.MaxResultBytes, DefaultMaxResultBytes)
	}
	for {
		r, err := iter.Next(sctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = iter.Close(sctx)
			return nil, Result{}, err
		}
		if sb != nil {
			for _, v := range r {
				size += valueSize(v) + 8
			}
			if size > maxSize {
				_ = iter.Close(sctx)
				return nil, Result{}, sb.exceed("result bytes of one statement", size, maxSize)
			}
		}
		out = append(out, r)
	}
	if err := iter.Close(sctx); err != nil {
		return nil, Result{}, err
	}
	if types.IsOkResultSchema(schema) {
		if len(out) == 1 {
			if ok, isOK := out[0][0].(types.OkResult); isOK {
				res = Result{RowsAffected: int64(ok.RowsAffected), LastInsertID: ok.InsertID}
			}
		}
		return &Rows{}, res, nil
	}
	rows = &Rows{Columns: make([]string, len(schema)), Values: out}
	for i, c := range schema {
		rows.Columns[i] = c.Name
	}
	for _, r := range out {
		for j, v := range r {
			if r[j], err = normalize(ctx, v); err != nil {
				return nil, Result{}, err
			}
		}
	}
	return rows, res, nil
}

// toBindings turns positional arguments into the engine's bind variables
// v1..vn. Values travel as typed literals, never as SQL text.
func toBindings(args []any) (map[string]sqlparser.Expr, error) {
	if len(args) == 0 {
		return nil, nil
	}
	b := make(map[string]sqlparser.Expr, len(args))
	for i, a := range args {
		switch x := a.(type) {
		case time.Time:
			a = x.UTC().Format("2006-01-02 15:04:05.999999")
		case decimal.Decimal:
			a = x.String()
		case json.RawMessage:
			a = string(x)
		case bool:
			if x {
				a = int64(1)
			} else {
				a = int64(0)
			}
		case map[string]any, []any:
			j, err := json.Marshal(x)
			if err != nil {
				return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("argument %d: %w", i+1, err)}
			}
			a = string(j)
		}
		bv, err := sqltypes.BuildBindVariable(a)
		if err != nil {
			return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("argument %d (%T): %w", i+1, a, err)}
		}
		v, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("argument %d: %w", i+1, err)}
		}
		e, err := sqlparser.ExprFromValue(v)
		if err != nil {
			return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("argument %d: %w", i+1, err)}
		}
		b[fmt.Sprintf("v%d", i+1)] = e
	}
	return b, nil
}

// isSessionStatement reports statements that change connection or server
// state instead of tables (SET of any scope, including SET GLOBAL and SET
// PERSIST, and USE). They are refused before they reach the engine: a
// workspace's state is its tables, and the engine's global variables are
// shared by every store in the process.
func isSessionStatement(q string) bool {
	if strings.Contains(q, "/*!") {
		return true // MySQL executable comments can hide any statement
	}
	switch strings.ToLower(firstWord(q)) {
	case "set", "use":
		return true
	}
	return false
}

// firstWord returns the first keyword of a statement, skipping whitespace and
// SQL comments.
func firstWord(q string) string {
	for {
		q = strings.TrimLeft(q, " \t\r\n(")
		switch {
		case strings.HasPrefix(q, "--") || strings.HasPrefix(q, "#"):
			if i := strings.IndexByte(q, '\n'); i >= 0 {
				q = q[i+1:]
				continue
			}
			return ""
		case strings.HasPrefix(q, "/*"):
			if i := strings.Index(q, "*/"); i >= 0 {
				q = q[i+2:]
				continue
			}
			return ""
		}
		end := strings.IndexFunc(q, func(r rune) bool { return !unicode.IsLetter(r) })
		if end < 0 {
			return q
		}
		return q[:end]
	}
}

// sandboxRefusal refuses, in sandboxed SQL, WITH RECURSIVE (the engine
// bounds its iterations but not the rows each adds: a join with a derived
// table doubles them per iteration, outside the call's row budget) and
// variables (@@system variables are process-wide and some differ between
// runs, e.g. @@server_uuid; @user variables cannot be set in a state, so
// they only ever read NULL). Tokens are scanned, so string literals are
// fine.
func sandboxRefusal(q string) error {
	tkn := sqlparser.NewStringTokenizer(q)
	prevWith := false
	for {
		typ, val := tkn.Scan()
		switch typ {
		case 0, sqlparser.LEX_ERROR:
			return nil
		case sqlparser.RECURSIVE:
			if prevWith {
				return denied(fmt.Errorf("WITH RECURSIVE is refused in sandboxed SQL: the rows its iterations add are outside the call's budget"))
			}
		case sqlparser.ID:
			if len(val) > 0 && val[0] == '@' {
				return denied(fmt.Errorf("variable %s is refused in sandboxed SQL: system variables are process-wide and user variables hold no state", val))
			}
		}
		prevWith = typ == sqlparser.WITH
	}
}

// hostFileAccess reports statements that would read or write files of the
// host: LOAD_FILE(), SELECT ... INTO OUTFILE / DUMPFILE, LOAD DATA INFILE.
// The engine supports them; a state must never expose them (tool modules and
// agents reach SQL). Tokens are scanned, so string literals that merely
// contain these words are fine.
func hostFileAccess(q string) bool {
	tkn := sqlparser.NewStringTokenizer(q)
	for {
		typ, val := tkn.Scan()
		switch typ {
		case 0, sqlparser.LEX_ERROR:
			return false
		case sqlparser.OUTFILE, sqlparser.DUMPFILE, sqlparser.INFILE:
			return true
		case sqlparser.ID:
			if strings.EqualFold(string(val), "load_file") {
				return true
			}
		}
	}
}
