package state

import (
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// Changes is the row-level difference between two states: one TableDiff per
// table that differs, ordered by lower-case table name. It is the verifier's
// evidence, so it is exact: a row appears iff its primary key is present in
// only one state or its stored values differ.
type Changes struct {
	Tables []TableDiff `json:"tables"`
	// Files lists the workspace entries that differ, in path order
	// (omitted when none do).
	Files []FileChange `json:"files,omitempty"`
}

// Empty reports whether the two states had the same tables, schemas, rows
// and files.
func (c *Changes) Empty() bool { return len(c.Tables) == 0 && len(c.Files) == 0 }

// Count returns the number of added, removed and changed rows over all tables.
func (c *Changes) Count() int {
	n := 0
	for _, t := range c.Tables {
		n += len(t.Added) + len(t.Removed) + len(t.Changed)
	}
	return n
}

// TableDiff lists the changes of one table, each list in primary-key order.
// Values are in the export representation (see Version.Export): integers as
// int64 or uint64, floats as float64, decimals and date/times as strings,
// JSON documents as decoded JSON values, NULL as nil.
type TableDiff struct {
	Table string `json:"table"`
	// Schema is "" when both states have the table with the same schema;
	// "added" or "removed" when only b or only a has it; "changed" when its
	// columns, key or indexes differ (then every row of a is listed as
	// removed and every row of b as added, each in its own schema's columns).
	Schema     string      `json:"schema,omitempty"`
	Columns    []string    `json:"columns"`     // all column names, in table order
	PrimaryKey []string    `json:"primary_key"` // primary key column names
	Added      []Row       `json:"added,omitempty"`
	Removed    []Row       `json:"removed,omitempty"`
	Changed    []RowChange `json:"changed,omitempty"`
}

// Row is one full row: Key holds the primary key values, Values one value per
// column of TableDiff.Columns.
type Row struct {
	Key    []any `json:"key"`
	Values []any `json:"values"`
}

// RowChange is a row present in both states with different values. Columns
// lists only the columns that changed, in table order.
type RowChange struct {
	Key     []any          `json:"key"`
	Columns []ColumnChange `json:"columns"`
}

// ColumnChange is the old and new value of one changed column.
type ColumnChange struct {
	Column string `json:"column"`
	Old    any    `json:"old"`
	New    any    `json:"new"`
}

// Diff computes the row-level and file-level changes from a to b. Tables are matched by
// name; a table present in only one side shows all its rows added or
// removed. Cost: O(k log n) for k changed rows in tables of n rows when b
// descends from a (or both from a common version), since shared subtrees are
// skipped; at worst O(n) for unrelated states.
func Diff(a, b *Version) *Changes {
	c := diffTables(a.tables, b.tables)
	c.Files = diffFiles(a.files, b.files)
	return c
}

// DiffWorkspace computes the changes from version a to the workspace's
// current state.
func (w *Workspace) DiffWorkspace(a *Version) *Changes {
	w.mu.Lock()
	tables := append([]*tableData(nil), w.tables...)
	files := w.files
	w.mu.Unlock()
	c := diffTables(a.tables, tables)
	c.Files = diffFiles(a.files, files)
	return c
}

func diffTables(at, bt []*tableData) *Changes {
	byName := map[string]*tableData{}
	for _, t := range bt {
		byName[t.schema.lname] = t
	}
	seen := map[string]bool{}
	out := &Changes{}
	for _, ta := range sortedTables(at) {
		seen[ta.schema.lname] = true
		tb := byName[ta.schema.lname]
		if td, ok := diffTable(ta, tb); ok {
			out.Tables = append(out.Tables, td)
		}
	}
	for _, tb := range sortedTables(bt) {
		if !seen[tb.schema.lname] {
			if td, ok := diffTable(nil, tb); ok {
				out.Tables = append(out.Tables, td)
			}
		}
	}
	slices.SortStableFunc(out.Tables, func(x, y TableDiff) int {
		return strings.Compare(strings.ToLower(x.Table), strings.ToLower(y.Table))
	})
	return out
}

func diffTable(a, b *tableData) (TableDiff, bool) {
	ref := a
	if ref == nil {
		ref = b
	}
	ts := ref.schema
	sch := ts.sch.Schema
	td := TableDiff{Table: ts.name}
	for _, c := range sch {
		td.Columns = append(td.Columns, c.Name)
	}
	for _, o := range ts.pk {
		td.PrimaryKey = append(td.PrimaryKey, sch[o].Name)
	}
	exportRow := func(r sql.Row) Row {
		vals := make([]any, len(r))
		for i, v := range r {
			vals[i] = exportValue(sch[i], v)
		}
		key := make([]any, len(ts.pk))
		for i, o := range ts.pk {
			key[i] = vals[o]
		}
		return Row{Key: key, Values: vals}
	}
	var ta, tb ptree.Tree[[]any, sql.Row]
	switch {
	case a == nil:
		ta = ptree.New[[]any, sql.Row](ts.pkCmp)
		tb = b.rows
		td.Schema = "added"
	case b == nil:
		ta = a.rows
		tb = ptree.New[[]any, sql.Row](ts.pkCmp)
		td.Schema = "removed"
	default:
		ta, tb = a.rows, b.rows
		if a.schema.canonical() != b.schema.canonical() {
			// Different schemas: report every row of both sides.
			ta, tb = a.rows, ptree.New[[]any, sql.Row](ts.pkCmp)
			td2, _ := diffTable(nil, b)
			td.Added = td2.Added
			td.Schema = "changed"
		}
	}
	eq := func(x, y sql.Row) bool { return rowsEqual(sch, ts.colCmps, x, y) }
	ptree.Diff(ta, tb, eq, func(_ []any, ra, rb *sql.Row) bool {
		switch {
		case ra == nil:
			td.Added = append(td.Added, exportRow(*rb))
		case rb == nil:
			td.Removed = append(td.Removed, exportRow(*ra))
		default:
			old, nw := exportRow(*ra), exportRow(*rb)
			rc := RowChange{Key: old.Key}
			for i := range sch {
				if !rowsEqual(sch[i:i+1], ts.colCmps[i:i+1], (*ra)[i:i+1], (*rb)[i:i+1]) {
					rc.Columns = append(rc.Columns, ColumnChange{Column: sch[i].Name, Old: old.Values[i], New: nw.Values[i]})
				}
			}
			td.Changed = append(td.Changed, rc)
		}
		return true
	})
	return td, td.Schema != "" || len(td.Added)+len(td.Removed)+len(td.Changed) > 0
}
