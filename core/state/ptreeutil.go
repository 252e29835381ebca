package state

import (
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

func ptreeFromSorted(cmp func(a, b []any) int, keys [][]any, vals []sql.Row) ptree.Tree[[]any, sql.Row] {
	return ptree.FromSorted(cmp, keys, vals)
}

func ptreeFromSortedSet(cmp func(a, b []any) int, keys [][]any) ptree.Tree[[]any, struct{}] {
	return ptree.FromSorted(cmp, keys, make([]struct{}, len(keys)))
}
