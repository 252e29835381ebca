package state

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// tableSchema is immutable and shared by every version holding the table.
type tableSchema struct {
	name      string // as declared
	lname     string // lower case
	sch       sql.PrimaryKeySchema
	pk        []int // ordinals of the primary key columns
	indexes   []*indexDef
	autoCol   int // ordinal of the AUTO_INCREMENT column, or -1
	colCmps   []colCmp
	pkCmp     func(a, b []any) int
	collation sql.CollationID
	comment   string
	canon     string    // canonical text, see describe; set once built
	pkStat    *statSlot // planner statistics of the primary key
}

// indexDef is a secondary index: entries are the indexed columns followed by
// the primary key columns, so every entry is unique and points at one row.
type indexDef struct {
	name   string
	cols   []int // indexed column ordinals
	unique bool
	cmp    func(a, b []any) int
	stat   *statSlot // planner statistics
}

// tableData is one immutable state of a table. Writers build a new tableData
// (sharing everything unchanged with the old one through the persistent
// trees) and swap the pointer in their workspace.
type tableData struct {
	schema  *tableSchema
	rows    ptree.Tree[[]any, sql.Row]
	idx     []ptree.Tree[[]any, struct{}]
	autoInc uint64 // next AUTO_INCREMENT value (1 when none used yet)
	sum     lanes
}

func newTableSchema(name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string) (*tableSchema, error) {
	if len(sch.PkOrdinals) == 0 {
		return nil, &Error{Kind: ErrNoPrimaryKey, Table: name, Err: fmt.Errorf("table %q has no primary key; weft state tables need one", name)}
	}
	ts := &tableSchema{name: name, lname: strings.ToLower(name), sch: sch, pk: sch.PkOrdinals, autoCol: -1, collation: collation, comment: comment, pkStat: &statSlot{}}
	for i, c := range sch.Schema {
		ts.colCmps = append(ts.colCmps, makeColCmp(c.Type))
		if c.AutoIncrement {
			ts.autoCol = i
		}
	}
	pkc := make([]colCmp, len(ts.pk))
	for i, o := range ts.pk {
		pkc[i] = ts.colCmps[o]
	}
	ts.pkCmp = tupleCmp(pkc)
	ts.canon = ts.describe()
	return ts, nil
}

// withIndex returns a copy of the schema with one more secondary index.
func (ts *tableSchema) withIndex(name string, cols []int, unique bool) *tableSchema {
	c := *ts
	cmps := make([]colCmp, 0, len(cols)+len(ts.pk))
	for _, o := range cols {
		cmps = append(cmps, ts.colCmps[o])
	}
	for _, o := range ts.pk {
		cmps = append(cmps, ts.colCmps[o])
	}
	c.indexes = append(append([]*indexDef(nil), ts.indexes...), &indexDef{name: name, cols: cols, unique: unique, cmp: tupleCmp(cmps), stat: &statSlot{}})
	c.canon = c.describe()
	return &c
}

func (ts *tableSchema) pkOf(row sql.Row) []any {
	k := make([]any, len(ts.pk))
	for i, o := range ts.pk {
		k[i] = row[o]
	}
	return k
}

func (ts *tableSchema) idxKey(d *indexDef, row sql.Row) []any {
	k := make([]any, 0, len(d.cols)+len(ts.pk))
	for _, o := range d.cols {
		k = append(k, row[o])
	}
	for _, o := range ts.pk {
		k = append(k, row[o])
	}
	return k
}

// canonical returns the schema's stable text form for hashing. Schemas are
// immutable, so it is computed once.
func (ts *tableSchema) canonical() string { return ts.canon }

// describe renders the schema in a stable text form.
func (ts *tableSchema) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "table %s\n", ts.lname)
	for _, c := range ts.sch.Schema {
		fmt.Fprintf(&b, "col %s %s null=%v auto=%v\n", strings.ToLower(c.Name), c.Type.String(), c.Nullable, c.AutoIncrement)
	}
	fmt.Fprintf(&b, "pk %v\n", ts.pk)
	for _, d := range ts.indexes {
		fmt.Fprintf(&b, "index %s %v unique=%v\n", strings.ToLower(d.name), d.cols, d.unique)
	}
	return b.String()
}

func newTableData(ts *tableSchema) *tableData {
	td := &tableData{schema: ts, rows: ptree.New[[]any, sql.Row](ts.pkCmp), autoInc: 1}
	for _, d := range ts.indexes {
		td.idx = append(td.idx, ptree.New[[]any, struct{}](d.cmp))
	}
	return td
}

func formatKey(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = fmt.Sprint(v)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// uniqueConflict returns the stored row that already holds row's values in
// unique index d (ignoring the row with primary key self), if any.
func (td *tableData) uniqueConflict(i int, row sql.Row, self []any) (sql.Row, bool) {
	d := td.schema.indexes[i]
	pivot := make([]any, 0, len(d.cols)+len(td.schema.pk))
	for _, o := range d.cols {
		if row[o] == nil {
			return nil, false // NULLs never conflict
		}
		pivot = append(pivot, row[o])
	}
	for range td.schema.pk {
		pivot = append(pivot, minKey)
	}
	it := td.idx[i].SeekGE(pivot)
	for {
		k, _, ok := it.Next()
		if !ok {
			return nil, false
		}
		for j, o := range d.cols {
			if td.schema.colCmps[o](k[j], row[o]) != 0 {
				return nil, false
			}
		}
		pk := k[len(d.cols):]
		if self != nil && td.schema.pkCmp(pk, self) == 0 {
			continue
		}
		existing, _ := td.rows.Get(pk)
		return existing, true
	}
}

// insert returns the table with row added. Duplicate primary or unique keys
// give the engine's unique-key error carrying the existing row, as
// go-mysql-server needs for INSERT IGNORE and ON DUPLICATE KEY UPDATE.
func (td *tableData) insert(row sql.Row) (*tableData, error) {
	ts := td.schema
	pk := ts.pkOf(row)
	if existing, ok := td.rows.Get(pk); ok {
		return nil, sql.NewUniqueKeyErr(formatKey(pk), true, existing)
	}
	for i, d := range ts.indexes {
		if d.unique {
			if existing, found := td.uniqueConflict(i, row, nil); found {
				vals := make([]any, len(d.cols))
				for j, o := range d.cols {
					vals[j] = row[o]
				}
				return nil, sql.NewUniqueKeyErr(formatKey(vals), false, existing)
			}
		}
	}
	n := *td
	n.rows, _ = td.rows.Set(pk, row)
	if len(ts.indexes) > 0 {
		n.idx = make([]ptree.Tree[[]any, struct{}], len(td.idx))
		for i, d := range ts.indexes {
			n.idx[i], _ = td.idx[i].Set(ts.idxKey(d, row), struct{}{})
		}
	}
	n.sum = td.sum.add(rowDigest(ts.sch.Schema, row))
	n.bumpAutoInc(row)
	return &n, nil
}

func (td *tableData) bumpAutoInc(row sql.Row) {
	if td.schema.autoCol < 0 {
		return
	}
	v := row[td.schema.autoCol]
	var u uint64
	switch x := v.(type) {
	case int8:
		u = uint64(max(x, 0))
	case int16:
		u = uint64(max(x, 0))
	case int32:
		u = uint64(max(x, 0))
	case int64:
		u = uint64(max(x, 0))
	case uint8:
		u = uint64(x)
	case uint16:
		u = uint64(x)
	case uint32:
		u = uint64(x)
	case uint64:
		u = x
	default:
		return
	}
	if u >= td.autoInc {
		td.autoInc = u + 1
	}
}

// delete returns the table without the row whose primary key row carries.
func (td *tableData) delete(row sql.Row) (*tableData, error) {
	ts := td.schema
	pk := ts.pkOf(row)
	rows, old, ok := td.rows.Delete(pk)
	if !ok {
		return nil, sql.ErrDeleteRowNotFound.New()
	}
	n := *td
	n.rows = rows
	if len(ts.indexes) > 0 {
		n.idx = make([]ptree.Tree[[]any, struct{}], len(td.idx))
		for i, d := range ts.indexes {
			n.idx[i], _, _ = td.idx[i].Delete(ts.idxKey(d, old))
		}
	}
	n.sum = td.sum.sub(rowDigest(ts.sch.Schema, old))
	return &n, nil
}

// update replaces old with nw, touching only the indexes whose keys change.
func (td *tableData) update(old, nw sql.Row) (*tableData, error) {
	ts := td.schema
	oldPK, newPK := ts.pkOf(old), ts.pkOf(nw)
	stored, ok := td.rows.Get(oldPK)
	if !ok {
		return nil, sql.ErrDeleteRowNotFound.New()
	}
	samePK := ts.pkCmp(oldPK, newPK) == 0
	if !samePK {
		if existing, ok := td.rows.Get(newPK); ok {
			return nil, sql.NewUniqueKeyErr(formatKey(newPK), true, existing)
		}
	}
	for i, d := range ts.indexes {
		if d.unique {
			if existing, found := td.uniqueConflict(i, nw, oldPK); found {
				vals := make([]any, len(d.cols))
				for j, o := range d.cols {
					vals[j] = nw[o]
				}
				return nil, sql.NewUniqueKeyErr(formatKey(vals), false, existing)
			}
		}
	}
	n := *td
	if samePK {
		n.rows, _ = td.rows.Set(oldPK, nw)
	} else {
		n.rows, _, _ = td.rows.Delete(oldPK)
		n.rows, _ = n.rows.Set(newPK, nw)
	}
	if len(ts.indexes) > 0 {
		n.idx = make([]ptree.Tree[[]any, struct{}], len(td.idx))
		for i, d := range ts.indexes {
			ok, nk := ts.idxKey(d, stored), ts.idxKey(d, nw)
			if d.cmp(ok, nk) == 0 {
				n.idx[i] = td.idx[i]
				continue
			}
			t, _, _ := td.idx[i].Delete(ok)
			n.idx[i], _ = t.Set(nk, struct{}{})
		}
	}
	n.sum = td.sum.sub(rowDigest(ts.sch.Schema, stored)).add(rowDigest(ts.sch.Schema, nw))
	n.bumpAutoInc(nw)
	return &n, nil
}
