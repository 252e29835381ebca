package records

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/pyfloat"
)

// The records below are the retail domain's JSON shapes: what the tools
// return and what the export hook writes. They mirror tau2-bench's data
// model (field names and nesting); ordered maps (payment methods, variants,
// options) keep their element order, which the schema stores in pos
// columns.

// Address is a user's default address or an order's shipping address.
type Address struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	State    string `json:"state"`
	Zip      string `json:"zip"`
}

// UserName is a user's first and last name.
type UserName struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// PaymentMethod is one of a user's payment methods. Credit cards carry brand
// and last four digits, gift cards a balance; paypal has neither.
type PaymentMethod struct {
	Source   string
	ID       string
	Brand    *string
	LastFour *string
	Balance  *float64
}

func (m *PaymentMethod) IsGiftCard() bool { return m.Source == "gift_card" }

type User struct {
	UserID         string
	Name           UserName
	Address        Address
	Email          string
	PaymentMethods []*PaymentMethod // JSON: object keyed by id
	Orders         []string
}

// Method returns the user's payment method with the id, or nil.
func (u *User) Method(id string) *PaymentMethod {
	for _, m := range u.PaymentMethods {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// Option is one name/value pair of an options object.
type Option struct {
	Name, Value string
}

// Options is a string-to-string JSON object kept in its key order.
type Options []Option

type Variant struct {
	ItemID    string
	Options   Options
	Available bool
	Price     float64
}

type Product struct {
	Name      string
	ProductID string
	Variants  []*Variant // JSON: object keyed by item id
}

type OrderItem struct {
	Name      string
	ProductID string
	ItemID    string
	Price     float64
	Options   Options
}

type Fulfillment struct {
	TrackingID []string
	ItemIDs    []string
}

type Payment struct {
	TransactionType string
	Amount          float64
	PaymentMethodID string
}

// Order is an order with tau2's seven optional fields (nil when unset).
type Order struct {
	OrderID                 string
	UserID                  string
	Address                 Address
	Items                   []*OrderItem
	Status                  string
	Fulfillments            []Fulfillment
	PaymentHistory          []Payment
	CancelReason            *string
	ExchangeItems           []string
	ExchangeNewItems        []string
	ExchangePaymentMethodID *string
	ExchangePriceDifference *float64
	ReturnItems             []string
	ReturnPaymentMethodID   *string

	// fileShape omits unset optional keys (db.json's form) instead of
	// writing them as null (the record form tools return).
	FileShape bool
}

// --- JSON -------------------------------------------------------------------

// obj writes a JSON object member by member, in call order.
type obj struct {
	buf bytes.Buffer
	err error
	n   int
}

func (o *obj) add(key string, v any) {
	if o.err != nil {
		return
	}
	if o.n == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	o.n++
	o.buf.Write(appendString(o.buf.AvailableBuffer(), key))
	o.buf.WriteByte(':')
	// The shapes of the records' own members (strings, string lists,
	// addresses, names, flags) are appended directly, byte for byte what
	// json.Marshal writes: in wasm a json.Marshal of a string goes through
	// reflection and a pooled encoder, dozens of function calls per member.
	if b, ok := appendPlain(o.buf.AvailableBuffer(), v); ok {
		o.buf.Write(b)
		return
	}
	// The module's own records (and objects built here) are written
	// directly: json.Marshal would produce the same bytes (they are compact
	// and every string in them went through json.Marshal already) but
	// re-scans them byte by byte, once per nesting level.
	var b []byte
	var err error
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case *Order:
		b, err = marshalRecord(x, x == nil)
	case *PaymentMethod:
		b, err = marshalRecord(x, x == nil)
	case *Variant:
		b, err = marshalRecord(x, x == nil)
	case Options:
		b, err = x.MarshalJSON()
	case pyFloat:
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			b, err = json.Marshal(v)
		} else {
			o.buf.WriteString(PyRepr(float64(x))) // what MarshalJSON returns
			return
		}
	case []*OrderItem:
		if x != nil {
			err = appendList(&o.buf, x)
			if err == nil {
				return
			}
		}
		b, err = marshalList(x)
	case []Fulfillment:
		if x != nil {
			err = appendList(&o.buf, x)
			if err == nil {
				return
			}
		}
		b, err = marshalList(x)
	case []Payment:
		if x != nil {
			err = appendList(&o.buf, x)
			if err == nil {
				return
			}
		}
		b, err = marshalList(x)
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		b, err = json.Marshal(v) // its error, wrapped as encoding/json wraps it
	}
	if err != nil {
		o.err = err
		return
	}
	o.buf.Write(b)
}

// appendString appends s as json.Marshal writes it (HTML characters
// escaped).
func appendString(b []byte, s string) []byte { return abi.AppendJSONString(b, s, true) }

// appendStrings appends a string list as json.Marshal writes it (nil:
// null).
func appendStrings(b []byte, l []string) []byte {
	if l == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range l {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

// appendPlain appends v as json.Marshal writes it when v is one of the
// plain member types of the records (ok false: another type, for
// json.Marshal).
func appendPlain(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), true
	case string:
		return appendString(b, x), true
	case *string:
		if x == nil {
			return append(b, "null"...), true
		}
		return appendString(b, *x), true
	case bool:
		return strconv.AppendBool(b, x), true
	case []string:
		return appendStrings(b, x), true
	case Address:
		for _, f := range [...]struct{ k, v string }{
			{`{"address1":`, x.Address1}, {`,"address2":`, x.Address2}, {`,"city":`, x.City},
			{`,"country":`, x.Country}, {`,"state":`, x.State}, {`,"zip":`, x.Zip},
		} {
			b = append(b, f.k...)
			b = appendString(b, f.v)
		}
		return append(b, '}'), true
	case UserName:
		b = append(b, `{"first_name":`...)
		b = appendString(b, x.FirstName)
		b = append(b, `,"last_name":`...)
		b = appendString(b, x.LastName)
		return append(b, '}'), true
	}
	return b, false
}

// marshalRecord is json.Marshal of a record pointer, without the re-scan.
func marshalRecord[T json.Marshaler](p T, isNil bool) ([]byte, error) {
	if isNil {
		return []byte("null"), nil
	}
	return p.MarshalJSON()
}

// appendList writes marshalList(s) of a non-nil s into buf, without a
// buffer of its own; on an error buf is as it was.
func appendList[T json.Marshaler](buf *bytes.Buffer, s []T) error {
	n := buf.Len()
	buf.WriteByte('[')
	for i, x := range s {
		if i > 0 {
			buf.WriteByte(',')
		}
		if any(x) == nil || reflect.ValueOf(x).Kind() == reflect.Pointer && reflect.ValueOf(x).IsNil() {
			buf.WriteString("null")
			continue
		}
		b, err := x.MarshalJSON()
		if err != nil {
			buf.Truncate(n)
			return err
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return nil
}

// marshalList is json.Marshal of a slice of records, without the re-scan.
func marshalList[T json.Marshaler](s []T) ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	if err := appendList(&buf, s); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (o *obj) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.n == 0 {
		return []byte("{}"), nil
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}

func (m *PaymentMethod) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("source", m.Source)
	o.add("id", m.ID)
	if m.Brand != nil {
		o.add("brand", *m.Brand)
	}
	if m.LastFour != nil {
		o.add("last_four", *m.LastFour)
	}
	if m.Balance != nil {
		o.add("balance", pyFloat(*m.Balance))
	}
	return o.bytes()
}

func (u *User) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("user_id", u.UserID)
	o.add("name", u.Name)
	o.add("address", u.Address)
	o.add("email", u.Email)
	var pm obj
	for _, m := range u.PaymentMethods {
		pm.add(m.ID, m)
	}
	b, err := pm.bytes()
	if err != nil {
		return nil, err
	}
	o.add("payment_methods", json.RawMessage(b))
	o.add("orders", nonNil(u.Orders))
	return o.bytes()
}

func (op Options) MarshalJSON() ([]byte, error) {
	var o obj
	for _, x := range op {
		o.add(x.Name, x.Value)
	}
	return o.bytes()
}

func (v *Variant) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("item_id", v.ItemID)
	o.add("options", v.Options)
	o.add("available", v.Available)
	o.add("price", pyFloat(v.Price))
	return o.bytes()
}

func (p *Product) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("name", p.Name)
	o.add("product_id", p.ProductID)
	var vs obj
	for _, v := range p.Variants {
		vs.add(v.ItemID, v)
	}
	b, err := vs.bytes()
	if err != nil {
		return nil, err
	}
	o.add("variants", json.RawMessage(b))
	return o.bytes()
}

func (it *OrderItem) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("name", it.Name)
	o.add("product_id", it.ProductID)
	o.add("item_id", it.ItemID)
	o.add("price", pyFloat(it.Price))
	o.add("options", it.Options)
	return o.bytes()
}

func (f Fulfillment) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("tracking_id", nonNil(f.TrackingID))
	o.add("item_ids", nonNil(f.ItemIDs))
	return o.bytes()
}

func (p Payment) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("transaction_type", p.TransactionType)
	o.add("amount", pyFloat(p.Amount))
	o.add("payment_method_id", p.PaymentMethodID)
	return o.bytes()
}

func (ord *Order) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("order_id", ord.OrderID)
	o.add("user_id", ord.UserID)
	o.add("address", ord.Address)
	o.add("items", nonNil(ord.Items))
	o.add("status", ord.Status)
	o.add("fulfillments", nonNil(ord.Fulfillments))
	o.add("payment_history", nonNil(ord.PaymentHistory))
	opt := func(key string, set bool, v any) {
		if set {
			o.add(key, v)
		} else if !ord.FileShape {
			o.add(key, nil)
		}
	}
	opt("cancel_reason", ord.CancelReason != nil, ord.CancelReason)
	opt("exchange_items", ord.ExchangeItems != nil, ord.ExchangeItems)
	opt("exchange_new_items", ord.ExchangeNewItems != nil, ord.ExchangeNewItems)
	opt("exchange_payment_method_id", ord.ExchangePaymentMethodID != nil, ord.ExchangePaymentMethodID)
	var diff any
	if ord.ExchangePriceDifference != nil {
		diff = pyFloat(*ord.ExchangePriceDifference)
	}
	opt("exchange_price_difference", ord.ExchangePriceDifference != nil, diff)
	opt("return_items", ord.ReturnItems != nil, ord.ReturnItems)
	opt("return_payment_method_id", ord.ReturnPaymentMethodID != nil, ord.ReturnPaymentMethodID)
	return o.bytes()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// pyFloat is a float64 written the way Python's repr (and so tau2's JSON)
// writes it: 198.0 rather than 198, exponent form only outside
// 1e-4 <= |x| < 1e16. Numerically the same value either way.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, fmt.Errorf("retail: %v is not a JSON number", x)
	}
	return []byte(PyRepr(x)), nil
}

// PyRepr formats a float like Python's repr (pyfloat.Repr).
func PyRepr(x float64) string { return pyfloat.Repr(x) }

// PyRound2 is Python's round(x, 2) on a float: the value correctly rounded
// to two decimals (ties to even on the exact binary value), as a float.
func PyRound2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// Cells reads one result row left to right, keeping the first error.
type Cells struct {
	r   []any
	i   int
	err error
}

func (c *Cells) next() any {
	if c.i >= len(c.r) {
		c.fail(fmt.Errorf("row has only %d columns", len(c.r)))
		return nil
	}
	v := c.r[c.i]
	c.i++
	return v
}

func (c *Cells) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

func (c *Cells) Str() string {
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

func (c *Cells) NullStr() *string {
	if c.i < len(c.r) && c.r[c.i] == nil {
		c.i++
		return nil
	}
	s := c.Str()
	return &s
}

func (c *Cells) Float() float64 {
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

func (c *Cells) NullFloat() *float64 {
	if c.i < len(c.r) && c.r[c.i] == nil {
		c.i++
		return nil
	}
	f := c.Float()
	return &f
}

func (c *Cells) Int() int64 {
	v := c.next()
	switch x := v.(type) {
	case int64:
		return x
	case int:
		return int64(x)
	case int8: // the host engine's TINYINT
		return int64(x)
	case int16:
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

func (c *Cells) Bool() bool {
	if c.i < len(c.r) {
		if b, ok := c.r[c.i].(bool); ok {
			c.i++
			return b
		}
	}
	return c.Int() != 0
}

// jsonValue is implemented by the host engine's JSON column values.
type jsonValue interface{ ToInterface() (any, error) }

// StrList reads a nullable JSON array of strings (a JSON column: its text
// in the guest, the engine's JSON value on the host).
func (c *Cells) StrList() []string {
	v := c.next()
	if j, ok := v.(jsonValue); ok { // the host engine's JSON column value
		var err error
		if v, err = j.ToInterface(); err != nil {
			c.fail(fmt.Errorf("column %d: %w", c.i-1, err))
			return nil
		}
	}
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

func (c *Cells) Check(table string) error {
	if c.err != nil {
		return fmt.Errorf("retail: %s: %w", table, c.err)
	}
	return nil
}

// --- readers ----------------------------------------------------------------

// Query runs a row-returning SQL statement with ? parameters and returns
// every row, each column as the driver's own value (string or []byte,
// int64, float64, bool, nil). The module's database handle (in the guest)
// and a core/state workspace (on the host) both provide one.
type Query func(ctx context.Context, stmt string, args ...any) ([][]any, error)

// Filter is an optional "WHERE col = ?" on one id (ID); All: no filter.
type Filter struct {
	All bool
	ID  string
}

// read is one statement of a reader: the SELECT, the column of the
// filter, the ORDER BY.
type read struct{ stmt, col, orderBy string }

// readSQL is a read with its two texts built once: keyed (WHERE col = ?)
// and all (every row).
type readSQL struct{ keyed, all string }

func reads(rs ...read) []readSQL {
	out := make([]readSQL, len(rs))
	for i, r := range rs {
		out[i] = readSQL{
			keyed: r.stmt + " WHERE " + r.col + " = ? ORDER BY " + r.orderBy,
			all:   r.stmt + " ORDER BY " + r.orderBy,
		}
	}
	return out
}

// statements are f's statements of a reader; the keyed ones share one
// argument list (read only).
func (f Filter) statements(rs []readSQL) []Statement {
	out := make([]Statement, len(rs))
	var args []any
	if !f.All {
		args = []any{f.ID}
	}
	for i, r := range rs {
		out[i].SQL, out[i].Args = r.keyed, args
		if f.All {
			out[i].SQL = r.all
		}
	}
	return out
}

// Statement is one statement of a Batch: SQL with ? placeholders bound to
// Args in order.
type Statement struct {
	SQL  string
	Args []any
}

// Batch runs statements in order and returns each one's rows (as Query
// does): the module's one host call per batch (weft_sql_v2), or Sequential
// over any Query.
type Batch func(ctx context.Context, stmts []Statement) ([][][]any, error)

// Sequential is the Batch of one Query call per statement.
func Sequential(q Query) Batch {
	return func(ctx context.Context, stmts []Statement) ([][][]any, error) {
		out := make([][][]any, len(stmts))
		for i, s := range stmts {
			rows, err := q(ctx, s.SQL, s.Args...)
			if err != nil {
				return nil, err
			}
			out[i] = rows
		}
		return out, nil
	}
}

// ReadUsers reads the users f selects (all, or the one with f.ID; none =
// nil, nil) in pos order, with their payment methods and order ids.
// Errors: q's, or a cell that does not decode ("retail: <table>: ...").
func ReadUsers(ctx context.Context, q Query, f Filter) ([]*User, error) {
	res, err := Sequential(q)(ctx, UserStatements(f))
	if err != nil {
		return nil, err
	}
	return AssembleUsers(f, res)
}

var userReads = reads(
	read{"SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users", "user_id", "pos"},
	read{"SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods", "user_id", "user_id, pos"},
	read{"SELECT user_id, order_id FROM user_orders", "user_id", "user_id, pos"},
)

// UserStatements are the 3 statements ReadUsers runs (users,
// payment_methods, user_orders), for AssembleUsers.
func UserStatements(f Filter) []Statement { return f.statements(userReads) }

// AssembleUsers builds ReadUsers' answer from the results of
// UserStatements(f), in order.
func AssembleUsers(f Filter, res [][][]any) ([]*User, error) {
	if len(res) != len(userReads) {
		return nil, fmt.Errorf("retail: users: %d results for %d statements", len(res), len(userReads))
	}
	rows := res[0]
	var users []*User
	at := map[string]*User{}
	for _, r := range rows {
		c := Cells{r: r}
		u := &User{UserID: c.Str(), Name: UserName{c.Str(), c.Str()}, Address: Address{c.Str(), c.Str(), c.Str(), c.Str(), c.Str(), c.Str()}, Email: c.Str(), Orders: []string{}}
		if err := c.Check("users"); err != nil {
			return nil, err
		}
		if !f.All && u.UserID != f.ID {
			continue // the collation matched more loosely than Python's ==
		}
		users = append(users, u)
		at[u.UserID] = u
	}
	if len(users) == 0 {
		return nil, nil
	}
	rows = res[1]
	for _, r := range rows {
		c := Cells{r: r}
		uid := c.Str()
		m := &PaymentMethod{ID: c.Str(), Source: c.Str(), Brand: c.NullStr(), LastFour: c.NullStr(), Balance: c.NullFloat()}
		if err := c.Check("payment_methods"); err != nil {
			return nil, err
		}
		if u := at[uid]; u != nil {
			u.PaymentMethods = append(u.PaymentMethods, m)
		}
	}
	rows = res[2]
	for _, r := range rows {
		c := Cells{r: r}
		uid, oid := c.Str(), c.Str()
		if err := c.Check("user_orders"); err != nil {
			return nil, err
		}
		if u := at[uid]; u != nil {
			u.Orders = append(u.Orders, oid)
		}
	}
	return users, nil
}

// ReadOrders reads the orders f selects (all, or the one with f.ID; none
// = nil, nil) in pos order, with their items and options, fulfillments
// and payment history. Errors as ReadUsers.
func ReadOrders(ctx context.Context, q Query, f Filter) ([]*Order, error) {
	res, err := Sequential(q)(ctx, OrderStatements(f))
	if err != nil {
		return nil, err
	}
	return AssembleOrders(f, res)
}

var orderReads = reads(
	read{"SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, " +
		"exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id FROM orders", "order_id", "pos"},
	read{"SELECT order_id, pos, item_id, product_id, name, price FROM order_items", "order_id", "order_id, pos"},
	read{"SELECT order_id, item_pos, name, value FROM order_item_options", "order_id", "order_id, item_pos, pos"},
	read{"SELECT order_id, pos FROM fulfillments", "order_id", "order_id, pos"},
	read{"SELECT order_id, fulfillment_pos, tracking_id FROM fulfillment_tracking_ids", "order_id", "order_id, fulfillment_pos, pos"},
	read{"SELECT order_id, fulfillment_pos, item_id FROM fulfillment_item_ids", "order_id", "order_id, fulfillment_pos, pos"},
	read{"SELECT order_id, transaction_type, amount, payment_method_id FROM payments", "order_id", "order_id, pos"},
)

// OrderStatements are the 7 statements ReadOrders runs (orders,
// order_items, order_item_options, fulfillments, fulfillment_tracking_ids,
// fulfillment_item_ids, payments), for AssembleOrders.
func OrderStatements(f Filter) []Statement { return f.statements(orderReads) }

// AssembleOrders builds ReadOrders' answer from the results of
// OrderStatements(f), in order.
func AssembleOrders(f Filter, res [][][]any) ([]*Order, error) {
	if len(res) != len(orderReads) {
		return nil, fmt.Errorf("retail: orders: %d results for %d statements", len(res), len(orderReads))
	}
	rows := res[0]
	var orders []*Order
	at := map[string]*Order{}
	for _, r := range rows {
		c := Cells{r: r}
		o := &Order{OrderID: c.Str(), UserID: c.Str(), Address: Address{c.Str(), c.Str(), c.Str(), c.Str(), c.Str(), c.Str()}, Status: c.Str(),
			CancelReason: c.NullStr(), ExchangeItems: c.StrList(), ExchangeNewItems: c.StrList(), ExchangePaymentMethodID: c.NullStr(),
			ExchangePriceDifference: c.NullFloat(), ReturnItems: c.StrList(), ReturnPaymentMethodID: c.NullStr()}
		if err := c.Check("orders"); err != nil {
			return nil, err
		}
		if !f.All && o.OrderID != f.ID {
			continue
		}
		orders = append(orders, o)
		at[o.OrderID] = o
	}
	if len(orders) == 0 {
		return nil, nil
	}

	type sub struct {
		Order string
		pos   int64
	}
	items := map[sub]*OrderItem{}
	rows = res[1]
	for _, r := range rows {
		c := Cells{r: r}
		oid, pos := c.Str(), c.Int()
		it := &OrderItem{ItemID: c.Str(), ProductID: c.Str(), Name: c.Str(), Price: c.Float(), Options: Options{}}
		if err := c.Check("order_items"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.Items = append(o.Items, it)
			items[sub{oid, pos}] = it
		}
	}
	rows = res[2]
	for _, r := range rows {
		c := Cells{r: r}
		oid, ipos := c.Str(), c.Int()
		op := Option{c.Str(), c.Str()}
		if err := c.Check("order_item_options"); err != nil {
			return nil, err
		}
		if it := items[sub{oid, ipos}]; it != nil {
			it.Options = append(it.Options, op)
		}
	}

	// Fulfillment positions, in order; pointers into the slices are taken
	// only once they stop growing.
	rows = res[3]
	var fulPos []sub
	for _, r := range rows {
		c := Cells{r: r}
		oid, pos := c.Str(), c.Int()
		if err := c.Check("fulfillments"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.Fulfillments = append(o.Fulfillments, Fulfillment{TrackingID: []string{}, ItemIDs: []string{}})
			fulPos = append(fulPos, sub{oid, pos})
		}
	}
	rank := map[sub]*Fulfillment{}
	n := map[string]int{}
	for _, k := range fulPos {
		rank[k] = &at[k.Order].Fulfillments[n[k.Order]]
		n[k.Order]++
	}
	for _, t := range []struct {
		rows [][]any
		list func(*Fulfillment) *[]string
	}{
		{res[4], func(f *Fulfillment) *[]string { return &f.TrackingID }},
		{res[5], func(f *Fulfillment) *[]string { return &f.ItemIDs }},
	} {
		for _, r := range t.rows {
			c := Cells{r: r}
			oid, fpos, val := c.Str(), c.Int(), c.Str()
			if err := c.Check("fulfillments"); err != nil {
				return nil, err
			}
			if fl := rank[sub{oid, fpos}]; fl != nil {
				l := t.list(fl)
				*l = append(*l, val)
			}
		}
	}

	rows = res[6]
	for _, r := range rows {
		c := Cells{r: r}
		oid := c.Str()
		p := Payment{TransactionType: c.Str(), Amount: c.Float(), PaymentMethodID: c.Str()}
		if err := c.Check("payments"); err != nil {
			return nil, err
		}
		if o := at[oid]; o != nil {
			o.PaymentHistory = append(o.PaymentHistory, p)
		}
	}
	return orders, nil
}

// ReadProducts reads the products f selects (all, or the one with f.ID;
// none = nil, nil) in pos order, with their variants and options. Errors
// as ReadUsers.
func ReadProducts(ctx context.Context, q Query, f Filter) ([]*Product, error) {
	res, err := Sequential(q)(ctx, ProductStatements(f))
	if err != nil {
		return nil, err
	}
	return AssembleProducts(f, res)
}

var productReads = reads(
	read{"SELECT product_id, name FROM products", "product_id", "pos"},
	read{"SELECT product_id, item_id, available, price FROM variants", "product_id", "product_id, pos"},
	read{"SELECT product_id, item_id, name, value FROM variant_options", "product_id", "product_id, item_id, pos"},
)

// ProductStatements are the 3 statements ReadProducts runs (products,
// variants, variant_options), for AssembleProducts.
func ProductStatements(f Filter) []Statement { return f.statements(productReads) }

// AssembleProducts builds ReadProducts' answer from the results of
// ProductStatements(f), in order.
func AssembleProducts(f Filter, res [][][]any) ([]*Product, error) {
	if len(res) != len(productReads) {
		return nil, fmt.Errorf("retail: products: %d results for %d statements", len(res), len(productReads))
	}
	rows := res[0]
	var products []*Product
	at := map[string]*Product{}
	for _, r := range rows {
		c := Cells{r: r}
		p := &Product{ProductID: c.Str(), Name: c.Str()}
		if err := c.Check("products"); err != nil {
			return nil, err
		}
		if !f.All && p.ProductID != f.ID {
			continue
		}
		products = append(products, p)
		at[p.ProductID] = p
	}
	if len(products) == 0 {
		return nil, nil
	}
	type key struct{ Product, item string }
	vars := map[key]*Variant{}
	rows = res[1]
	for _, r := range rows {
		c := Cells{r: r}
		pid := c.Str()
		v := &Variant{ItemID: c.Str(), Available: c.Bool(), Price: c.Float(), Options: Options{}}
		if err := c.Check("variants"); err != nil {
			return nil, err
		}
		if p := at[pid]; p != nil {
			p.Variants = append(p.Variants, v)
			vars[key{pid, v.ItemID}] = v
		}
	}
	rows = res[2]
	for _, r := range rows {
		c := Cells{r: r}
		pid, iid := c.Str(), c.Str()
		op := Option{c.Str(), c.Str()}
		if err := c.Check("variant_options"); err != nil {
			return nil, err
		}
		if v := vars[key{pid, iid}]; v != nil {
			v.Options = append(v.Options, op)
		}
	}
	return products, nil
}

// DBFile is the whole database in db.json's shape: products, users and
// orders, each an object keyed by id in position order; orders omit their
// unset optional keys, as the file does.
type DBFile struct {
	Products []*Product
	Users    []*User
	Orders   []*Order
}

func (d *DBFile) MarshalJSON() ([]byte, error) {
	var o obj
	var ps, us, os obj
	for _, p := range d.Products {
		ps.add(p.ProductID, p)
	}
	for _, u := range d.Users {
		us.add(u.UserID, u)
	}
	for _, x := range d.Orders {
		x.FileShape = true
		os.add(x.OrderID, x)
	}
	for _, m := range []struct {
		key string
		o   *obj
	}{{"products", &ps}, {"users", &us}, {"orders", &os}} {
		b, err := m.o.bytes()
		if err != nil {
			return nil, err
		}
		o.add(m.key, json.RawMessage(b))
	}
	return o.bytes()
}

// NewCells reads row (one result row of a Query) left to right.
func NewCells(row []any) *Cells { return &Cells{r: row} }

// JSONList is the value a retail writer binds to a JSON list column
// (orders.exchange_items, exchange_new_items, return_items): the list's
// JSON text, or nil (SQL NULL) for a nil list. An empty non-nil list is
// "[]".
func JSONList(s []string) any {
	if s == nil {
		return nil
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// Deref is the value bound for an optional field: *p, or nil (SQL NULL)
// when p is nil.
func Deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
