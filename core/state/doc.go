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
// Errors are *Error values whose Kind (ErrSyntax, ErrNoSuchTable,
// ErrNoSuchColumn, ErrDuplicateKey, ErrNotNull, ErrTypeMismatch, ...) is
// tested with errors.Is.
package state
