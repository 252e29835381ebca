package state

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// DeltaFormat is the value of the "format" field of ExportDelta's output.
const DeltaFormat = "weft.state-delta/v1"

// deltaDoc is the layout of a delta: the base's hash, and per changed table
// its AUTO_INCREMENT counter, the primary keys of the rows it lost and the
// full rows it gained or changed (values in the Export representation):
//
//	{"format": "weft.state-delta/v1", "base": "<hex hash>",
//	 "tables": [{"name": "orders", "auto_increment": 9,
//	             "delete": [[3]], "upsert": [[8, "x", ...]]}]}
//
// and, when files changed, "files": {"delete": ["old.txt"], "upsert":
// [{"path": "new.txt", "data": "..."}]} (entries as in Export; a path in
// both lists is removed, then written).
type deltaDoc struct {
	Format string       `json:"format"`
	Base   string       `json:"base"`
	Tables []deltaTable `json:"tables"`
	Files  *deltaFiles  `json:"files,omitempty"`
}

type deltaFiles struct {
	Delete []string     `json:"delete,omitempty"`
	Upsert []exportFile `json:"upsert,omitempty"`
}

type deltaTable struct {
	Name          string              `json:"name"`
	AutoIncrement uint64              `json:"auto_increment,omitempty"`
	Delete        [][]json.RawMessage `json:"delete,omitempty"`
	Upsert        [][]json.RawMessage `json:"upsert,omitempty"`
}

// ExportDelta writes the row-level difference from base to v in the
// DeltaFormat layout: O(k log n) for k changed rows, sharing unchanged
// subtrees, so a checkpoint of a session costs what the session changed, not
// the size of its state. Both versions must have the same tables with the
// same schemas; otherwise (a table created, dropped or altered) the error is
// an *Error of kind ErrBadArgument and callers write a full Export instead.
// ImportDelta(base, output) returns a version with v's Hash.
func (v *Version) ExportDelta(w io.Writer, base *Version) error {
	if len(v.tables) != len(base.tables) {
		return &Error{Kind: ErrBadArgument, Err: fmt.Errorf("state: delta needs the same tables in both versions")}
	}
	doc := deltaDoc{Format: DeltaFormat, Base: base.Hash().String(), Tables: []deltaTable{}}
	for _, tb := range sortedTables(v.tables) {
		slot, ok := base.cat.index[tb.schema.lname]
		if !ok {
			return &Error{Kind: ErrBadArgument, Table: tb.schema.name, Err: fmt.Errorf("state: table %s is not in the delta's base", tb.schema.name)}
		}
		ta := base.tables[slot]
		if ta == tb {
			continue
		}
		ts := tb.schema
		if ta.schema.canonical() != ts.canonical() {
			return &Error{Kind: ErrBadArgument, Table: ts.name, Err: fmt.Errorf("state: table %s changed schema", ts.name)}
		}
		dt := deltaTable{Name: ts.name}
		if ts.autoCol >= 0 {
			dt.AutoIncrement = tb.autoInc
		}
		sch := ts.sch.Schema
		var ferr error
		raw := func(vals []any, cols []int) []json.RawMessage {
			out := make([]json.RawMessage, len(cols))
			for i, o := range cols {
				b, err := marshalNoEscape(exportValue(sch[o], vals[i]))
				if err != nil && ferr == nil {
					ferr = fmt.Errorf("delta %s.%s: %w", ts.name, sch[o].Name, err)
				}
				out[i] = b
			}
			return out
		}
		all := make([]int, len(sch))
		for i := range all {
			all[i] = i
		}
		eq := func(x, y sql.Row) bool { return rowsEqual(sch, ts.colCmps, x, y) }
		ptree.Diff(ta.rows, tb.rows, eq, func(k []any, ra, rb *sql.Row) bool {
			if rb == nil {
				dt.Delete = append(dt.Delete, raw(k, ts.pk))
			} else {
				dt.Upsert = append(dt.Upsert, raw(*rb, all))
			}
			return ferr == nil
		})
		if ferr != nil {
			return ferr
		}
		if len(dt.Delete)+len(dt.Upsert) == 0 && dt.AutoIncrement == ta.autoInc {
			continue
		}
		doc.Tables = append(doc.Tables, dt)
	}
	if base.files != v.files {
		df := &deltaFiles{}
		eq := func(x, y *fileNode) bool { return x == y || (x.dir == y.dir && x.sum == y.sum) }
		ptree.Diff(base.files.tree(), v.files.tree(), eq, func(p string, na, nb **fileNode) bool {
			if nb == nil {
				df.Delete = append(df.Delete, p)
			} else {
				if na != nil && (*na).dir != (*nb).dir {
					df.Delete = append(df.Delete, p)
				}
				df.Upsert = append(df.Upsert, toExportFile(p, *nb))
			}
			return true
		})
		if len(df.Delete)+len(df.Upsert) > 0 {
			doc.Files = df
		}
	}
	b, err := marshalNoEscape(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// ImportDelta applies a delta written by ExportDelta to base and returns the
// result as a new Version. Errors are *Error: ErrBadImport for a malformed
// document or one made against another base (its "base" hash differs from
// base.Hash()), or the kinds Load returns for rows that do not fit.
func (s *Store) ImportDelta(ctx context.Context, base *Version, r io.Reader) (*Version, error) {
	if base.store != s {
		return nil, &Error{Kind: ErrForeignStore}
	}
	var doc deltaDoc
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{Kind: ErrBadImport, Err: err}
	}
	if doc.Format != DeltaFormat {
		return nil, &Error{Kind: ErrBadImport, Err: fmt.Errorf("format %q, want %q", doc.Format, DeltaFormat)}
	}
	if doc.Base != base.Hash().String() {
		return nil, &Error{Kind: ErrBadImport, Err: fmt.Errorf("delta was made against state %.12s, not %.12s", doc.Base, base.Hash().String())}
	}
	sctx := sql.NewContext(ctx)
	tables := append([]*tableData(nil), base.tables...)
	for _, dt := range doc.Tables {
		slot, ok := base.cat.index[strings.ToLower(dt.Name)]
		if !ok {
			return nil, &Error{Kind: ErrBadImport, Table: dt.Name, Err: fmt.Errorf("table %q is not in the base", dt.Name)}
		}
		td := tables[slot]
		ts := td.schema
		sch := ts.sch.Schema
		conv := func(raw []json.RawMessage, cols []int) ([]any, error) {
			if len(raw) != len(cols) {
				return nil, &Error{Kind: ErrBadImport, Table: ts.name, Err: fmt.Errorf("%d values for %d columns", len(raw), len(cols))}
			}
			out := make([]any, len(cols))
			for i, o := range cols {
				v, err := importValue(sch[o], raw[i])
				if err == nil {
					v, err = convertValue(sctx, sch[o], v)
				}
				if err != nil {
					return nil, &Error{Kind: ErrBadImport, Table: ts.name, Column: sch[o].Name, Err: err}
				}
				out[i] = v
			}
			return out, nil
		}
		all := make([]int, len(sch))
		for i := range all {
			all[i] = i
		}
		// Remove every deleted or replaced row first, then insert the new
		// rows, so that a unique value moving between rows never collides.
		var ups []sql.Row
		for _, raw := range dt.Upsert {
			row, err := conv(raw, all)
			if err != nil {
				return nil, err
			}
			ups = append(ups, row)
		}
		drop := func(key []any) error {
			old, ok := td.rows.Get(key)
			if !ok {
				return nil
			}
			n, err := td.delete(old)
			if err != nil {
				return &Error{Kind: ErrBadImport, Table: ts.name, Err: err}
			}
			td = n
			return nil
		}
		for _, raw := range dt.Delete {
			key, err := conv(raw, ts.pk)
			if err != nil {
				return nil, err
			}
			if _, ok := td.rows.Get(key); !ok {
				return nil, &Error{Kind: ErrBadImport, Table: ts.name, Err: fmt.Errorf("deleted key %s is not in the base", formatKey(key))}
			}
			if err := drop(key); err != nil {
				return nil, err
			}
		}
		for _, row := range ups {
			if err := drop(ts.pkOf(row)); err != nil {
				return nil, err
			}
		}
		for _, row := range ups {
			n, err := td.insert(row)
			if err != nil {
				return nil, &Error{Kind: ErrDuplicateKey, Table: ts.name, Err: err}
			}
			td = n
		}
		if ts.autoCol >= 0 && dt.AutoIncrement != td.autoInc {
			c := *td
			c.autoInc = dt.AutoIncrement
			td = &c
		}
		tables[slot] = td
	}
	files := base.files
	if df := doc.Files; df != nil {
		for _, p := range df.Delete {
			if _, err := cleanPath(p); err != nil {
				return nil, &Error{Kind: ErrBadImport, Path: p, Err: err}
			}
			if _, ok := files.get(p); !ok {
				return nil, &Error{Kind: ErrBadImport, Path: p, Err: fmt.Errorf("deleted file %q is not in the base", p)}
			}
			files = files.del(p)
		}
		for _, ef := range df.Upsert {
			f, err := fromExportFile(ef)
			if err != nil {
				return nil, err
			}
			cp, err := cleanPath(f.Path)
			if err != nil {
				return nil, &Error{Kind: ErrBadImport, Path: f.Path, Err: err}
			}
			if o, ok := files.get(cp); ok && o.dir != f.Dir {
				return nil, &Error{Kind: ErrBadImport, Path: f.Path, Err: fmt.Errorf("file %q changes kind without being deleted first", f.Path)}
			}
			files = files.set(cp, f.Dir, f.Data)
		}
	}
	return s.newVersionFiles(base.cat, tables, files), nil
}
