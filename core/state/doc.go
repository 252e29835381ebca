// Package state is weft's versioned, forkable in-memory SQL state.
//
// A Store holds immutable Versions and hands out mutable Workspaces:
//
//	s := state.NewStore()
//	v0, err := s.Load(ctx, ddl, rows...)      // or LoadJSON, Import
//	ws := s.Fork(v0)                           // private, mutable, O(tables)
//	ws.Exec(ctx, "UPDATE users SET name = ? WHERE id = ?", "ann", 1)
//	v1, _ := ws.Snapshot()                     // immutable again, O(tables)
//	ws.Restore(v0)                             // back to v0, O(tables)
//	changes := state.Diff(v0, v1)              // row-level evidence
//	v1.Hash()                                  // content hash, O(tables)
//
// SQL is MySQL's dialect, parsed, planned and executed by go-mysql-server.
// The rows and every index live in weft's own storage backend: persistent
// (path-copying) balanced trees, one per table and one per secondary index.
// Forking, snapshotting and restoring copy one pointer per table; a write
// copies the O(log n) tree nodes on its path, so a fork that changed one row
// costs memory proportional to that change, never to the table. Versions are
// never mutated, so any number of goroutines may fork, read and diff them
// concurrently. Primary-key and secondary-index lookups seek in the trees,
// and tables report exact row counts to the planner, so ordinary joins use
// indexes. See docs/design/002-state-storage.md for the reasoning.
//
// Statements bind values through ? placeholders only; there is no API that
// splices values into SQL text. Each statement is atomic; a Unit (Begin,
// Commit, Rollback, or Do) groups statements into one unit of work, such as a
// tool call, that leaves no trace when rolled back.
//
// Every table needs a primary key. The schema is fixed when the state is
// loaded: DDL runs only in Load.
//
// A Sandbox bound to a statement's context (WithSandbox) is what a tool
// call's SQL may do: its table policy is checked by the engine where it
// resolves names (so CTEs and derived tables are scoped as the engine
// scopes them) and at every access to a table's contents; NOW() and its
// family, RAND(), UUID() and column defaults read its virtual clock and
// seeded stream; its Limits bound what the host computes. Functions with
// process-wide state (named locks, SLEEP, LOAD_FILE, ...: RefusedFunctions)
// are refused in every statement. See docs/design/015-sql-sandbox.md.
//
// Keyed single-table reads (SELECT columns FROM t WHERE <leading columns of
// one index> = ? ... ORDER BY ...) skip go-mysql-server: the statement text
// is analyzed once per Store and schema and answered from the trees, with
// the same table policy, budgets, rows and errors as the engine's (which
// stays the oracle: Store.SetFastPath(false) turns it off, FastPathStats
// counts hits). See docs/design/024-plan-cache.md.
//
// Errors are *Error values whose Kind (ErrSyntax, ErrNoSuchTable,
// ErrNoSuchColumn, ErrDuplicateKey, ErrNotNull, ErrTypeMismatch, ...) is
// tested with errors.Is.
package state
