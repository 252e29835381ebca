package state

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// The fast path answers the commonest statement shape of tool code, a keyed
// read of one table, straight from the persistent trees, without
// go-mysql-server's parse, analysis and row-iterator machinery:
//
//	SELECT <columns | *> FROM t [WHERE c1 = ? AND c2 = ? ...] [ORDER BY d1, d2 ...]
//
// where c1, c2, ... are exactly the leading columns of one index (the
// primary key or a secondary index) and no other index of t starts with one
// of them, so the index go-mysql-server would look up is not in doubt. The
// statement text is analyzed once per Store and schema (fastCache); a text
// the fast path does not take is remembered as such and costs a map lookup.
//
// It answers exactly as the engine does (the differential test runs every
// statement both ways): rows in index order, stably sorted by ORDER BY
// (the engine's Sort is a stable sort over the same order), the same
// columns, the same rows charged to the Sandbox's budget in the same order,
// the same result-size check and the same FOUND_ROWS()/ROW_COUNT() after.
// It refuses, leaving the statement to the engine, whenever the outcome
// might differ or be an error: a table the Sandbox's policy does not let
// the statement read, an argument whose type is not the column's own kind
// (MySQL compares '1' = 1 numerically), a value the column type cannot hold
// exactly, an unknown name, a cancelled context, a schema change. It has no
// functions, so nothing it caches can freeze NOW() or RAND(). See
// docs/design/024-plan-cache.md.

// maxFastPlans bounds the statement texts a Store remembers; beyond it new
// texts go to the engine unanalyzed.
const maxFastPlans = 4096

// fastKey identifies an analyzed text: catalogs are immutable and shared by
// every version of one schema.
type fastKey struct {
	cat *catalog
	q   string
}

// fastCache is a Store's analyzed statement texts.
type fastCache struct {
	plans  sync.Map // fastKey -> *fastPlan (nil: not a fast shape)
	n      atomic.Int64
	off    atomic.Bool
	hits   atomic.Int64
	slow   atomic.Int64
	writes atomic.Int64 // hits that were writes
}

// keySource is where one key value comes from: bind argument arg (>= 0) or
// the literal lit.
type keySource struct {
	arg int
	lit any
}

// fastPlan is the analysis of one fast-path statement text.
type fastPlan struct {
	table  string // as written, for errors
	slot   int
	schema *tableSchema
	proj   []int    // ordinals of the result columns
	cols   []string // result column names
	ixPos  int      // -1: primary key; else position in schema.indexes
	keyLen int      // entries of the index key (index columns + primary key)
	keyCol []int    // ordinals of the equality columns, in index order
	keySrc []keySource
	nargs  int
	order  []int // ORDER BY ordinals (ascending); nil when index order holds
	// write: the statement is an UPDATE, DELETE or INSERT (fast_write.go).
	write *fastWrite
	// engineSorts: the engine's plan sorts (reading every row before
	// returning one) rather than streaming in index order.
	engineSorts bool
}

// SetFastPath turns the fast path for keyed single-table reads on (the
// default) or off, for every workspace of the store. Off, every statement
// is planned by go-mysql-server; results are the same either way (see
// docs/design/024-plan-cache.md), so this exists for comparisons and
// benchmarks.
func (s *Store) SetFastPath(on bool) { s.fast.off.Store(!on) }

// FastPathStats returns how many statements the store's workspaces answered
// on the fast path (hits) and how many went to go-mysql-server (slow),
// since the store was made.
func (s *Store) FastPathStats() (hits, slow int64) {
	return s.fast.hits.Load(), s.fast.slow.Load()
}

// fastPlanFor returns the analyzed plan of q for w's schema, or nil.
func (w *Workspace) fastPlanFor(q string) *fastPlan {
	fc := &w.store.fast
	if w.ddl || fc.off.Load() {
		return nil
	}
	k := fastKey{cat: w.cat, q: q}
	if p, ok := fc.plans.Load(k); ok {
		return p.(*fastPlan)
	}
	p := compileFast(w, q)
	if fc.n.Load() < maxFastPlans {
		if _, loaded := fc.plans.LoadOrStore(k, p); !loaded {
			fc.n.Add(1)
		}
	}
	return p
}

// compileFast analyzes q; nil when it is not a fast-path shape.
func compileFast(w *Workspace, q string) *fastPlan {
	// The checks exec applies to the text before the engine: a text they
	// would refuse is never fast, so hits may skip them.
	trimmed := strings.TrimLeft(q, " \t\r\n")
	if p := compileWrite(w, q, trimmed); p != nil {
		return p
	}
	if !strings.HasPrefix(trimmed, "SELECT") && !strings.HasPrefix(trimmed, "select") {
		return nil
	}
	if isSessionStatement(q) || hostFileAccess(q) || sandboxRefusal(q) != nil {
		return nil
	}
	st, err := sqlparser.Parse(q)
	if err != nil {
		return nil
	}
	sel, ok := st.(*sqlparser.Select)
	if !ok || sel.With != nil || len(sel.Comments) > 0 || sel.QueryOpts != (sqlparser.QueryOpts{}) ||
		len(sel.GroupBy) > 0 || sel.Having != nil || len(sel.Window) > 0 || sel.Limit != nil ||
		sel.Lock != "" || sel.Into != nil || len(sel.From) != 1 {
		return nil
	}
	ate, ok := sel.From[0].(*sqlparser.AliasedTableExpr)
	if !ok || len(ate.Partitions) > 0 || !ate.As.IsEmpty() || ate.Hints != nil || ate.AsOf != nil || ate.Lateral {
		return nil
	}
	tn, ok := ate.Expr.(sqlparser.TableName)
	if !ok || !tn.DbQualifier.IsEmpty() || !tn.SchemaQualifier.IsEmpty() {
		return nil
	}
	table := tn.Name.String()
	slot, ok := w.cat.index[strings.ToLower(table)]
	if !ok {
		return nil
	}
	ts := w.tables[slot].schema
	sch := ts.sch.Schema
	column := columnOf(table, sch)
	p := &fastPlan{table: table, slot: slot, schema: ts}
	for _, se := range sel.SelectExprs {
		switch e := se.(type) {
		case *sqlparser.StarExpr:
			if !e.TableName.IsEmpty() || len(sel.SelectExprs) != 1 {
				return nil
			}
			for o, c := range sch {
				p.proj = append(p.proj, o)
				p.cols = append(p.cols, c.Name)
			}
		case *sqlparser.AliasedExpr:
			if !e.As.IsEmpty() || e.StartParsePos < 0 || e.EndParsePos > len(q) || e.StartParsePos >= e.EndParsePos {
				return nil
			}
			o := column(e.Expr)
			if written := strings.TrimSpace(q[e.StartParsePos:e.EndParsePos]); o < 0 || (written != sch[o].Name && written != table+"."+sch[o].Name) {
				return nil
			}
			p.proj = append(p.proj, o)
			p.cols = append(p.cols, sch[o].Name)
		default:
			return nil
		}
	}
	eq, ok := p.keyWhere(sch, column, sel.Where)
	if !ok {
		return nil
	}
	// Placeholders are numbered 1..nargs in order of appearance.
	seen := make([]bool, p.nargs)
	for _, s := range eq {
		if s.arg >= p.nargs || (s.arg >= 0 && seen[s.arg]) {
			return nil
		}
		if s.arg >= 0 {
			seen[s.arg] = true
		}
	}
	if !p.chooseIndex(eq) {
		return nil
	}
	idxCols := ts.pk
	if p.ixPos >= 0 {
		idxCols = ts.indexes[p.ixPos].cols
	}
	// ORDER BY: ascending plain columns; dropped when the index order (its
	// columns, then the primary key) after the fixed prefix already holds.
	for _, ob := range sel.OrderBy {
		if ob.Direction != sqlparser.AscScr && ob.Direction != "" {
			return nil
		}
		o := column(ob.Expr)
		if o < 0 || types.IsJSON(sch[o].Type) {
			return nil
		}
		p.order = append(p.order, o)
	}
	if len(p.order) > 0 {
		// The engine drops its sort only for an ORDER BY that is a prefix of
		// the index's own columns (what FOUND_ROWS() reports after a failure
		// depends on it). A scan ordered by a secondary index's leading
		// column might be answered from that index: left to the engine.
		p.engineSorts = len(p.order) > len(idxCols) || !slices.Equal(p.order, idxCols[:len(p.order)])
		if len(eq) == 0 {
			for _, d := range ts.indexes {
				if d.cols[0] == p.order[0] {
					return nil
				}
			}
		}
		rest := slices.Clone(idxCols[len(eq):])
		if p.ixPos >= 0 {
			rest = append(rest, ts.pk...)
		}
		i := 0
		for _, o := range p.order {
			if _, fixed := eq[o]; fixed {
				continue
			}
			if i >= len(rest) || rest[i] != o {
				return p
			}
			i++
		}
		p.order = nil
	}
	return p
}

// columnOf returns the resolver of column references of table: the
// ordinal of a column written exactly as declared (optionally qualified by
// the table name as written), else -1.
func columnOf(table string, sch sql.Schema) func(sqlparser.Expr) int {
	return func(e sqlparser.Expr) int {
		c, ok := e.(*sqlparser.ColName)
		if !ok || c.StoredProcVal != nil {
			return -1
		}
		if !c.Qualifier.IsEmpty() && (c.Qualifier.Name.String() != table || !c.Qualifier.DbQualifier.IsEmpty() || !c.Qualifier.SchemaQualifier.IsEmpty()) {
			return -1
		}
		o := sch.IndexOfColName(c.Name.String())
		if o < 0 || sch[o].Name != c.Name.String() {
			return -1
		}
		return o
	}
}

// keyWhere analyzes WHERE (nil: none) as a conjunction of column = value,
// each column once, counting the placeholders in p.nargs; false when it is
// anything else.
func (p *fastPlan) keyWhere(sch sql.Schema, column func(sqlparser.Expr) int, where *sqlparser.Where) (map[int]keySource, bool) {
	eq := map[int]keySource{}
	if where == nil {
		return eq, true
	}
	if where.Type != sqlparser.WhereStr {
		return nil, false
	}
	var walk func(e sqlparser.Expr) bool
	walk = func(e sqlparser.Expr) bool {
		switch x := e.(type) {
		case *sqlparser.AndExpr:
			return walk(x.Left) && walk(x.Right)
		case *sqlparser.ComparisonExpr:
			if x.Operator != sqlparser.EqualStr || x.Escape != nil {
				return false
			}
			o := column(x.Left)
			if o < 0 || !fastKeyType(sch[o].Type) {
				return false
			}
			if _, dup := eq[o]; dup {
				return false
			}
			v, ok := x.Right.(*sqlparser.SQLVal)
			if !ok {
				return false
			}
			src, ok := p.source(v)
			if !ok {
				return false
			}
			eq[o] = src
			return true
		}
		return false
	}
	if !walk(where.Expr) {
		return nil, false
	}
	return eq, true
}

// source is where a value written in the text comes from: a placeholder
// (counted in p.nargs) or an integer or string literal.
func (p *fastPlan) source(v *sqlparser.SQLVal) (keySource, bool) {
	switch v.Type {
	case sqlparser.ValArg:
		n, err := strconv.Atoi(strings.TrimPrefix(string(v.Val), ":v"))
		if err != nil || n < 1 {
			return keySource{}, false
		}
		p.nargs++
		return keySource{arg: n - 1}, true
	case sqlparser.IntVal:
		n, err := strconv.ParseInt(string(v.Val), 10, 64)
		if err != nil {
			return keySource{}, false
		}
		return keySource{arg: -1, lit: n}, true
	case sqlparser.StrVal:
		return keySource{arg: -1, lit: string(v.Val)}, true
	}
	return keySource{}, false
}

// chooseIndex sets the plan's index from the equality columns: the one
// whose leading columns are exactly them, no other index starting with one
// of them; false when there is none or the choice is in doubt.
func (p *fastPlan) chooseIndex(eq map[int]keySource) bool {
	ts := p.schema
	p.ixPos = -1
	if len(eq) > 0 {
		found := -2
		cands := [][]int{ts.pk}
		for _, d := range ts.indexes {
			cands = append(cands, d.cols)
		}
		for i, cols := range cands {
			if _, ok := eq[cols[0]]; !ok {
				continue
			}
			if found != -2 || len(cols) < len(eq) {
				return false
			}
			for _, o := range cols[:len(eq)] {
				if _, ok := eq[o]; !ok {
					return false
				}
			}
			found = i - 1
		}
		if found == -2 {
			return false
		}
		p.ixPos = found
	}
	idxCols := ts.pk
	p.keyLen = len(ts.pk)
	if p.ixPos >= 0 {
		idxCols = ts.indexes[p.ixPos].cols
		p.keyLen += len(idxCols)
	}
	for _, o := range idxCols[:len(eq)] {
		p.keyCol = append(p.keyCol, o)
		p.keySrc = append(p.keySrc, eq[o])
	}
	return true
}

// fastKeyType reports column types whose equality lookups the fast path
// takes: integers, and VARCHAR/TEXT under the default binary collation
// (where the trees' order is byte order, as the engine's comparison is).
func fastKeyType(t sql.Type) bool {
	if types.IsInteger(t) {
		return true
	}
	// CHAR is left out: its padding rules are the engine's business.
	if st, ok := t.(sql.StringType); ok && types.IsText(t) && t.Type() != sqltypes.Char {
		return st.Collation() == sql.Collation_utf8mb4_0900_bin
	}
	return false
}

// keyValue converts a key value to the column's stored representation;
// false when the engine might answer differently (another kind, an inexact
// or out-of-range conversion, NULL).
func keyValue(ctx context.Context, v any, col *sql.Column) (any, bool) {
	switch s := v.(type) {
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		if !types.IsInteger(col.Type) {
			return nil, false
		}
	case string:
		if types.IsInteger(col.Type) {
			return nil, false
		}
		// The key columns' strings are VARCHAR/TEXT under the binary
		// collation (fastKeyType): valid UTF-8 within the column's length
		// converts to itself, which Convert would confirm at the cost of
		// a byte conversion; anything else takes the full check below.
		if st, ok := col.Type.(sql.StringType); ok && utf8.ValidString(s) && int64(len(s)) <= st.MaxByteLength() &&
			int64(utf8.RuneCountInString(s)) <= st.MaxCharacterLength() {
			return s, true
		}
	default:
		return nil, false
	}
	cv, inRange, err := col.Type.Convert(ctx, v)
	if err != nil || inRange != sql.InRange || cv == nil {
		return nil, false
	}
	if c, err := col.Type.Compare(ctx, v, cv); err != nil || c != 0 {
		return nil, false
	}
	if s, ok := v.(string); ok && cv.(string) != s {
		return nil, false
	}
	return cv, true
}

// run answers the statement; ok false leaves it to the engine (nothing has
// been charged or changed then).
func (p *fastPlan) run(ctx context.Context, w *Workspace, args []any) (rows *Rows, ok bool, err error) {
	if len(args) != p.nargs || p.slot >= len(w.tables) || w.tables[p.slot].schema != p.schema || ctx.Err() != nil {
		return nil, false, nil
	}
	sb := SandboxFrom(ctx)
	if sb != nil && !sb.Tables.CanRead(p.table) {
		return nil, false, nil // the engine refuses it, with its own error
	}
	td := w.tables[p.slot]
	ts := td.schema
	sch := ts.sch.Schema
	var pivot []any
	if len(p.keyCol) > 0 {
		pivot = make([]any, p.keyLen)
		for i, o := range p.keyCol {
			v := p.keySrc[i].lit
			if a := p.keySrc[i].arg; a >= 0 {
				v = args[a]
			}
			cv, ok := keyValue(ctx, v, sch[o])
			if !ok {
				return nil, false, nil
			}
			pivot[i] = cv
		}
		for i := len(p.keyCol); i < p.keyLen; i++ {
			pivot[i] = minKey
		}
	}
	var size, maxSize int64
	if sb != nil {
		maxSize = sb.limit(sb.Limits.MaxResultBytes, DefaultMaxResultBytes)
	}
	var out [][]any
	// Rows are cut from slabs of a few rows each (one allocation per slab,
	// not per row); each row's capacity is its length, so an append to one
	// cannot reach the next.
	var slab []any
	n := len(p.proj)
	// emit projects one row into the result, checking the result budget
	// as exec does per row it receives.
	emit := func(r sql.Row) error {
		if len(slab)+n > cap(slab) {
			slab = make([]any, 0, n*min(8, 1+len(out)))
		}
		row := slab[len(slab) : len(slab)+n : len(slab)+n]
		slab = slab[:len(slab)+n]
		for j, o := range p.proj {
			v, err := normalize(ctx, r[o])
			if err != nil {
				return err
			}
			row[j] = v
			if sb != nil {
				size += valueSize(v) + 8
			}
		}
		out = append(out, row)
		if sb != nil && size > maxSize {
			return sb.exceed("result bytes of one statement", size, maxSize)
		}
		return nil
	}
	// Where the engine streams, rows are charged and returned one at a
	// time; where it sorts, all are charged first.
	var src []sql.Row
	read := func(r sql.Row) error {
		if sb != nil {
			if err := sb.chargeRow(ctx); err != nil {
				return err
			}
		}
		if !p.engineSorts {
			return emit(r)
		}
		src = append(src, r)
		return nil
	}
	if err := p.scan(td, pivot, read); err != nil {
		return nil, true, p.failed(w, len(out), err)
	}
	if p.engineSorts {
		if len(p.order) > 0 {
			slices.SortStableFunc(src, func(a, b sql.Row) int {
				for _, o := range p.order {
					x, y := a[o], b[o]
					if rx, ry := rank(x), rank(y); rx != 0 || ry != 0 {
						if rx != ry {
							return rx - ry
						}
						continue
					}
					if c := ts.colCmps[o](x, y); c != 0 {
						return c
					}
				}
				return 0
			})
		}
		for _, r := range src {
			if err := emit(r); err != nil {
				return nil, true, p.failed(w, len(out), err)
			}
		}
	}
	w.fastInfo(int64(len(out)))
	return &Rows{Columns: p.cols, Values: out}, true, nil
}

// scan passes the rows of the plan's range to read, in index order.
func (p *fastPlan) scan(td *tableData, pivot []any, read func(sql.Row) error) error {
	switch {
	case pivot == nil:
		it := td.rows.Ascend()
		for _, r, more := it.Next(); more; _, r, more = it.Next() {
			if err := read(r); err != nil {
				return err
			}
		}
	case p.ixPos < 0:
		it := td.rows.SeekGE(pivot)
		for k, r, more := it.Next(); more && p.inPrefix(k, pivot); k, r, more = it.Next() {
			if err := read(r); err != nil {
				return err
			}
		}
	default:
		it := td.idx[p.ixPos].SeekGE(pivot)
		nc := len(td.schema.indexes[p.ixPos].cols)
		for k, _, more := it.Next(); more && p.inPrefix(k, pivot); k, _, more = it.Next() {
			if r, found := td.rows.Get(k[nc:]); found {
				if err := read(r); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inPrefix reports whether index key k still has the fixed prefix of pivot.
func (p *fastPlan) inPrefix(k, pivot []any) bool {
	for i, o := range p.keyCol {
		if k[i] == nil || rank(k[i]) != 0 || p.schema.colCmps[o](k[i], pivot[i]) != 0 {
			return false
		}
	}
	return true
}

// failed records the query info of a statement that failed after found
// rows were returned, as the engine's row tracker does, and returns err.
func (p *fastPlan) failed(w *Workspace, found int, err error) error {
	w.fastInfo(int64(found))
	return err
}

// fastInfo sets what the engine's row tracker records after a SELECT:
// ROW_COUNT() -1 and FOUND_ROWS() the rows returned.
func (w *Workspace) fastInfo(found int64) {
	i := queryInfo{foundRows: 1}
	if w.info != nil {
		i = *w.info
	}
	i.rowCount, i.foundRows = -1, found
	w.info = &i
}
