package state

import (
	"math"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/memo"
	"github.com/dolthub/go-mysql-server/sql/plan"
)

// lookupCoster prices lookup joins for weft's storage, where an index lookup
// is a tree seek: O(log n) comparisons per left row, plus the matching rows.
// go-mysql-server's default coster prices a lookup join from histogram
// cardinalities; weft keeps exact row counts but no histograms, and without
// them the default coster estimates the outputs of non-unique lookups as
// cross products and picks plans that scan whole tables even when the query
// starts from one row. This coster estimates a lookup join's left input
// itself (a point lookup on a unique index is one row; a non-unique lookup
// multiplies by the index's average fan-out, rows / distinct keys) and
// prices the join as seeks. Every other operator keeps the default costing
// (whose units are: one sequential row read = 1, one random read = 1.3, one
// comparison = 0.01).
type lookupCoster struct {
	memo.Coster
}

const (
	seekCPU      = 0.01 // one key comparison in a tree seek
	lookupRandIO = 1.3  // fetching a matched row
)

func (c lookupCoster) EstimateCost(ctx *sql.Context, n memo.RelExpr, s sql.StatsProvider) (float64, error) {
	lj, ok := n.(*memo.LookupJoin)
	if !ok || lj.Lookup == nil || lj.Lookup.Table == nil {
		return c.Coster.EstimateCost(ctx, n, s)
	}
	left := estRows(ctx, lj.Left, 0)
	right, fanout := lookupStats(ctx, lj)
	if lj.Injective {
		fanout = 1
	}
	return left*(1+math.Log2(right+2)*seekCPU) + left*fanout*lookupRandIO, nil
}

// lookupStats returns the row count of a lookup join's right table and the
// average number of rows per key of the index it seeks.
func lookupStats(ctx *sql.Context, lj *memo.LookupJoin) (rows, fanout float64) {
	rows, fanout = 100, 2
	t, ok := lj.Lookup.Table.UnderlyingTable().(*table)
	if !ok {
		return rows, fanout
	}
	td := t.data()
	rows = math.Max(1, float64(td.rows.Len()))
	ix, ok := lj.Lookup.Index.SqlIdx().(*index)
	if !ok {
		return rows, fanout
	}
	if ix.unique && len(lj.Lookup.Table.Expressions()) >= len(ix.cols) {
		return rows, 1
	}
	return rows, rows / math.Max(1, float64(td.distinctLeading(ix)))
}

// estRows estimates the rows a memo group produces, using what weft knows
// exactly (unique point lookups, index fan-outs) and the memo's estimate
// otherwise.
func estRows(ctx *sql.Context, g *memo.ExprGroup, depth int) float64 {
	est := math.Max(1, float64(g.RelProps.GetStats().RowCount()))
	if depth > 16 {
		return est
	}
	e := g.Best
	if e == nil {
		e = g.First
	}
	switch e := e.(type) {
	case *memo.Filter:
		return math.Min(est, estRows(ctx, e.Child, depth+1))
	case *memo.IndexScan:
		if uniquePoint(ctx, e.Table) {
			return 1
		}
	case *memo.TableAlias:
		if ita, ok := e.Table.Child.(*plan.IndexedTableAccess); ok && uniquePoint(ctx, ita) {
			return 1
		}
	case *memo.LookupJoin:
		left := estRows(ctx, e.Left, depth+1)
		if e.Injective {
			return left
		}
		_, fanout := lookupStats(ctx, e)
		return left * fanout
	}
	return est
}

// uniquePoint reports a static lookup of single keys on a unique index.
func uniquePoint(ctx *sql.Context, ita *plan.IndexedTableAccess) bool {
	if ita == nil || !ita.IsStatic() {
		return false
	}
	ix, ok := ita.Index().(*index)
	if !ok || !ix.unique {
		return false
	}
	l, err := ita.GetLookup(ctx, nil)
	if err != nil {
		return false
	}
	return l.IsPointLookup && len(l.Ranges.(sql.MySQLRangeCollection)) <= 16
}

// statSlot remembers, for one index, the number of distinct values of its
// leading column, measured on some state of the table. Fan-out estimates
// need no precision, so a measurement is reused while the table's row count
// stays within 25 % of the count it was taken at. Schemas (and so slots) are
// shared by every version and fork of a table.
type statSlot struct {
	p atomic.Pointer[distinctStat]
}

type distinctStat struct {
	rows, distinct int
}

func (td *tableData) distinctLeading(ix *index) int {
	slot := td.schema.pkStat
	if !ix.primary {
		slot = td.schema.indexes[ix.pos].stat
	}
	n := td.rows.Len()
	if st := slot.p.Load(); st != nil {
		if float64(n) <= float64(st.rows)*1.25 && float64(n) >= float64(st.rows)*0.75 {
			return st.distinct
		}
	}
	d := 0
	var prev any
	first := true
	cmpLead := td.schema.colCmps[ix.cols[0]]
	visit := func(k []any) {
		v := k[0]
		if first || rank(v) != rank(prev) || (v != nil && cmpLead(v, prev) != 0) {
			d++
		}
		prev, first = v, false
	}
	if ix.primary {
		it := td.rows.Ascend()
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			visit(k)
		}
	} else {
		it := td.idx[ix.pos].Ascend()
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			visit(k)
		}
	}
	slot.p.Store(&distinctStat{rows: n, distinct: d})
	return d
}
