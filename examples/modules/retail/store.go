package main

import (
	"context"
	"fmt"
	"maps"

	"github.com/weft-dev/weft/examples/modules/retail/records"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

// query runs a row-returning statement and materializes every row
// (tool.Query: weft_sql_v2, no database/sql), each cell as records.Cells
// reads it: JSON and decimal cells as their text.
func query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rs, err := batch(ctx, []records.Statement{{SQL: q, Args: args}})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// batch runs the statements in one host call (tool.Batch).
func batch(ctx context.Context, stmts []records.Statement) ([][][]any, error) {
	ts := make([]tool.Stmt, len(stmts))
	for i, s := range stmts {
		ts[i] = tool.Stmt{SQL: s.SQL, Args: s.Args}
	}
	rs, err := tool.Batch(ctx, ts...)
	if err != nil {
		return nil, fmt.Errorf("retail: query: %w", err)
	}
	out := make([][][]any, len(rs))
	for i, r := range rs {
		vals := r.Values()
		for _, row := range vals {
			for j, v := range row {
				switch x := v.(type) {
				case abi.JSONText:
					row[j] = string(x)
				case abi.Decimal:
					row[j] = string(x)
				}
			}
		}
		out[i] = vals
	}
	return out, nil
}

// writesKey holds a write tool's pending statements in its context
// (withWrites).
type writesKey struct{}

type writes struct{ stmts []tool.Stmt }

// exec queues a write statement of the current write tool; withWrites
// sends them all in one host call when the tool succeeds. Outside a write
// tool it runs at once.
func exec(ctx context.Context, q string, args ...any) error {
	if w, ok := ctx.Value(writesKey{}).(*writes); ok {
		w.stmts = append(w.stmts, tool.Stmt{SQL: q, Args: args})
		return nil
	}
	if _, err := tool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("retail: exec: %w", err)
	}
	return nil
}

// withWrites runs a write tool with its writes queued, then sends them in
// one batch (the tools read everything before they write, so the order of
// their effects is unchanged). A failed write fails the tool, whose unit of
// work is then rolled back, as when each write was its own host call.
func withWrites[In, Out any](fn func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (Out, error) {
		w := &writes{}
		out, err := fn(context.WithValue(ctx, writesKey{}, w), in)
		if err != nil || len(w.stmts) == 0 {
			return out, err
		}
		if _, err := tool.Batch(ctx, w.stmts...); err != nil {
			var zero Out
			return zero, fmt.Errorf("retail: exec: %w", err)
		}
		return out, nil
	}
}

// cacheKey holds a tool call's prefetched records (prefetch).
type cacheKey struct{}

type cache struct {
	users    map[string]*user
	products map[string]*product
}

// prefetch reads the users and products a tool is about to look up in one
// host call; loadUser and loadProduct then answer from it. Reads only:
// the tools prefetch before they write.
func prefetch(ctx context.Context, userIDs, productIDs []string) (context.Context, error) {
	var stmts []records.Statement
	for _, id := range userIDs {
		stmts = append(stmts, records.UserStatements(filter{ID: id})...)
	}
	for _, id := range productIDs {
		stmts = append(stmts, records.ProductStatements(filter{ID: id})...)
	}
	if len(stmts) == 0 {
		return ctx, nil
	}
	res, err := batch(ctx, stmts)
	if err != nil {
		return ctx, err
	}
	c := &cache{users: map[string]*user{}, products: map[string]*product{}}
	if old, ok := ctx.Value(cacheKey{}).(*cache); ok {
		maps.Copy(c.users, old.users)
		maps.Copy(c.products, old.products)
	}
	k := 0
	for _, id := range userIDs {
		us, err := records.AssembleUsers(filter{ID: id}, res[k:k+3])
		if err != nil {
			return ctx, err
		}
		k += 3
		c.users[id] = nil
		if len(us) > 0 {
			c.users[id] = us[0]
		}
	}
	for _, id := range productIDs {
		ps, err := records.AssembleProducts(filter{ID: id}, res[k:k+3])
		if err != nil {
			return ctx, err
		}
		k += 3
		c.products[id] = nil
		if len(ps) > 0 {
			c.products[id] = ps[0]
		}
	}
	return context.WithValue(ctx, cacheKey{}, c), nil
}

// loadUser reads one user, or nil when there is none with the id.
func loadUser(ctx context.Context, id string) (*user, error) {
	if c, ok := ctx.Value(cacheKey{}).(*cache); ok {
		if u, ok := c.users[id]; ok {
			return u, nil
		}
	}
	us, err := readUsers(ctx, filter{ID: id})
	if err != nil || len(us) == 0 {
		return nil, err
	}
	return us[0], nil
}

// loadOrder reads one order, or nil when there is none with the id.
func loadOrder(ctx context.Context, id string) (*order, error) {
	os, err := readOrders(ctx, filter{ID: id})
	if err != nil || len(os) == 0 {
		return nil, err
	}
	return os[0], nil
}

// loadProduct reads one product, or nil when there is none with the id.
func loadProduct(ctx context.Context, id string) (*product, error) {
	if c, ok := ctx.Value(cacheKey{}).(*cache); ok {
		if p, ok := c.products[id]; ok {
			return p, nil
		}
	}
	ps, err := readProducts(ctx, filter{ID: id})
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

// loadVariant reads the variant with the item id, whichever product it
// belongs to (item ids are unique over all products), or nil.
func loadVariant(ctx context.Context, itemID string) (*variant, error) {
	rows, err := query(ctx, "SELECT product_id, item_id, available, price FROM variants WHERE item_id = ? ORDER BY product_id", itemID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := records.NewCells(r)
		pid := c.Str()
		v := &variant{ItemID: c.Str(), Available: c.Bool(), Price: c.Float(), Options: options{}}
		if err := c.Check("variants"); err != nil {
			return nil, err
		}
		if v.ItemID != itemID {
			continue // the collation matched more loosely than Python's ==
		}
		opts, err := query(ctx, "SELECT name, value FROM variant_options WHERE product_id = ? AND item_id = ? ORDER BY pos", pid, v.ItemID)
		if err != nil {
			return nil, err
		}
		for _, r := range opts {
			c := records.NewCells(r)
			op := option{Name: c.Str(), Value: c.Str()}
			if err := c.Check("variant_options"); err != nil {
				return nil, err
			}
			v.Options = append(v.Options, op)
		}
		return v, nil
	}
	return nil, nil
}
