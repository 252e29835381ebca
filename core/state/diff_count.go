package state

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// CountChanges returns Diff(a, b).Count() — the rows added, removed or
// changed from a to b over all tables (files are not counted) — without
// building the Changes: tables are matched by lower-case name, a table
// whose row tree is shared by both sides (the usual case after one tool
// call) costs a pointer compare, and a changed one walks only its
// differing subtrees. A table in one side only counts all its rows, one
// whose schema differs all rows of both sides, as Diff lists them.
func CountChanges(a, b *Version) int {
	n := 0
	matched := 0
	for _, ta := range a.tables {
		var tb *tableData
		for _, t := range b.tables {
			if t.schema.lname == ta.schema.lname {
				tb = t
				break
			}
		}
		switch {
		case tb == nil:
			n += ta.rows.Len()
		case ta == tb || ta.rows.SameRoot(tb.rows) && ta.schema == tb.schema:
			matched++
		case ta.schema != tb.schema && ta.schema.canonical() != tb.schema.canonical():
			matched++
			n += ta.rows.Len() + tb.rows.Len()
		default:
			matched++
			ts := ta.schema
			sch := ts.sch.Schema
			ptree.Diff(ta.rows, tb.rows, func(x, y sql.Row) bool { return rowsEqual(sch, ts.colCmps, x, y) }, func(_ []any, _, _ *sql.Row) bool {
				n++
				return true
			})
		}
	}
	if matched < len(b.tables) {
		for _, tb := range b.tables {
			found := false
			for _, ta := range a.tables {
				if ta.schema.lname == tb.schema.lname {
					found = true
					break
				}
			}
			if !found {
				n += tb.rows.Len()
			}
		}
	}
	return n
}
