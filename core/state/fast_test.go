package state

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fastDDL is a retail-like schema: composite primary keys read by prefix,
// a unique and a plain secondary index, a small table read in pos order.
const fastDDL = `
CREATE TABLE users (user_id VARCHAR(64) NOT NULL, pos INT NOT NULL, name VARCHAR(64) NOT NULL, zip VARCHAR(16) NOT NULL,
  PRIMARY KEY (user_id), INDEX users_zip (zip));
CREATE TABLE order_items (order_id VARCHAR(64) NOT NULL, pos INT NOT NULL, item_id VARCHAR(64) NOT NULL, price DOUBLE NOT NULL,
  note VARCHAR(16) NULL, PRIMARY KEY (order_id, pos));
CREATE TABLE variants (product_id VARCHAR(64) NOT NULL, item_id VARCHAR(64) NOT NULL, available BOOLEAN NOT NULL, price DOUBLE NOT NULL,
  PRIMARY KEY (product_id, item_id), UNIQUE INDEX variants_item (item_id));
CREATE TABLE secrets (id INT NOT NULL PRIMARY KEY, answer VARCHAR(16) NOT NULL);
CREATE TABLE tiny (id TINYINT NOT NULL PRIMARY KEY, v INT)`

func fastData() []TableRows {
	return []TableRows{
		{Table: "users", Columns: []string{"user_id", "pos", "name", "zip"}, Rows: [][]any{
			{"u3", 0, "ann", "10001"}, {"u1", 1, "bob", "20002"}, {"u2", 2, "cy", "10001"}, {"u0", 3, "di", "30003"}}},
		{Table: "order_items", Columns: []string{"order_id", "pos", "item_id", "price", "note"}, Rows: [][]any{
			{"#1", 0, "i1", 1.5, nil}, {"#1", 1, "i2", 2.25, "x"}, {"#1", 2, "i1", 1.5, nil}, {"#2", 0, "i3", 9.0, nil}, {"#3", 5, "i2", 2.25, "z"}}},
		{Table: "variants", Columns: []string{"product_id", "item_id", "available", "price"}, Rows: [][]any{
			{"p1", "i1", true, 1.5}, {"p1", "i2", false, 2.25}, {"p2", "i3", true, 9.0}}},
		{Table: "secrets", Columns: []string{"id", "answer"}, Rows: [][]any{{1, "42"}}},
		{Table: "tiny", Columns: []string{"id", "v"}, Rows: [][]any{{-128, 1}, {0, nil}, {127, 3}}},
	}
}

type fastCase struct {
	q    string
	args []any
	fast bool // expected to take the fast path
}

var fastCases = []fastCase{
	// Fast shapes.
	{"SELECT order_id, pos, item_id, price FROM order_items WHERE order_id = ? ORDER BY order_id, pos", []any{"#1"}, true},
	{"SELECT * FROM order_items WHERE order_id = ? ORDER BY pos", []any{"#1"}, true},
	{"SELECT item_id FROM order_items WHERE order_id = ? AND pos = ?", []any{"#1", int64(2)}, true},
	{"SELECT item_id FROM order_items WHERE pos = ? AND order_id = ?", []any{int64(1), "#1"}, true},
	{"SELECT item_id FROM order_items WHERE order_id = '#3'", nil, true},
	{"SELECT item_id, price FROM order_items WHERE order_id = ? ORDER BY price, pos", []any{"#1"}, true},
	{"SELECT note FROM order_items WHERE order_id = ? ORDER BY note", []any{"#1"}, true}, // NULLs first, stable
	{"SELECT * FROM order_items WHERE order_id = ?", []any{"#9"}, true},                  // no rows
	{"SELECT user_id, name FROM users WHERE zip = ? ORDER BY pos", []any{"10001"}, true},
	{"SELECT user_id, name FROM users ORDER BY pos", nil, true},
	{"SELECT user_id FROM users", nil, true},
	{"SELECT users.name FROM users WHERE users.user_id = ?", []any{"u2"}, true},
	{"SELECT product_id, item_id, available, price FROM variants WHERE item_id = ? ORDER BY product_id", []any{"i2"}, true},
	{"SELECT v FROM tiny WHERE id = ?", []any{int64(-128)}, true},
	{"SELECT v FROM tiny WHERE id = 127", nil, true},
	{"select user_id from users where user_id = ?", []any{"u1"}, true},
	// Left to the engine: other argument kinds, conversions, out-of-range
	// keys, DESC, LIMIT, functions, aliases, case, undeclared names.
	{"SELECT v FROM tiny WHERE id = ?", []any{int64(300)}, false},
	{"SELECT v FROM tiny WHERE id = ?", []any{"0"}, false},
	{"SELECT v FROM tiny WHERE id = ?", []any{2.5}, false},
	{"SELECT v FROM tiny WHERE id = ?", []any{nil}, false},
	{"SELECT item_id FROM order_items WHERE order_id = ?", []any{int64(1)}, false},
	{"SELECT item_id FROM order_items WHERE order_id = ? ORDER BY pos DESC", []any{"#1"}, false},
	{"SELECT item_id FROM order_items WHERE order_id = ? LIMIT 1", []any{"#1"}, false},
	{"SELECT item_id, NOW() FROM order_items WHERE order_id = ?", []any{"#1"}, false},
	{"SELECT item_id AS i FROM order_items WHERE order_id = ?", []any{"#1"}, false},
	{"SELECT ITEM_ID FROM order_items WHERE order_id = ?", []any{"#1"}, false},
	{"SELECT item_id FROM order_items WHERE item_id = ?", []any{"i1"}, false}, // no index on item_id
	{"SELECT item_id FROM order_items WHERE pos = ?", []any{int64(0)}, false}, // not a prefix
	{"SELECT nope FROM order_items WHERE order_id = ?", []any{"#1"}, false},
	{"SELECT * FROM nothere WHERE id = ?", []any{int64(1)}, false},
	{"SELECT item_id FROM order_items WHERE order_id = ?", nil, false},
	{"SELECT v FROM tiny WHERE id = 0; SELECT answer FROM secrets", nil, false},
	{"SELECT v FROM tiny WHERE id = 0 UNION SELECT id FROM secrets", nil, false},
	{"SELECT v FROM tiny WHERE id = 0 AND v = 1", nil, false}, // v is not a key column
	{"SELECT v FROM tiny WHERE id = 0 OR id = 127", nil, false},
	{"SELECT DISTINCT v FROM tiny", nil, false},
	{"SELECT v FROM tiny t WHERE t.id = 0", nil, false},
	{"SELECT v FROM weft.tiny WHERE id = 0", nil, false},
	{"SELECT `v` FROM tiny WHERE id = 0", nil, false},
	{"SELECT item_id FROM order_items WHERE order_id = ? AND pos = ?", []any{"#1", int64(0), int64(3)}, false},
}

// fastPair is one store with the fast path and one without, same data.
type fastPair struct {
	fast, slow     *Store
	fastWS, slowWS *Workspace
}

func newFastPair(t testing.TB) *fastPair { return newPair(t, fastDDL, fastData()...) }

// newPair loads ddl and data into two stores, the fast path on in one and
// off in the other, and forks a workspace of each; both close at cleanup.
func newPair(t testing.TB, ddl string, data ...TableRows) *fastPair {
	t.Helper()
	p := &fastPair{fast: NewStore(), slow: NewStore()}
	p.slow.SetFastPath(false)
	t.Cleanup(func() { p.fast.Close(); p.slow.Close() })
	for _, s := range []*Store{p.fast, p.slow} {
		v, err := s.Load(context.Background(), ddl, data...)
		if err != nil {
			t.Fatal(err)
		}
		if s == p.fast {
			p.fastWS = s.Fork(v)
		} else {
			p.slowWS = s.Fork(v)
		}
	}
	return p
}

// retailTables are the retail module's tables, its table policy's reads
// and writes.
var retailTables = []string{"users", "payment_methods", "user_orders", "orders", "order_items", "order_item_options", "fulfillments",
	"fulfillment_tracking_ids", "fulfillment_item_ids", "payments", "products", "variants", "variant_options"}

// newRetailPair is newPair over the retail schema (benchRetailSchema) with
// data, and a Sandbox maker under the retail module's table policy.
func newRetailPair(t testing.TB, data ...TableRows) (*fastPair, func() *Sandbox) {
	t.Helper()
	ddl, err := os.ReadFile(benchRetailSchema)
	if err != nil {
		t.Fatal(err)
	}
	return newPair(t, string(ddl), data...), func() *Sandbox { return &Sandbox{Tables: NewTablePolicy(retailTables, nil)} }
}

// errParts are err's text and, for a state *Error, its kind's text ("" for
// nil).
func errParts(err error) (kind, text string) {
	if err == nil {
		return "", ""
	}
	var e *Error
	if errors.As(err, &e) {
		kind = e.Kind.Error()
	}
	return kind, err.Error()
}

// sandboxed is ctx with sb attached (ctx itself for nil).
func sandboxed(sb *Sandbox) context.Context {
	if sb == nil {
		return context.Background()
	}
	return WithSandbox(context.Background(), sb)
}

// outcome is everything a statement leaves visible: rows, error kind and
// text, rows charged to the Sandbox, FOUND_ROWS() and ROW_COUNT() after.
type outcome struct {
	Rows            *Rows
	Kind            string
	Err             string
	RowsRead        int64
	Found, RowCount int64
}

func runOutcome(t *testing.T, ws *Workspace, sb *Sandbox, q string, args []any) outcome {
	t.Helper()
	var o outcome
	err := ws.Do(func(u *Unit) error {
		rows, err := u.Query(sandboxed(sb), q, args...)
		o.Rows = rows
		o.Kind, o.Err = errParts(err)
		info, err := u.Query(context.Background(), "SELECT FOUND_ROWS(), ROW_COUNT()")
		if err != nil {
			return err
		}
		o.Found, o.RowCount = info.Values[0][0].(int64), info.Values[0][1].(int64)
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if sb != nil {
		o.RowsRead = sb.RowsRead()
	}
	return o
}

// TestFastPathMatchesEngine runs every case on the fast path and on
// go-mysql-server, unsandboxed and under Sandboxes (a table policy, a row
// budget, a result budget), and requires the same outcome; the cases
// marked fast must have been answered on the fast path, the others not.
func TestFastPathMatchesEngine(t *testing.T) {
	p := newFastPair(t)
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	sandboxes := []struct {
		name string
		make func() *Sandbox
	}{
		{"none", func() *Sandbox { return nil }},
		{"open", func() *Sandbox { return &Sandbox{Now: now} }},
		{"policy", func() *Sandbox {
			return &Sandbox{Now: now, Tables: NewTablePolicy([]string{"order_items"}, []string{"users", "tiny"})}
		}},
		{"rows2", func() *Sandbox { return &Sandbox{Now: now, Limits: Limits{MaxRowsRead: 2}} }},
		{"bytes40", func() *Sandbox { return &Sandbox{Now: now, Limits: Limits{MaxResultBytes: 40}} }},
	}
	for _, sbc := range sandboxes {
		for i, c := range fastCases {
			t.Run(fmt.Sprintf("%s/%d", sbc.name, i), func(t *testing.T) {
				h0, _ := p.fast.FastPathStats()
				got := runOutcome(t, p.fastWS, sbc.make(), c.q, c.args)
				h1, _ := p.fast.FastPathStats()
				want := runOutcome(t, p.slowWS, sbc.make(), c.q, c.args)
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("%s %v: fast path differs from the engine (-engine +fast):\n%s", c.q, c.args, d)
				}
				// The statement itself is a hit or not; the FOUND_ROWS()
				// query after it never is.
				hit := h1-h0 == 1
				denied := sbc.name == "policy" && got.Kind == ErrDenied.Error()
				if hit != (c.fast && !denied) {
					t.Fatalf("%s %v: fast path hit %v, want %v (outcome %+v)", c.q, c.args, hit, c.fast && !denied, got)
				}
			})
		}
	}
	if hits, slow := p.slow.FastPathStats(); hits != 0 || slow == 0 {
		t.Fatalf("store with the fast path off: %d hits, %d engine statements", hits, slow)
	}
}

// TestFastPathPolicyDenied: a table outside the Sandbox's policy stays
// unreadable by keyed reads, with the engine's error, and the fast path is
// not taken for it.
func TestFastPathPolicyDenied(t *testing.T) {
	p := newFastPair(t)
	sb := &Sandbox{Tables: NewTablePolicy([]string{"order_items"}, nil)}
	ctx := WithSandbox(context.Background(), sb)
	h0, _ := p.fast.FastPathStats()
	_, err := p.fastWS.Query(ctx, "SELECT answer FROM secrets WHERE id = ?", int64(1))
	if !errors.Is(err, ErrDenied) {
		t.Fatalf("verifier-only table read: %v, want ErrDenied", err)
	}
	if h1, _ := p.fast.FastPathStats(); h1 != h0 {
		t.Fatalf("denied read counted as a fast-path hit")
	}
	if sb.RowsRead() != 0 {
		t.Fatalf("denied read charged %d rows", sb.RowsRead())
	}
	// The same statement unsandboxed (a verifier) is a hit and reads it.
	rows, err := p.fastWS.Query(context.Background(), "SELECT answer FROM secrets WHERE id = ?", int64(1))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]any{{"42"}}, rows.Values); d != "" {
		t.Fatal(d)
	}
	if h2, _ := p.fast.FastPathStats(); h2 != h0+1 {
		t.Fatalf("verifier read: hits %d, want %d", h2, h0+1)
	}
}

// TestFastPathSeesWrites: a cached plan reads the workspace's current
// trees, inside a unit and after a rollback.
func TestFastPathSeesWrites(t *testing.T) {
	p := newFastPair(t)
	ctx := context.Background()
	q := "SELECT item_id FROM order_items WHERE order_id = ? ORDER BY pos"
	read := func(u *Unit) [][]any {
		rows, err := u.Query(ctx, q, "#2")
		if err != nil {
			t.Fatal(err)
		}
		return rows.Values
	}
	u, err := p.fastWS.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]any{{"i3"}}, read(u)); d != "" {
		t.Fatal(d)
	}
	if _, err := u.Exec(ctx, "INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", "#2", int64(1), "i9", 1.0); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([][]any{{"i3"}, {"i9"}}, read(u)); d != "" {
		t.Fatal(d)
	}
	if err := u.Rollback(); err != nil {
		t.Fatal(err)
	}
	u, _ = p.fastWS.Begin()
	defer u.Rollback()
	if d := cmp.Diff([][]any{{"i3"}}, read(u)); d != "" {
		t.Fatal(d)
	}
}

// FuzzFastPathMatchesEngine feeds arbitrary statement texts with one
// argument (a string, or an integer when arg parses as one) to a store
// with the fast path and one without: every outcome (rows, error kind and
// text, rows charged, FOUND_ROWS(), ROW_COUNT()) must be the same, under a
// Sandbox whose policy leaves out a table.
func FuzzFastPathMatchesEngine(f *testing.F) {
	for _, c := range fastCases {
		arg := ""
		if len(c.args) > 0 {
			arg = fmt.Sprint(c.args[0])
		}
		f.Add(c.q, arg)
	}
	f.Add("SELECT answer FROM secrets WHERE id = ?", "1")
	f.Add("SELECT * FROM users WHERE user_id = ? ORDER BY name, pos", "u1")
	p := newFastPair(f)
	f.Fuzz(func(t *testing.T, q, arg string) {
		if !strings.HasPrefix(strings.ToUpper(strings.TrimSpace(q)), "SELECT") {
			return // writes and DDL would make the two stores' states drift
		}
		var args []any
		if strings.Count(q, "?") == 1 {
			if n, err := strconv.ParseInt(arg, 10, 64); err == nil {
				args = []any{n}
			} else {
				args = []any{arg}
			}
		}
		mk := func() *Sandbox {
			return &Sandbox{Tables: NewTablePolicy([]string{"order_items", "users", "variants", "tiny"}, nil), Limits: Limits{MaxRowsRead: 3}}
		}
		got := runOutcome(t, p.fastWS, mk(), q, args)
		want := runOutcome(t, p.slowWS, mk(), q, args)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s %v: fast path differs from the engine (-engine +fast):\n%s", q, args, d)
		}
	})
}

// retailSelects are the retail module's SELECT texts
// (examples/modules/retail/store.go and tools_read.go), each reader in its
// one-id form (filter{id}: "WHERE <col> = ? ORDER BY ...") and its all-rows
// form (filter{all}); the argument for the one-id form.
var retailSelects = []struct {
	q   string
	arg any
}{
	{"SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users WHERE user_id = ? ORDER BY pos", "user_1"},
	{"SELECT user_id, first_name, last_name, address1, address2, city, country, state, zip, email FROM users ORDER BY pos", nil},
	{"SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods WHERE user_id = ? ORDER BY user_id, pos", "user_1"},
	{"SELECT user_id, payment_method_id, source, brand, last_four, balance FROM payment_methods ORDER BY user_id, pos", nil},
	{"SELECT user_id, order_id FROM user_orders WHERE user_id = ? ORDER BY user_id, pos", "user_1"},
	{"SELECT user_id, order_id FROM user_orders ORDER BY user_id, pos", nil},
	{"SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, " +
		"exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id FROM orders ORDER BY pos", nil},
	{"SELECT order_id, pos, item_id, product_id, name, price FROM order_items ORDER BY order_id, pos", nil},
	{"SELECT order_id, item_pos, name, value FROM order_item_options ORDER BY order_id, item_pos, pos", nil},
	{"SELECT order_id, pos FROM fulfillments ORDER BY order_id, pos", nil},
	{"SELECT order_id, fulfillment_pos, tracking_id FROM fulfillment_tracking_ids ORDER BY order_id, fulfillment_pos, pos", nil},
	{"SELECT order_id, fulfillment_pos, item_id FROM fulfillment_item_ids ORDER BY order_id, fulfillment_pos, pos", nil},
	{"SELECT order_id, transaction_type, amount, payment_method_id FROM payments ORDER BY order_id, pos", nil},
	{"SELECT product_id, name FROM products WHERE product_id = ? ORDER BY pos", "p1"},
	{"SELECT product_id, name FROM products ORDER BY pos", nil},
	{"SELECT product_id, item_id, available, price FROM variants WHERE product_id = ? ORDER BY product_id, pos", "p1"},
	{"SELECT product_id, item_id, available, price FROM variants ORDER BY product_id, pos", nil},
	{"SELECT product_id, item_id, name, value FROM variant_options WHERE product_id = ? ORDER BY product_id, item_id, pos", "p1"},
	{"SELECT product_id, item_id, name, value FROM variant_options ORDER BY product_id, item_id, pos", nil},
	{"SELECT product_id, item_id, available, price FROM variants WHERE item_id = ? ORDER BY product_id", "i2"},
	{"SELECT name, value FROM variant_options WHERE product_id = ? AND item_id = ? ORDER BY pos", nil}, // two arguments, below
	{"SELECT user_id, email FROM users ORDER BY pos", nil},
	{"SELECT user_id, first_name, last_name, zip FROM users WHERE zip = ? ORDER BY pos", "78701"},
	{"SELECT name, product_id FROM products ORDER BY pos", nil},
}

// TestFastPathRetailStatements: every SELECT text of the retail module (the
// get_order_details ones are benchRetailOrderSQL) takes the fast path over
// the retail schema and answers as go-mysql-server does, under the
// module's table policy.
func TestFastPathRetailStatements(t *testing.T) {
	p, mk := newRetailPair(t, append(benchRetailData(20),
		TableRows{Table: "users", Columns: []string{"user_id", "pos", "first_name", "last_name", "address1", "address2", "city", "country", "state", "zip", "email"},
			Rows: [][]any{{"user_2", 0, "A", "B", "1 Main", "", "Austin", "USA", "TX", "78701", "a@x"}, {"user_1", 1, "C", "D", "2 Main", "", "Austin", "USA", "TX", "78701", "c@x"}}},
		TableRows{Table: "payment_methods", Columns: []string{"user_id", "payment_method_id", "pos", "source"},
			Rows: [][]any{{"user_1", "paypal_1", 1, "paypal"}, {"user_1", "credit_card_1", 0, "credit_card"}}},
		TableRows{Table: "user_orders", Columns: []string{"user_id", "pos", "order_id"}, Rows: [][]any{{"user_1", 0, "#W0000001"}, {"user_1", 1, "#W0000000"}}},
		TableRows{Table: "products", Columns: []string{"product_id", "pos", "name"}, Rows: [][]any{{"p2", 0, "Lamp"}, {"p1", 1, "Bottle"}}},
		TableRows{Table: "variants", Columns: []string{"product_id", "item_id", "pos", "available", "price"},
			Rows: [][]any{{"p1", "i2", 0, true, 2.5}, {"p1", "i1", 1, false, 3.0}, {"p2", "i3", 0, true, 9.0}}},
		TableRows{Table: "variant_options", Columns: []string{"product_id", "item_id", "pos", "name", "value"},
			Rows: [][]any{{"p1", "i2", 1, "size", "L"}, {"p1", "i2", 0, "color", "red"}}},
	)...)
	var cases []fastCase
	for _, c := range retailSelects {
		var args []any
		switch {
		case strings.Count(c.q, "?") == 2:
			args = []any{"p1", "i2"}
		case c.arg != nil:
			args = []any{c.arg}
		}
		cases = append(cases, fastCase{q: c.q, args: args, fast: true})
	}
	for _, q := range benchRetailOrderSQL {
		cases = append(cases, fastCase{q: q, args: []any{"#W0000003"}, fast: true})
	}
	_, slow0 := p.fast.FastPathStats()
	for _, c := range cases {
		h0, _ := p.fast.FastPathStats()
		got := runOutcome(t, p.fastWS, mk(), c.q, c.args)
		h1, _ := p.fast.FastPathStats()
		want := runOutcome(t, p.slowWS, mk(), c.q, c.args)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s %v: fast path differs from the engine (-engine +fast):\n%s", c.q, c.args, d)
		}
		if h1-h0 != 1 {
			t.Errorf("%s: not answered on the fast path", c.q)
		}
		if got.Rows == nil || len(got.Rows.Values) == 0 {
			t.Errorf("%s: no rows; the fixture should make every statement return some", c.q)
		}
	}
	hits, slow := p.fast.FastPathStats()
	// The FOUND_ROWS() query after each statement is the only engine work.
	if slow-slow0 != int64(len(cases)) {
		t.Errorf("engine statements %d, want %d (one FOUND_ROWS() per case)", slow-slow0, len(cases))
	}
	t.Logf("%d retail SELECT texts: %d on the fast path", len(cases), hits)
}
