package state

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The write fast path applies the keyed writes of tool code straight to the
// persistent trees:
//
//	UPDATE t SET c1 = ?, c2 = ? ... WHERE k1 = ? [AND k2 = ? ...]
//	DELETE FROM t WHERE k1 = ? [AND k2 = ? ...]
//	INSERT INTO t [(c1, c2, ...)] VALUES (?, ...)[, (?, ...) ...]
//
// where k1, k2, ... are the leading columns of one index chosen as for
// keyed reads (fastPlan.chooseIndex), values are placeholders or integer
// and string literals, and the table has no AUTO_INCREMENT or generated
// column. Every statement is analyzed once per text and schema, as reads
// are (fastCache).
//
// The rule that keeps it identical to go-mysql-server: the fast path never
// produces an error of its own making. It converts every value as the
// engine does (the column type's Convert, accepting only argument kinds
// the engine converts the same way), computes the new table on the side
// (the trees are persistent, so nothing is visible until it is stored),
// and whenever anything would fail — a NULL for a NOT NULL column, a value
// out of range or too long, a duplicate primary or unique key, a table the
// Sandbox's policy does not let the statement read and write — it stores
// nothing, charges nothing and leaves the statement to the engine, which
// answers with its own error. The only failures it reports itself are the
// Sandbox's row budget and the deadline, charged row by row where the
// engine's lookup charges them. See docs/design/038-write-fast-path.md.

// writeKind is the statement a fastWrite applies.
type writeKind uint8

const (
	writeUpdate writeKind = iota + 1
	writeDelete
	writeInsert
)

// fastWrite is the analysis of one write statement text.
type fastWrite struct {
	kind writeKind
	// where: the rows an UPDATE or DELETE touches (its keyCol, keySrc,
	// ixPos, keyLen, slot and schema; no projection).
	set    []int // UPDATE: ordinals of the SET columns
	setSrc []keySource
	cols   []int         // INSERT: ordinals of the listed columns
	rows   [][]keySource // INSERT: each VALUES tuple
	nulls  []int         // INSERT: ordinals of the unlisted (NULL) columns
}

// compileWrite analyzes a write text; nil when it is not a write of a fast
// shape (trimmed is q without leading white space).
func compileWrite(w *Workspace, q, trimmed string) *fastPlan {
	switch strings.ToLower(firstWord(trimmed)) {
	case "update", "delete", "insert":
	default:
		return nil
	}
	if isSessionStatement(q) || hostFileAccess(q) || sandboxRefusal(q) != nil {
		return nil
	}
	st, err := sqlparser.Parse(q)
	if err != nil {
		return nil
	}
	switch s := st.(type) {
	case *sqlparser.Update:
		if len(s.Comments) > 0 || s.Ignore != "" || s.With != nil || len(s.OrderBy) > 0 || s.Limit != nil ||
			len(s.Returning) > 0 || len(s.TableExprs) != 1 || len(s.Exprs) == 0 || s.Where == nil {
			return nil
		}
		p := writeTarget(w, s.TableExprs[0])
		if p == nil {
			return nil
		}
		column := columnOf(p.table, p.schema.sch.Schema)
		fw := &fastWrite{kind: writeUpdate}
		seen := map[int]bool{}
		for _, a := range s.Exprs {
			o := column(a.Name)
			v, ok := a.Expr.(*sqlparser.SQLVal)
			if o < 0 || seen[o] || !ok || !writeType(p.schema.sch.Schema[o].Type) {
				return nil
			}
			src, ok := p.source(v)
			if !ok {
				return nil
			}
			seen[o] = true
			fw.set = append(fw.set, o)
			fw.setSrc = append(fw.setSrc, src)
		}
		if !p.writeWhere(column, s.Where) {
			return nil
		}
		p.write = fw
		return p.checkArgs(slices.Concat(fw.setSrc, p.keySrc))
	case *sqlparser.Delete:
		if len(s.Comments) > 0 || len(s.Targets) > 0 || s.With != nil || len(s.Partitions) > 0 || len(s.OrderBy) > 0 ||
			s.Limit != nil || len(s.Returning) > 0 || len(s.TableExprs) != 1 || s.Where == nil {
			return nil
		}
		p := writeTarget(w, s.TableExprs[0])
		if p == nil {
			return nil
		}
		if !p.writeWhere(columnOf(p.table, p.schema.sch.Schema), s.Where) {
			return nil
		}
		p.write = &fastWrite{kind: writeDelete}
		return p.checkArgs(p.keySrc)
	case *sqlparser.Insert:
		if s.Action != sqlparser.InsertStr || len(s.Comments) > 0 || s.Ignore != "" || s.With != nil || len(s.Partitions) > 0 ||
			len(s.Returning) > 0 || len(s.OnDup) > 0 || !s.Table.DbQualifier.IsEmpty() || !s.Table.SchemaQualifier.IsEmpty() {
			return nil
		}
		var vals sqlparser.Values
		switch r := s.Rows.(type) {
		case sqlparser.Values:
			vals = r
		case *sqlparser.AliasedValues:
			if !r.As.IsEmpty() || len(r.Columns) > 0 {
				return nil
			}
			vals = r.Values
		}
		if len(vals) == 0 {
			return nil
		}
		p := writeTable(w, s.Table.Name.String())
		if p == nil {
			return nil
		}
		sch := p.schema.sch.Schema
		fw := &fastWrite{kind: writeInsert}
		listed := make([]bool, len(sch))
		if len(s.Columns) == 0 {
			for o := range sch {
				if !writeType(sch[o].Type) {
					return nil
				}
				fw.cols = append(fw.cols, o)
				listed[o] = true
			}
		}
		for _, c := range s.Columns {
			o := sch.IndexOfColName(c.String())
			if o < 0 || sch[o].Name != c.String() || listed[o] || !writeType(sch[o].Type) {
				return nil
			}
			listed[o] = true
			fw.cols = append(fw.cols, o)
		}
		// An unlisted column takes its default: only "no default" on a
		// nullable column (NULL) is taken; any other default (a literal,
		// NOW(), RAND(), ...) is the engine's to evaluate per statement.
		for o, c := range sch {
			if !listed[o] {
				if c.Default != nil || !c.Nullable {
					return nil
				}
				fw.nulls = append(fw.nulls, o)
			}
		}
		var all []keySource
		for _, tuple := range vals {
			if len(tuple) != len(fw.cols) {
				return nil
			}
			row := make([]keySource, len(tuple))
			for j, e := range tuple {
				v, ok := e.(*sqlparser.SQLVal)
				if !ok {
					return nil
				}
				if row[j], ok = p.source(v); !ok {
					return nil
				}
			}
			fw.rows = append(fw.rows, row)
			all = append(all, row...)
		}
		p.write = fw
		return p.checkArgs(all)
	}
	return nil
}

// writeTarget resolves the single table of an UPDATE or DELETE.
func writeTarget(w *Workspace, te sqlparser.TableExpr) *fastPlan {
	ate, ok := te.(*sqlparser.AliasedTableExpr)
	if !ok || len(ate.Partitions) > 0 || !ate.As.IsEmpty() || ate.Hints != nil || ate.AsOf != nil || ate.Lateral {
		return nil
	}
	tn, ok := ate.Expr.(sqlparser.TableName)
	if !ok || !tn.DbQualifier.IsEmpty() || !tn.SchemaQualifier.IsEmpty() {
		return nil
	}
	return writeTable(w, tn.Name.String())
}

// writeTable returns a plan skeleton for writes of table, or nil when the
// table is unknown or has a column the fast path does not maintain
// (AUTO_INCREMENT: LAST_INSERT_ID() bookkeeping; generated and ON UPDATE
// columns). The columns written must also be of a writeType.
func writeTable(w *Workspace, table string) *fastPlan {
	slot, ok := w.cat.index[strings.ToLower(table)]
	if !ok {
		return nil
	}
	ts := w.tables[slot].schema
	if ts.autoCol >= 0 {
		return nil
	}
	for _, c := range ts.sch.Schema {
		if c.Generated != nil || c.OnUpdate != nil {
			return nil
		}
	}
	return &fastPlan{table: table, slot: slot, schema: ts}
}

// writeType reports column types the write fast path stores: integers,
// DOUBLE, VARCHAR and TEXT, JSON.
func writeType(t sql.Type) bool {
	switch {
	case types.IsInteger(t), types.IsJSON(t):
		return true
	}
	switch t.Type() {
	case sqltypes.Float64, sqltypes.VarChar, sqltypes.Text:
		return true
	}
	return false
}

// writeWhere analyzes the WHERE of an UPDATE or DELETE: equality on the
// leading columns of one index, at least one.
func (p *fastPlan) writeWhere(column func(sqlparser.Expr) int, where *sqlparser.Where) bool {
	eq, ok := p.keyWhere(p.schema.sch.Schema, column, where)
	if !ok || len(eq) == 0 {
		return false
	}
	return p.chooseIndex(eq)
}

// checkArgs requires the placeholders of the text, in the order they are
// bound, to be numbered 1..nargs, each once.
func (p *fastPlan) checkArgs(srcs []keySource) *fastPlan {
	seen := make([]bool, p.nargs)
	for _, s := range srcs {
		if s.arg < 0 {
			continue
		}
		if s.arg >= p.nargs || seen[s.arg] {
			return nil
		}
		seen[s.arg] = true
	}
	return p
}

// writeValue converts a bound or literal value for column col as the
// engine's SetField and INSERT do (the type's Convert); ok false when the
// engine might store something else or fail: another argument kind than
// the column's (MySQL converts '1' for an INT, 1 for a VARCHAR), a value
// out of range or too long, NULL for a NOT NULL column, a non-finite or
// negative-zero float (the bound text of -0 reads back as 0).
func writeValue(ctx context.Context, v any, col *sql.Column) (any, bool) {
	if v == nil {
		return nil, col.Nullable
	}
	t := col.Type
	switch {
	case types.IsInteger(t):
		switch x := v.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		case bool:
			v = int64(0)
			if x {
				v = int64(1)
			}
		default:
			return nil, false
		}
	case t.Type() == sqltypes.Float64:
		switch x := v.(type) {
		case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) || (x == 0 && math.Signbit(x)) {
				return nil, false
			}
		default:
			return nil, false
		}
	default: // VARCHAR, TEXT, JSON: text only
		if _, ok := v.(string); !ok {
			return nil, false
		}
	}
	cv, inRange, err := t.Convert(ctx, v)
	if err != nil || inRange != sql.InRange || cv == nil {
		return nil, false
	}
	return cv, true
}

// runWrite applies the write; ok false leaves it to the engine (nothing has
// been charged or changed then).
func (p *fastPlan) runWrite(ctx context.Context, w *Workspace, args []any) (res Result, ok bool, err error) {
	if len(args) != p.nargs || p.slot >= len(w.tables) || w.tables[p.slot].schema != p.schema || ctx.Err() != nil {
		return Result{}, false, nil
	}
	sb := SandboxFrom(ctx)
	if sb != nil && (!sb.Tables.CanRead(p.table) || !sb.Tables.CanWrite(p.table)) {
		return Result{}, false, nil // the engine refuses it, with its own error
	}
	value := func(s keySource) any {
		if s.arg >= 0 {
			return args[s.arg]
		}
		return s.lit
	}
	td := w.tables[p.slot]
	sch := td.schema.sch.Schema
	fw := p.write
	if fw.kind == writeInsert {
		nt := td
		for _, srcs := range fw.rows {
			row := make(sql.Row, len(sch))
			for j, o := range fw.cols {
				cv, ok := writeValue(ctx, value(srcs[j]), sch[o])
				if !ok {
					return Result{}, false, nil
				}
				if row[o], err = normalize(ctx, cv); err != nil {
					return Result{}, false, nil
				}
			}
			if nt, err = nt.insert(row); err != nil {
				return Result{}, false, nil
			}
		}
		w.tables[p.slot] = nt
		w.store.fast.writes.Add(1)
		w.writeInfo(int64(len(fw.rows)), -1)
		return Result{RowsAffected: int64(len(fw.rows))}, true, nil
	}
	// UPDATE, DELETE: the matched rows, then the new table on the side.
	var set []any
	if fw.kind == writeUpdate {
		set = make([]any, len(fw.set))
		for i, o := range fw.set {
			cv, ok := writeValue(ctx, value(fw.setSrc[i]), sch[o])
			if !ok {
				return Result{}, false, nil
			}
			set[i] = cv
		}
	}
	pivot := make([]any, p.keyLen)
	for i, o := range p.keyCol {
		cv, ok := keyValue(ctx, value(p.keySrc[i]), sch[o])
		if !ok {
			return Result{}, false, nil
		}
		pivot[i] = cv
	}
	for i := len(p.keyCol); i < p.keyLen; i++ {
		pivot[i] = minKey
	}
	var matched []sql.Row
	_ = p.scan(td, pivot, func(r sql.Row) error { matched = append(matched, r); return nil })
	nt := td
	var affected int64
	for _, old := range matched {
		if fw.kind == writeDelete {
			if nt, err = nt.delete(old); err != nil {
				return Result{}, false, nil
			}
			affected++
			continue
		}
		// The engine skips a row whose new values compare equal to the
		// old (and does not count it as affected).
		same := true
		for i, o := range fw.set {
			if c, err := sch[o].Type.Compare(ctx, old[o], set[i]); err != nil {
				return Result{}, false, nil
			} else if c != 0 {
				same = false
			}
		}
		if same {
			continue
		}
		nw := make(sql.Row, len(old))
		copy(nw, old)
		for i, o := range fw.set {
			if nw[o], err = normalize(ctx, set[i]); err != nil {
				return Result{}, false, nil
			}
		}
		if nt, err = nt.update(old, nw); err != nil {
			return Result{}, false, nil
		}
		affected++
	}
	// Every row read is charged, as the engine's lookup charges it; the
	// budget or the deadline is the only failure left.
	if sb != nil {
		for range matched {
			if err := sb.chargeRow(ctx); err != nil {
				return Result{}, true, err
			}
		}
	}
	w.tables[p.slot] = nt
	w.store.fast.writes.Add(1)
	found := int64(-1)
	if fw.kind == writeUpdate {
		found = int64(len(matched))
	}
	w.writeInfo(affected, found)
	return Result{RowsAffected: affected}, true, nil
}

// writeInfo sets what the engine records after a write: ROW_COUNT() the
// rows affected and, after an UPDATE, FOUND_ROWS() the rows matched
// (found < 0 leaves it).
func (w *Workspace) writeInfo(affected, found int64) {
	i := queryInfo{foundRows: 1}
	if w.info != nil {
		i = *w.info
	}
	i.rowCount = affected
	if found >= 0 {
		i.foundRows = found
	}
	w.info = &i
}

// FastWriteStats returns how many of the fast-path statements counted by
// FastPathStats were writes (UPDATE, DELETE, INSERT applied without the
// engine).
func (s *Store) FastWriteStats() int64 { return s.fast.writes.Load() }
