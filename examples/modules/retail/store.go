package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
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

// cells reads one result row left to right, keeping the first error.
type cells struct {
	r   []any
	i   int
	err error
}

func (c *cells) next() any {
	if c.i >= len(c.r) {
		c.fail(fmt.Errorf("row has only %d columns", len(c.r)))
		return nil
	}
	v := c.r[c.i]
	c.i++
	return v
}

func (c *cells) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *cells) str() string {
	switch x := c.next().(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case nil:
		c.fail(fmt.Errorf("column %d: unexpected NULL", c.i-1))
	default:
		c.fail(fmt.Errorf("column %d: want a string, got %T", c.i-1, x))
	}
	return ""
}

func (c *cells) nullStr() *string {
	if c.i < len(c.r) && c.r[c.i] == nil {
		c.i++
		return nil
	}
	s := c.str()
	return &s
}

func (c *cells) float() float64 {
	v := c.next()
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			c.fail(err)
		}
		return f
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			c.fail(err)
		}
		return f
	case []byte:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			c.fail(err)
		}
		return f
	}
	c.fail(fmt.Errorf("column %d: want a number, got %T", c.i-1, v))
	return 0
}

func (c *cells) nullFloat() *float64 {
	if c.i < len(c.r) && c.r[c.i] == nil {
		c.i++
		return nil
	}
	f := c.float()
	return &f
}

func (c *cells) int() int64 {
	v := c.next()
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint64:
		return int64(x)
	case float64:
		return int64(x)
	case json.Number:
		i, err := x.Int64()
		if err != nil {
			c.fail(err)
		}
		return i
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			c.fail(err)
		}
		return i
	case []byte:
		i, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			c.fail(err)
		}
		return i
	}
	c.fail(fmt.Errorf("column %d: want an integer, got %T", c.i-1, v))
	return 0
}

func (c *cells) bool() bool {
	if c.i < len(c.r) {
		if b, ok := c.r[c.i].(bool); ok {
			c.i++
			return b
		}
	}
	return c.int() != 0
}

// strList reads a nullable JSON array of strings (a JSON column).
func (c *cells) strList() []string {
	v := c.next()
	var raw []byte
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		raw = []byte(x)
	case []byte:
		raw = x
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				c.fail(fmt.Errorf("column %d: element %d is %T, not a string", c.i-1, i, e))
			}
			out[i] = s
		}
		return out
	default:
		c.fail(fmt.Errorf("column %d: want a JSON array, got %T", c.i-1, v))
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		c.fail(fmt.Errorf("column %d: %w", c.i-1, err))
		return nil
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func (c *cells) check(table string) error {
	if c.err != nil {
		return fmt.Errorf("retail: %s: %w", table, c.err)
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

// --- readers ----------------------------------------------------------------

// filter is an optional "WHERE col = ?" on one id; all: no filter.
type filter struct {
	all bool
	id  string
}

func (f filter) sql(stmt, col, orderBy string) (string, []any) {
	if f.all {
		return stmt + " ORDER BY " + orderBy, nil
	}
	return stmt + " WHERE " + col + " = ? ORDER BY " + orderBy, []any{f.id}
}

func (f filter) rows(ctx context.Context, stmt, col, orderBy string) ([][]any, error) {
	q, args := f.sql(stmt, col, orderBy)
	return query(ctx, q, args...)
}

// loadUser reads one user, or nil when there is none with the id.
func loadUser(ctx context.Context, id string) (*user, error) {
	us, err := readUsers(ctx, filter{id: id})
	if err != nil || len(us) == 0 {
		return nil, err
	}
	return us[0], nil
}

func readUsers(ctx context.Context, f filter) ([]*user, error) {
	rows, err := f.rows(ctx, "SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users", "user_id", "pos")
	if err != nil {
		return nil, err
	}
	var users []*user
	at := map[string]*user{}
	for _, r := range rows {
		c := cells{r: r}
		u := &user{UserID: c.str(), Name: userName{c.str(), c.str()}, Address: address{c.str(), c.str(), c.str(), c.str(), c.str(), c.str()}, Email: c.str(), Orders: []string{}}
		if err := c.check("users"); err != nil {
			return nil, err
		}
		if !f.all && u.UserID != f.id {
			continue // the collation matched more loosely than Python's ==
		}
		users = append(users, u)
		at[u.UserID] = u
	}
	if len(users) == 0 {
		return nil, nil
	}
	if rows, err = f.rows(ctx, "SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods", "user_id", "user_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		uid := c.str()
		m := &paymentMethod{ID: c.str(), Source: c.str(), Brand: c.nullStr(), LastFour: c.nullStr(), Balance: c.nullFloat()}
		if err := c.check("payment_methods"); err != nil {
			return nil, err
		}
		if u := at[uid]; u != nil {
			u.PaymentMethods = append(u.PaymentMethods, m)
		}
	}
	if rows, err = f.rows(ctx, "SELECT user_id, order_id FROM user_orders", "user_id", "user_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		uid, oid := c.str(), c.str()
		if err := c.check("user_orders"); err != nil {
			return nil, err
		}
		if u := at[uid]; u != nil {
			u.Orders = append(u.Orders, oid)
		}
	}
	return users, nil
}

// loadOrder reads one order, or nil when there is none with the id.
func loadOrder(ctx context.Context, id string) (*order, error) {
	os, err := readOrders(ctx, filter{id: id})
	if err != nil || len(os) == 0 {
		return nil, err
	}
	return os[0], nil
}

func readOrders(ctx context.Context, f filter) ([]*order, error) {
	rows, err := f.rows(ctx, "SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, "+
		"exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id FROM orders", "order_id", "pos")
	if err != nil {
		return nil, err
	}
	var orders []*order
	at := map[string]*order{}
	for _, r := range rows {
		c := cells{r: r}
		o := &order{OrderID: c.str(), UserID: c.str(), Address: address{c.str(), c.str(), c.str(), c.str(), c.str(), c.str()}, Status: c.str(),
			CancelReason: c.nullStr(), ExchangeItems: c.strList(), ExchangeNewItems: c.strList(), ExchangePaymentMethodID: c.nullStr(),
			ExchangePriceDifference: c.nullFloat(), ReturnItems: c.strList(), ReturnPaymentMethodID: c.nullStr()}
		if err := c.check("orders"); err != nil {
			return nil, err
		}
		if !f.all && o.OrderID != f.id {
			continue
		}
		orders = append(orders, o)
		at[o.OrderID] = o
	}
	if len(orders) == 0 {
		return nil, nil
	}

	type sub struct {
		order string
		pos   int64
	}
	items := map[sub]*orderItem{}
	if rows, err = f.rows(ctx, "SELECT order_id, pos, item_id, product_id, name, price FROM order_items", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid, pos := c.str(), c.int()
		it := &orderItem{ItemID: c.str(), ProductID: c.str(), Name: c.str(), Price: c.float(), Options: options{}}
		if err := c.check("order_items"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.Items = append(o.Items, it)
			items[sub{oid, pos}] = it
		}
	}
	if rows, err = f.rows(ctx, "SELECT order_id, item_pos, name, value FROM order_item_options", "order_id", "order_id, item_pos, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid, ipos := c.str(), c.int()
		op := option{c.str(), c.str()}
		if err := c.check("order_item_options"); err != nil {
			return nil, err
		}
		if it := items[sub{oid, ipos}]; it != nil {
			it.Options = append(it.Options, op)
		}
	}

	// Fulfillment positions, in order; pointers into the slices are taken
	// only once they stop growing.
	if rows, err = f.rows(ctx, "SELECT order_id, pos FROM fulfillments", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	var fulPos []sub
	for _, r := range rows {
		c := cells{r: r}
		oid, pos := c.str(), c.int()
		if err := c.check("fulfillments"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.Fulfillments = append(o.Fulfillments, fulfillment{TrackingID: []string{}, ItemIDs: []string{}})
			fulPos = append(fulPos, sub{oid, pos})
		}
	}
	rank := map[sub]*fulfillment{}
	n := map[string]int{}
	for _, k := range fulPos {
		rank[k] = &at[k.order].Fulfillments[n[k.order]]
		n[k.order]++
	}
	for _, t := range []struct {
		stmt string
		list func(*fulfillment) *[]string
	}{
		{"SELECT order_id, fulfillment_pos, tracking_id FROM fulfillment_tracking_ids", func(f *fulfillment) *[]string { return &f.TrackingID }},
		{"SELECT order_id, fulfillment_pos, item_id FROM fulfillment_item_ids", func(f *fulfillment) *[]string { return &f.ItemIDs }},
	} {
		if rows, err = f.rows(ctx, t.stmt, "order_id", "order_id, fulfillment_pos, pos"); err != nil {
			return nil, err
		}
		for _, r := range rows {
			c := cells{r: r}
			oid, fpos, val := c.str(), c.int(), c.str()
			if err := c.check("fulfillments"); err != nil {
				return nil, err
			}
			if fl := rank[sub{oid, fpos}]; fl != nil {
				l := t.list(fl)
				*l = append(*l, val)
			}
		}
	}

	if rows, err = f.rows(ctx, "SELECT order_id, transaction_type, amount, payment_method_id FROM payments", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid := c.str()
		p := payment{TransactionType: c.str(), Amount: c.float(), PaymentMethodID: c.str()}
		if err := c.check("payments"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.PaymentHistory = append(o.PaymentHistory, p)
		}
	}
	return orders, nil
}

// loadProduct reads one product, or nil when there is none with the id.
func loadProduct(ctx context.Context, id string) (*product, error) {
	ps, err := readProducts(ctx, filter{id: id})
	if err != nil || len(ps) == 0 {
		return nil, err
	}
	return ps[0], nil
}

func readProducts(ctx context.Context, f filter) ([]*product, error) {
	rows, err := f.rows(ctx, "SELECT product_id, name FROM products", "product_id", "pos")
	if err != nil {
		return nil, err
	}
	var products []*product
	at := map[string]*product{}
	for _, r := range rows {
		c := cells{r: r}
		p := &product{ProductID: c.str(), Name: c.str()}
		if err := c.check("products"); err != nil {
			return nil, err
		}
		if !f.all && p.ProductID != f.id {
			continue
		}
		products = append(products, p)
		at[p.ProductID] = p
	}
	if len(products) == 0 {
		return nil, nil
	}
	type key struct{ product, item string }
	vars := map[key]*variant{}
	if rows, err = f.rows(ctx, "SELECT product_id, item_id, available, price FROM variants", "product_id", "product_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		pid := c.str()
		v := &variant{ItemID: c.str(), Available: c.bool(), Price: c.float(), Options: options{}}
		if err := c.check("variants"); err != nil {
			return nil, err
		}
		if p := at[pid]; p != nil {
			p.Variants = append(p.Variants, v)
			vars[key{pid, v.ItemID}] = v
		}
	}
	if rows, err = f.rows(ctx, "SELECT product_id, item_id, name, value FROM variant_options", "product_id", "product_id, item_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		pid, iid := c.str(), c.str()
		op := option{c.str(), c.str()}
		if err := c.check("variant_options"); err != nil {
			return nil, err
		}
		if v := vars[key{pid, iid}]; v != nil {
			v.Options = append(v.Options, op)
		}
	}
	return products, nil
}

// loadVariant reads the variant with the item id, whichever product it
// belongs to (item ids are unique over all products), or nil.
func loadVariant(ctx context.Context, itemID string) (*variant, error) {
	rows, err := query(ctx, "SELECT product_id, item_id, available, price FROM variants WHERE item_id = ? ORDER BY product_id", itemID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		pid := c.str()
		v := &variant{ItemID: c.str(), Available: c.bool(), Price: c.float(), Options: options{}}
		if err := c.check("variants"); err != nil {
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
			c := cells{r: r}
			op := option{c.str(), c.str()}
			if err := c.check("variant_options"); err != nil {
				return nil, err
			}
			v.Options = append(v.Options, op)
		}
		return v, nil
	}
	return nil, nil
}
