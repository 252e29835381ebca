package retaildb

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/weft-dev/weft/core/state"
)

// DDL is the retail schema (schema.sql): the argument of state.Store.Load.
//
//go:embed schema.sql
var DDL string

// Querier runs a row-returning SQL statement with ? parameters.
// *state.Workspace and *state.Unit implement it.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*state.Rows, error)
}

// ErrNotFound is returned by ExportUser, ExportOrder and ExportProduct when
// no record has the id.
var ErrNotFound = errors.New("retaildb: no such record")

// Decode reads a database in db.json's shape. It is strict so that nothing
// is lost on the way to SQL: unknown keys, missing required keys, duplicate
// keys and map keys that differ from their record's id are errors.
func Decode(r io.Reader) (*DB, error) {
	rd := newReader(r)
	var db DB
	if err := rd.db(&db); err != nil {
		return nil, fmt.Errorf("retaildb: decode: %w", err)
	}
	if err := rd.end(); err != nil {
		return nil, fmt.Errorf("retaildb: decode: %w", err)
	}
	return &db, nil
}

// Load reads db.json's shape from r and loads it into a new version of
// store with the retail schema, in bulk (no per-row SQL).
func Load(ctx context.Context, store *state.Store, r io.Reader) (*state.Version, error) {
	db, err := Decode(r)
	if err != nil {
		return nil, err
	}
	return LoadDB(ctx, store, db)
}

// LoadDB loads a decoded database into a new version of store.
func LoadDB(ctx context.Context, store *state.Store, db *DB) (*state.Version, error) {
	v, err := store.Load(ctx, DDL, db.TableRows()...)
	if err != nil {
		return nil, fmt.Errorf("retaildb: load: %w", err)
	}
	return v, nil
}

// TableRows converts the database to bulk rows for state.Store.Load with
// DDL, one entry per table of the schema.
func (d *DB) TableRows() []state.TableRows {
	users := state.TableRows{Table: "users", Columns: []string{"user_id", "pos", "first_name", "last_name", "address1", "address2", "city", "country", "state", "zip", "email"}}
	pms := state.TableRows{Table: "payment_methods", Columns: []string{"user_id", "payment_method_id", "pos", "source", "brand", "last_four", "balance"}}
	uos := state.TableRows{Table: "user_orders", Columns: []string{"user_id", "pos", "order_id"}}
	for i, u := range d.Users {
		a := u.Address
		users.Rows = append(users.Rows, []any{u.UserID, i, u.Name.FirstName, u.Name.LastName, a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, u.Email})
		for j, m := range u.PaymentMethods {
			pms.Rows = append(pms.Rows, []any{u.UserID, m.ID, j, m.Source, ptr(m.Brand), ptr(m.LastFour), ptr(m.Balance)})
		}
		for j, o := range u.Orders {
			uos.Rows = append(uos.Rows, []any{u.UserID, j, o})
		}
	}

	orders := state.TableRows{Table: "orders", Columns: []string{"order_id", "pos", "user_id", "address1", "address2", "city", "country", "state", "zip", "status",
		"cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id", "exchange_price_difference", "return_items", "return_payment_method_id"}}
	items := state.TableRows{Table: "order_items", Columns: []string{"order_id", "pos", "item_id", "product_id", "name", "price"}}
	itemOpts := state.TableRows{Table: "order_item_options", Columns: []string{"order_id", "item_pos", "pos", "name", "value"}}
	fuls := state.TableRows{Table: "fulfillments", Columns: []string{"order_id", "pos"}}
	tracks := state.TableRows{Table: "fulfillment_tracking_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "tracking_id"}}
	fulItems := state.TableRows{Table: "fulfillment_item_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "item_id"}}
	pays := state.TableRows{Table: "payments", Columns: []string{"order_id", "pos", "transaction_type", "amount", "payment_method_id"}}
	for i, o := range d.Orders {
		a := o.Address
		orders.Rows = append(orders.Rows, []any{o.OrderID, i, o.UserID, a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, o.Status,
			ptr(o.CancelReason), jsonList(o.ExchangeItems), jsonList(o.ExchangeNewItems), ptr(o.ExchangePaymentMethodID),
			ptr(o.ExchangePriceDifference), jsonList(o.ReturnItems), ptr(o.ReturnPaymentMethodID)})
		for j, it := range o.Items {
			items.Rows = append(items.Rows, []any{o.OrderID, j, it.ItemID, it.ProductID, it.Name, it.Price})
			for k, op := range it.Options {
				itemOpts.Rows = append(itemOpts.Rows, []any{o.OrderID, j, k, op.Name, op.Value})
			}
		}
		for j, f := range o.Fulfillments {
			fuls.Rows = append(fuls.Rows, []any{o.OrderID, j})
			for k, t := range f.TrackingID {
				tracks.Rows = append(tracks.Rows, []any{o.OrderID, j, k, t})
			}
			for k, t := range f.ItemIDs {
				fulItems.Rows = append(fulItems.Rows, []any{o.OrderID, j, k, t})
			}
		}
		for j, p := range o.PaymentHistory {
			pays.Rows = append(pays.Rows, []any{o.OrderID, j, p.TransactionType, p.Amount, p.PaymentMethodID})
		}
	}

	products := state.TableRows{Table: "products", Columns: []string{"product_id", "pos", "name"}}
	vars := state.TableRows{Table: "variants", Columns: []string{"product_id", "item_id", "pos", "available", "price"}}
	varOpts := state.TableRows{Table: "variant_options", Columns: []string{"product_id", "item_id", "pos", "name", "value"}}
	for i, p := range d.Products {
		products.Rows = append(products.Rows, []any{p.ProductID, i, p.Name})
		for j, v := range p.Variants {
			vars.Rows = append(vars.Rows, []any{p.ProductID, v.ItemID, j, v.Available, v.Price})
			for k, op := range v.Options {
				varOpts.Rows = append(varOpts.Rows, []any{p.ProductID, v.ItemID, k, op.Name, op.Value})
			}
		}
	}
	return []state.TableRows{users, pms, uos, orders, items, itemOpts, fuls, tracks, fulItems, pays, products, vars, varOpts}
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func jsonList(s []string) any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// Export returns the state of v in db.json's file shape, indented like the
// tau2-bench file (4 spaces, no trailing newline).
func Export(ctx context.Context, v *state.Version) ([]byte, error) {
	db, err := ExportDB(ctx, v.Store().Fork(v))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(db); err != nil {
		return nil, fmt.Errorf("retaildb: export: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ExportDB reads the whole database from q, every list and map in its
// position order.
func ExportDB(ctx context.Context, q Querier) (*DB, error) {
	var db DB
	var err error
	if db.Products, err = readProducts(ctx, q); err != nil {
		return nil, err
	}
	if db.Users, err = readUsers(ctx, q); err != nil {
		return nil, err
	}
	if db.Orders, err = readOrders(ctx, q); err != nil {
		return nil, err
	}
	return &db, nil
}

// ExportUser reads one user in db.json's shape, or ErrNotFound.
func ExportUser(ctx context.Context, q Querier, userID string) (*User, error) {
	return one(readUsers(ctx, q, userID, userID))
}

// ExportOrder reads one order, or ErrNotFound. Its JSON encoding is tau2's
// record shape (see Order).
func ExportOrder(ctx context.Context, q Querier, orderID string) (*Order, error) {
	return one(readOrders(ctx, q, orderID, orderID))
}

// ExportProduct reads one product in db.json's shape, or ErrNotFound.
func ExportProduct(ctx context.Context, q Querier, productID string) (*Product, error) {
	return one(readProducts(ctx, q, productID, productID))
}

func one[T any](list []T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return &list[0], nil
}

// selector runs "SELECT cols FROM table [WHERE keyCol = ?] ORDER BY order".
// The statement text is constant per call site; the id travels as a bound
// parameter.
type selector struct {
	ctx context.Context
	q   Querier
	id  []string // empty: whole table; one id: that record only
}

func (s selector) rows(cols, table, keyCol, order string) ([][]any, error) {
	stmt := "SELECT " + cols + " FROM " + table
	var args []any
	if len(s.id) > 0 {
		stmt += " WHERE " + keyCol + " = ?"
		args = append(args, s.id[0])
	}
	stmt += " ORDER BY " + order
	r, err := s.q.Query(s.ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("retaildb: %s: %w", table, err)
	}
	return r.Values, nil
}

// readUsers reads all users, or with id (one element) that user only.
func readUsers(ctx context.Context, q Querier, id ...string) ([]User, error) {
	s := selector{ctx, q, nonEmpty(id)}
	rows, err := s.rows("user_id, first_name, last_name, address1, address2, city, country, state, zip, email", "users", "user_id", "pos")
	if err != nil {
		return nil, err
	}
	users := make([]User, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		c := cells{r: r}
		users[i] = User{UserID: c.str(), Name: Name{c.str(), c.str()}, Address: Address{c.str(), c.str(), c.str(), c.str(), c.str(), c.str()}, Email: c.str(), PaymentMethods: []PaymentMethod{}, Orders: []string{}}
		if c.err != nil {
			return nil, fmt.Errorf("retaildb: users: %w", c.err)
		}
		at[users[i].UserID] = i
	}
	if rows, err = s.rows("user_id, payment_method_id, source, brand, last_four, balance", "payment_methods", "user_id", "user_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		uid := c.str()
		m := PaymentMethod{ID: c.str(), Source: c.str(), Brand: c.nullStr(), LastFour: c.nullStr(), Balance: c.nullFloat()}
		i, ok := at[uid]
		if err := c.check("payment_methods", ok, uid); err != nil {
			return nil, err
		}
		users[i].PaymentMethods = append(users[i].PaymentMethods, m)
	}
	if rows, err = s.rows("user_id, order_id", "user_orders", "user_id", "user_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		uid, oid := c.str(), c.str()
		i, ok := at[uid]
		if err := c.check("user_orders", ok, uid); err != nil {
			return nil, err
		}
		users[i].Orders = append(users[i].Orders, oid)
	}
	return users, nil
}

// readOrders reads all orders, or with id (one element) that order only.
func readOrders(ctx context.Context, q Querier, id ...string) ([]Order, error) {
	s := selector{ctx, q, nonEmpty(id)}
	rows, err := s.rows("order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, "+
		"exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id", "orders", "order_id", "pos")
	if err != nil {
		return nil, err
	}
	orders := make([]Order, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		c := cells{r: r}
		orders[i] = Order{OrderID: c.str(), UserID: c.str(), Address: Address{c.str(), c.str(), c.str(), c.str(), c.str(), c.str()}, Status: c.str(),
			CancelReason: c.nullStr(), ExchangeItems: c.strList(), ExchangeNewItems: c.strList(), ExchangePaymentMethodID: c.nullStr(),
			ExchangePriceDifference: c.nullFloat(), ReturnItems: c.strList(), ReturnPaymentMethodID: c.nullStr(),
			Items: []OrderItem{}, Fulfillments: []Fulfillment{}, PaymentHistory: []Payment{}}
		if c.err != nil {
			return nil, fmt.Errorf("retaildb: orders: %w", c.err)
		}
		at[orders[i].OrderID] = i
	}

	type sub struct {
		order string
		pos   int64
	}
	itemAt := map[sub]int{}
	if rows, err = s.rows("order_id, pos, item_id, product_id, name, price", "order_items", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid, pos := c.str(), c.int()
		it := OrderItem{ItemID: c.str(), ProductID: c.str(), Name: c.str(), Price: c.float(), Options: Options{}}
		i, ok := at[oid]
		if err := c.check("order_items", ok, oid); err != nil {
			return nil, err
		}
		itemAt[sub{oid, pos}] = len(orders[i].Items)
		orders[i].Items = append(orders[i].Items, it)
	}
	if rows, err = s.rows("order_id, item_pos, name, value", "order_item_options", "order_id", "order_id, item_pos, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid, ipos := c.str(), c.int()
		op := Option{c.str(), c.str()}
		j, ok := itemAt[sub{oid, ipos}]
		if err := c.check("order_item_options", ok, fmt.Sprintf("%s item %d", oid, ipos)); err != nil {
			return nil, err
		}
		it := &orders[at[oid]].Items[j]
		it.Options = append(it.Options, op)
	}

	fulAt := map[sub]int{}
	if rows, err = s.rows("order_id, pos", "fulfillments", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid, pos := c.str(), c.int()
		i, ok := at[oid]
		if err := c.check("fulfillments", ok, oid); err != nil {
			return nil, err
		}
		fulAt[sub{oid, pos}] = len(orders[i].Fulfillments)
		orders[i].Fulfillments = append(orders[i].Fulfillments, Fulfillment{TrackingID: []string{}, ItemIDs: []string{}})
	}
	for _, t := range []struct {
		table, col string
		list       func(*Fulfillment) *[]string
	}{
		{"fulfillment_tracking_ids", "tracking_id", func(f *Fulfillment) *[]string { return &f.TrackingID }},
		{"fulfillment_item_ids", "item_id", func(f *Fulfillment) *[]string { return &f.ItemIDs }},
	} {
		if rows, err = s.rows("order_id, fulfillment_pos, "+t.col, t.table, "order_id", "order_id, fulfillment_pos, pos"); err != nil {
			return nil, err
		}
		for _, r := range rows {
			c := cells{r: r}
			oid, fpos, val := c.str(), c.int(), c.str()
			j, ok := fulAt[sub{oid, fpos}]
			if err := c.check(t.table, ok, fmt.Sprintf("%s fulfillment %d", oid, fpos)); err != nil {
				return nil, err
			}
			l := t.list(&orders[at[oid]].Fulfillments[j])
			*l = append(*l, val)
		}
	}

	if rows, err = s.rows("order_id, transaction_type, amount, payment_method_id", "payments", "order_id", "order_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		oid := c.str()
		p := Payment{TransactionType: c.str(), Amount: c.float(), PaymentMethodID: c.str()}
		i, ok := at[oid]
		if err := c.check("payments", ok, oid); err != nil {
			return nil, err
		}
		orders[i].PaymentHistory = append(orders[i].PaymentHistory, p)
	}
	return orders, nil
}

// readProducts reads all products, or with id (one element) that product only.
func readProducts(ctx context.Context, q Querier, id ...string) ([]Product, error) {
	s := selector{ctx, q, nonEmpty(id)}
	rows, err := s.rows("product_id, name", "products", "product_id", "pos")
	if err != nil {
		return nil, err
	}
	products := make([]Product, len(rows))
	at := make(map[string]int, len(rows))
	for i, r := range rows {
		c := cells{r: r}
		products[i] = Product{ProductID: c.str(), Name: c.str(), Variants: []Variant{}}
		if c.err != nil {
			return nil, fmt.Errorf("retaildb: products: %w", c.err)
		}
		at[products[i].ProductID] = i
	}
	type vkey struct{ product, item string }
	varAt := map[vkey]int{}
	if rows, err = s.rows("product_id, item_id, available, price", "variants", "product_id", "product_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		pid := c.str()
		v := Variant{ItemID: c.str(), Available: c.bool(), Price: c.float(), Options: Options{}}
		i, ok := at[pid]
		if err := c.check("variants", ok, pid); err != nil {
			return nil, err
		}
		varAt[vkey{pid, v.ItemID}] = len(products[i].Variants)
		products[i].Variants = append(products[i].Variants, v)
	}
	if rows, err = s.rows("product_id, item_id, name, value", "variant_options", "product_id", "product_id, item_id, pos"); err != nil {
		return nil, err
	}
	for _, r := range rows {
		c := cells{r: r}
		pid, iid := c.str(), c.str()
		op := Option{c.str(), c.str()}
		j, ok := varAt[vkey{pid, iid}]
		if err := c.check("variant_options", ok, pid+" variant "+iid); err != nil {
			return nil, err
		}
		v := &products[at[pid]].Variants[j]
		v.Options = append(v.Options, op)
	}
	return products, nil
}

func nonEmpty(id []string) []string {
	if len(id) > 0 {
		return id[:1]
	}
	return nil
}

// cells reads one result row left to right, remembering the first error.
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

// check reports a decoding error or a child row whose parent (named by
// parent) is missing.
func (c *cells) check(table string, parentFound bool, parent string) error {
	if c.err != nil {
		return fmt.Errorf("retaildb: %s: %w", table, c.err)
	}
	if !parentFound {
		return fmt.Errorf("retaildb: %s: row for %s, which does not exist", table, parent)
	}
	return nil
}

func (c *cells) str() string {
	v := c.next()
	s, ok := v.(string)
	if !ok {
		c.fail(fmt.Errorf("column %d: want a string, got %T", c.i-1, v))
	}
	return s
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
	}
	c.fail(fmt.Errorf("column %d: want a float, got %T", c.i-1, v))
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
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
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
	switch n := c.int(); n {
	case 0:
		return false
	case 1:
		return true
	default:
		c.fail(fmt.Errorf("column %d: boolean holds %d", c.i-1, n))
		return false
	}
}

// jsonValue is implemented by the engine's JSON column values.
type jsonValue interface{ ToInterface() (any, error) }

// strList reads a nullable JSON array of strings.
func (c *cells) strList() []string {
	v := c.next()
	if v == nil {
		return nil
	}
	if j, ok := v.(jsonValue); ok {
		var err error
		if v, err = j.ToInterface(); err != nil {
			c.fail(err)
			return nil
		}
	}
	arr, ok := v.([]any)
	if !ok {
		c.fail(fmt.Errorf("column %d: want a JSON array, got %T", c.i-1, v))
		return nil
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		s, ok := x.(string)
		if !ok {
			c.fail(fmt.Errorf("column %d: JSON array element %d is %T, not a string", c.i-1, i, x))
			return nil
		}
		out[i] = s
	}
	return out
}
