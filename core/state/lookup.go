package state

import (
	"io"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// lookupIter answers an index lookup with seeks into the index tree: for each
// range it seeks to the first possible entry (using the leading point columns
// and the lower bound of the next one) and stops as soon as the entries leave
// the range's prefix or pass its upper bound.
type lookupIter struct {
	ctx    *sql.Context
	td     *tableData
	ix     *index
	ranges []sql.MySQLRange
	cur    *rangeScan
}

type rangeScan struct {
	pkIt  *ptree.Iter[[]any, sql.Row]
	idxIt *ptree.Iter[[]any, struct{}]
	rng   sql.MySQLRange
	// points holds the number of leading columns fixed to a single value;
	// bounded is true when column `points` has an upper bound to stop on.
	points  int
	bounded bool
	pivot   []any
}

func newLookupIter(ctx *sql.Context, td *tableData, l *sql.IndexLookup) (sql.RowIter, error) {
	ix, ok := l.Index.(*index)
	if !ok {
		return &scanIter{it: td.rows.Ascend()}, nil
	}
	li := &lookupIter{ctx: ctx, td: td, ix: ix}
	if l.IsEmptyRange {
		return li, nil
	}
	switch r := l.Ranges.(type) {
	case sql.MySQLRangeCollection:
		li.ranges = r
	default:
		return &scanIter{it: td.rows.Ascend()}, nil
	}
	// The engine drops an ORDER BY on the index columns and relies on the
	// lookup returning rows in index order (our index does not implement
	// sql.OrderedIndex, so every index counts as ordered and reversible). The
	// ranges are disjoint but need not come sorted: for a reversed lookup
	// they come in descending order, each to be read backwards. Visit them
	// in ascending order; a reversed lookup returns the rows backwards.
	if len(li.ranges) > 1 {
		sorted, err := sql.SortRanges(li.ranges...)
		if err != nil {
			return nil, err
		}
		li.ranges = sorted
	}
	if l.IsReverse {
		return reverseRows(ctx, li)
	}
	return li, nil
}

// reverseRows drains it and returns its rows in reverse order.
func reverseRows(ctx *sql.Context, it sql.RowIter) (sql.RowIter, error) {
	var rows []sql.Row
	for {
		r, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	slices.Reverse(rows)
	return sql.RowsToRowIter(rows...), nil
}

func (li *lookupIter) Close(*sql.Context) error { return nil }

func pointValue(ctx *sql.Context, rce sql.MySQLRangeColumnExpr, typ sql.Type) (any, bool) {
	switch lo := rce.LowerBound.(type) {
	case sql.BelowNull:
		if _, ok := rce.UpperBound.(sql.AboveNull); ok {
			return nil, true
		}
	case sql.Below:
		hi, ok := rce.UpperBound.(sql.Above)
		if !ok {
			return nil, false
		}
		c, err := rce.Typ.Compare(ctx, lo.Key, hi.Key)
		if err != nil || c != 0 {
			return nil, false
		}
		v, ok := convertKey(ctx, lo.Key, typ)
		return v, ok
	}
	return nil, false
}

// convertKey converts a range bound to the column's stored representation;
// false when it cannot be represented exactly (the scan then widens).
func convertKey(ctx *sql.Context, k any, typ sql.Type) (any, bool) {
	v, inRange, err := typ.Convert(ctx, k)
	if err != nil || inRange != sql.InRange {
		return nil, false
	}
	v, err = normalize(ctx, v)
	if err != nil {
		return nil, false
	}
	// A lossy conversion (2.5 into an INT column) must not narrow the scan.
	if c, err := typ.Compare(ctx, k, v); err != nil || c != 0 {
		return nil, false
	}
	return v, true
}

func (li *lookupIter) start(rng sql.MySQLRange) *rangeScan {
	ts := li.td.schema
	cols := li.ix.cols
	keyLen := len(cols)
	if !li.ix.primary {
		keyLen += len(ts.pk)
	}
	rs := &rangeScan{rng: rng}
	pivot := make([]any, 0, keyLen)
	for j := 0; j < len(rng) && j < len(cols); j++ {
		typ := ts.sch.Schema[cols[j]].Type
		if v, ok := pointValue(li.ctx, rng[j], typ); ok {
			pivot = append(pivot, v)
			rs.points++
			continue
		}
		switch lo := rng[j].LowerBound.(type) {
		case sql.AboveNull:
			pivot = append(pivot, nil)
			for len(pivot) < keyLen {
				pivot = append(pivot, maxKey)
			}
		case sql.Below:
			if v, ok := convertKey(li.ctx, lo.Key, typ); ok {
				pivot = append(pivot, v)
			}
		case sql.Above:
			if v, ok := convertKey(li.ctx, lo.Key, typ); ok {
				pivot = append(pivot, v)
				for len(pivot) < keyLen {
					pivot = append(pivot, maxKey)
				}
			}
		}
		_, unbounded := rng[j].UpperBound.(sql.AboveAll)
		rs.bounded = !unbounded
		break
	}
	for len(pivot) < keyLen {
		pivot = append(pivot, minKey)
	}
	rs.pivot = pivot
	if li.ix.primary {
		rs.pkIt = li.td.rows.SeekGE(pivot)
	} else {
		rs.idxIt = li.td.idx[li.ix.pos].SeekGE(pivot)
	}
	return rs
}

// cutBelow reports whether cut c lies strictly below value v.
func cutBelow(ctx *sql.Context, c sql.MySQLRangeCut, v any, typ sql.Type) (bool, error) {
	switch c := c.(type) {
	case sql.BelowNull:
		return true, nil
	case sql.AboveNull:
		return v != nil, nil
	case sql.AboveAll:
		return false, nil
	case sql.Below:
		if v == nil {
			return false, nil
		}
		r, err := typ.Compare(ctx, c.Key, v)
		return r <= 0, err
	case sql.Above:
		if v == nil {
			return false, nil
		}
		r, err := typ.Compare(ctx, c.Key, v)
		return r < 0, err
	}
	return true, nil
}

func (li *lookupIter) Next(ctx *sql.Context) (sql.Row, error) {
	ts := li.td.schema
	for {
		if li.cur == nil {
			if len(li.ranges) == 0 {
				return nil, io.EOF
			}
			li.cur = li.start(li.ranges[0])
			li.ranges = li.ranges[1:]
		}
		rs := li.cur
		var key []any
		var row sql.Row
		var ok bool
		if rs.pkIt != nil {
			key, row, ok = rs.pkIt.Next()
		} else {
			key, _, ok = rs.idxIt.Next()
		}
		if !ok {
			li.cur = nil
			continue
		}
		// Leaving the fixed prefix ends this range.
		done := false
		for j := 0; j < rs.points; j++ {
			if rank(rs.pivot[j]) != rank(key[j]) || (key[j] != nil && ts.colCmps[li.ix.cols[j]](key[j], rs.pivot[j]) != 0) {
				done = true
				break
			}
		}
		if !done && rs.bounded && rs.points < len(rs.rng) {
			rce := rs.rng[rs.points]
			below, err := cutBelow(ctx, rce.UpperBound, key[rs.points], rce.Typ)
			if err != nil {
				return nil, err
			}
			done = below
		}
		if done {
			li.cur = nil
			continue
		}
		in := true
		for j := 0; j < len(rs.rng) && j < len(li.ix.cols); j++ {
			rce := rs.rng[j]
			lo, err := cutBelow(ctx, rce.LowerBound, key[j], rce.Typ)
			if err != nil {
				return nil, err
			}
			hi, err := cutBelow(ctx, rce.UpperBound, key[j], rce.Typ)
			if err != nil {
				return nil, err
			}
			if !lo || hi {
				in = false
				break
			}
		}
		if !in {
			continue
		}
		if row == nil {
			row, ok = li.td.rows.Get(key[len(li.ix.cols):])
			if !ok {
				continue
			}
		}
		return row.Copy(), nil
	}
}
