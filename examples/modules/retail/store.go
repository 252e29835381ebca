package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/weft-dev/weft/examples/modules/retail/records"
)

// sqlDB is the module's database handle (the SDK's, set in main.go).
var sqlDB func() *sql.DB

// query runs a row-returning statement and materializes every row, each
// column scanned as the driver's own value.
func query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := sqlDB().QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("retail: query: %w", err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("retail: scan: %w", err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("retail: query: %w", err)
	}
	return out, nil
}

// exec runs a write statement.
func exec(ctx context.Context, q string, args ...any) error {
	if _, err := sqlDB().ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("retail: exec: %w", err)
	}
	return nil
}

// jsonList is the JSON text of a string list, bound to a JSON column.
func jsonList(s []string) any {
	if s == nil {
		return nil
	}
	b, _ := json.Marshal(s)
	return string(b)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// loadUser reads one user, or nil when there is none with the id.
func loadUser(ctx context.Context, id string) (*user, error) {
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
