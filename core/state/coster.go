package state

import (
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/memo"
)

// lookupCoster prices lookup joins for weft's storage, where an index lookup
// is a tree seek: O(log n) comparisons per left row, plus the matching rows.
// go-mysql-server's default coster prices a lookup join from histogram
// cardinalities; weft keeps exact row counts but no histograms, and without
// them the default coster estimates the join output as the cross product and
// picks hash joins that scan whole tables even when the left side is one row.
// Every other operator keeps the default costing (whose units are: one
// sequential row read = 1, one random read = 1.3, one comparison = 0.01).
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
	left := math.Max(1, float64(lj.Left.RelProps.GetStats().RowCount()))
	right := float64(100)
	if db := lj.Lookup.Table.Database(); db != nil {
		if cnt, err := s.RowCount(ctx, db.Name(), lj.Lookup.Table); err == nil && cnt > 0 {
			right = float64(cnt)
		}
	}
	// Matches per key: one for a unique lookup; otherwise assume keys are
	// selective (a few rows each), which holds for the foreign-key joins tool
	// backends run. A full join of two big tables still prefers a hash join,
	// because left * log2(right) then exceeds a scan of right.
	matches := 1.0
	if !lj.Injective {
		matches = 2
	}
	return left*(1+math.Log2(right+2)*seekCPU) + left*matches*lookupRandIO, nil
}
