package state

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeDDL adds to fastDDL a table with a JSON column, one with a literal
// default and one with AUTO_INCREMENT (both left to the engine).
const writeDDL = fastDDL + `;
CREATE TABLE docs (id INT NOT NULL PRIMARY KEY, body JSON NULL, score DOUBLE NULL, flag BOOLEAN NULL, label TEXT NULL);
CREATE TABLE defaults (id INT NOT NULL PRIMARY KEY, n INT NOT NULL DEFAULT 7, at DATETIME NULL);
CREATE TABLE counters (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT NULL)`

func writeData() []TableRows {
	return append(fastData(),
		TableRows{Table: "docs", Columns: []string{"id", "body", "score"}, Rows: [][]any{{1, `{"a": [1, 2]}`, 0.5}, {2, nil, nil}}},
		TableRows{Table: "defaults", Columns: []string{"id", "n"}, Rows: [][]any{{1, 1}}},
	)
}

func newWritePair(t testing.TB) *fastPair { return newPair(t, writeDDL, writeData()...) }

// writeOutcome is everything a write leaves visible: its Result, error kind
// and text, rows charged, FOUND_ROWS(), ROW_COUNT() and LAST_INSERT_ID()
// after, and the state's Hash.
type writeOutcome struct {
	Res                   Result
	Kind, Err             string
	RowsRead              int64
	Found, RowCount, Last int64
	Hash                  Hash
}

func runWrite(t testing.TB, ws *Workspace, sb *Sandbox, q string, args []any) writeOutcome {
	t.Helper()
	var o writeOutcome
	err := ws.Do(func(u *Unit) error {
		res, err := u.Exec(sandboxed(sb), q, args...)
		o.Res = res
		o.Kind, o.Err = errParts(err)
		info, err := u.Query(context.Background(), "SELECT FOUND_ROWS(), ROW_COUNT(), LAST_INSERT_ID()")
		if err != nil {
			return err
		}
		o.Found, o.RowCount = info.Values[0][0].(int64), info.Values[0][1].(int64)
		o.Last = int64(info.Values[0][2].(uint64))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	if sb != nil {
		o.RowsRead = sb.RowsRead()
	}
	o.Hash = ws.Hash()
	return o
}

// writeCases run in sequence: each sees the effects of the ones before.
var writeCases = []fastCase{
	// Fast shapes.
	{"UPDATE order_items SET price = ?, note = ? WHERE order_id = ? AND pos = ?", []any{3.5, "n", "#1", int64(1)}, true},
	{"UPDATE order_items SET price = ?, note = ? WHERE order_id = ? AND pos = ?", []any{3.5, "n", "#1", int64(1)}, true}, // unchanged: 0 affected
	{"UPDATE order_items SET note = ? WHERE order_id = ?", []any{"m", "#1"}, true},
	{"UPDATE order_items SET note = ? WHERE order_id = ?", []any{nil, "#1"}, true},
	{"UPDATE order_items SET note = 'lit', price = 4 WHERE order_id = '#3'", nil, true},
	{"UPDATE order_items SET price = ? WHERE order_id = ? AND pos = ?", []any{int64(7), "#2", int64(0)}, true},
	{"UPDATE order_items SET price = ? WHERE order_id = ? AND pos = ?", []any{1e21, "#2", int64(0)}, true},
	{"UPDATE order_items SET price = ? WHERE order_id = ? AND pos = ?", []any{0.1 + 0.2, "#2", int64(0)}, true},
	{"UPDATE order_items SET price = ? WHERE order_id = ?", []any{2.25, "#9"}, true}, // no rows
	{"UPDATE users SET zip = ?, name = ? WHERE user_id = ?", []any{"99999", "eve", "u1"}, true},
	{"UPDATE users SET user_id = ? WHERE user_id = ?", []any{"u9", "u0"}, true}, // the primary key moves
	{"UPDATE users SET pos = ? WHERE zip = ?", []any{int64(5), "10001"}, true},  // by a secondary index
	{"UPDATE variants SET available = ?, price = ? WHERE item_id = ?", []any{true, 1.25, "i2"}, true},
	{"UPDATE variants SET item_id = ? WHERE product_id = ? AND item_id = ?", []any{"i4", "p2", "i3"}, false}, // two indexes fit: the engine's choice
	{"UPDATE variants SET item_id = ? WHERE item_id = ?", []any{"i4", "i3"}, true},
	{"UPDATE tiny SET v = ? WHERE id = ?", []any{int64(-5), int64(0)}, true},
	{"UPDATE docs SET body = ?, score = ?, flag = ?, label = ? WHERE id = ?", []any{`{"b": null, "a": [true]}`, -2.5, false, "t", int64(2)}, true},
	{"UPDATE docs SET body = ? WHERE id = ?", []any{`{"a":[1,2]}`, int64(1)}, true}, // equal JSON: 0 affected
	{"update order_items set note = ? where order_id = ? and pos = ?", []any{"lc", "#1", int64(0)}, true},
	{"INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", []any{"#4", int64(0), "i9", 1.0}, true},
	{"INSERT INTO order_items (order_id, pos, item_id, price, note) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)",
		[]any{"#4", int64(1), "i9", 2.0, "a", "#4", int64(2), "i8", 3.0, nil}, true},
	{"INSERT INTO order_items VALUES (?, ?, ?, ?, ?)", []any{"#5", int64(0), "i1", 1.5, "all"}, true},
	{"INSERT INTO users (user_id, pos, name, zip) VALUES (?, ?, ?, ?)", []any{"u7", int64(9), "fay", "10001"}, true},
	{"INSERT INTO variants (product_id, item_id, available, price) VALUES (?, ?, ?, ?)", []any{"p3", "i5", int64(1), 5.0}, true},
	{"INSERT INTO docs (id, body) VALUES (?, ?)", []any{int64(3), `[1, "x", {"k": 2.5}]`}, true},
	{"INSERT INTO tiny (id, v) VALUES (5, 6)", nil, true},
	{"DELETE FROM order_items WHERE order_id = ? AND pos = ?", []any{"#4", int64(2)}, true},
	{"DELETE FROM order_items WHERE order_id = ?", []any{"#4"}, true},
	{"DELETE FROM users WHERE zip = ?", []any{"99999"}, true},
	{"DELETE FROM variants WHERE item_id = ?", []any{"i5"}, true},
	{"DELETE FROM order_items WHERE order_id = ?", []any{"#nothing"}, true},
	// Left to the engine: its errors (duplicate keys, NOT NULL, range,
	// length, kinds), functions, defaults, AUTO_INCREMENT, other shapes.
	{"UPDATE variants SET item_id = ? WHERE product_id = ? AND item_id = ?", []any{"i1", "p1", "i2"}, false}, // duplicate unique
	{"UPDATE users SET user_id = ? WHERE user_id = ?", []any{"u2", "u3"}, false},                             // duplicate primary key
	{"UPDATE order_items SET item_id = ? WHERE order_id = ?", []any{nil, "#1"}, false},                       // NOT NULL
	{"UPDATE order_items SET note = ? WHERE order_id = ?", []any{strings.Repeat("x", 17), "#1"}, false},      // too long
	{"UPDATE order_items SET price = ? WHERE order_id = ?", []any{"2.5", "#1"}, false},                       // a string for a DOUBLE
	{"UPDATE order_items SET note = ? WHERE order_id = ?", []any{int64(5), "#1"}, false},                     // an integer for a VARCHAR
	{"UPDATE order_items SET price = ? WHERE order_id = ?", []any{math.Copysign(0, -1), "#1"}, false},
	{"UPDATE tiny SET v = ? WHERE id = ?", []any{int64(1) << 40, int64(0)}, false}, // out of range
	{"UPDATE tiny SET v = ? WHERE id = ?", []any{int64(1), "0"}, false},            // key of another kind
	{"UPDATE docs SET body = ? WHERE id = ?", []any{`{not json`, int64(1)}, false},
	{"UPDATE order_items SET note = NOW() WHERE order_id = ?", []any{"#1"}, false},
	{"UPDATE order_items SET price = price + 1 WHERE order_id = ?", []any{"#1"}, false},
	{"UPDATE order_items SET note = ? WHERE item_id = ?", []any{"q", "i1"}, false}, // not an index
	{"UPDATE order_items SET note = ? WHERE order_id = ? LIMIT 1", []any{"q", "#1"}, false},
	{"UPDATE order_items SET note = ?", []any{"all"}, false},
	{"UPDATE order_items SET note = ? WHERE order_id = ? OR pos = ?", []any{"q", "#1", int64(0)}, false},
	{"INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", []any{"#1", int64(0), "i9", 1.0}, false}, // duplicate
	{"INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
		[]any{"#6", int64(0), "i9", 1.0, "#6", int64(0), "i9", 1.0}, false}, // duplicate within the statement: nothing stays
	{"INSERT INTO variants (product_id, item_id, available, price) VALUES (?, ?, ?, ?)", []any{"p9", "i1", true, 1.0}, false}, // duplicate unique
	{"INSERT INTO order_items (order_id, pos, price) VALUES (?, ?, ?)", []any{"#7", int64(0), 1.0}, false},                    // NOT NULL without default
	{"INSERT INTO defaults (id) VALUES (?)", []any{int64(2)}, false},                                                          // literal default
	{"INSERT INTO counters (v) VALUES (?)", []any{int64(1)}, false},                                                           // AUTO_INCREMENT
	{"INSERT INTO defaults (id, n, at) VALUES (?, ?, ?)", []any{int64(3), int64(1), "2024-01-01 00:00:00"}, false},            // DATETIME
	{"INSERT IGNORE INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", []any{"#1", int64(0), "i9", 1.0}, false},
	{"INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE price = 9",
		[]any{"#1", int64(0), "i9", 1.0}, false},
	{"REPLACE INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", []any{"#1", int64(0), "i9", 1.0}, false},
	{"INSERT INTO order_items (order_id, pos, item_id, price) SELECT order_id, pos + 10, item_id, price FROM order_items WHERE order_id = ?", []any{"#1"}, false},
	{"INSERT INTO order_items (order_id, pos, item_id, price) VALUES (?, ?, ?, ?)", []any{"#1", int64(0), "i9"}, false}, // argument count
	{"DELETE FROM order_items WHERE order_id = ? LIMIT 1", []any{"#1"}, false},
	{"DELETE FROM tiny", nil, false},
	{"DELETE FROM secrets WHERE id = ?", []any{int64(1)}, true}, // denied under the policy
}

// TestFastWriteMatchesEngine runs the write cases in sequence on the fast
// path and on go-mysql-server, unsandboxed and under Sandboxes (a table
// policy, a row budget), and requires the same outcome after every one —
// Result, error kind and text, rows charged, FOUND_ROWS(), ROW_COUNT(),
// LAST_INSERT_ID() and the state's Hash — and that exactly the cases
// marked fast were applied on the fast path.
func TestFastWriteMatchesEngine(t *testing.T) {
	now := func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	sandboxes := []struct {
		name string
		make func() *Sandbox
	}{
		{"none", func() *Sandbox { return nil }},
		{"open", func() *Sandbox { return &Sandbox{Now: now} }},
		{"policy", func() *Sandbox {
			return &Sandbox{Now: now, Tables: NewTablePolicy([]string{"order_items", "variants", "tiny", "docs", "defaults", "counters"}, []string{"users"})}
		}},
		{"rows1", func() *Sandbox { return &Sandbox{Now: now, Limits: Limits{MaxRowsRead: 1}} }},
	}
	for _, sbc := range sandboxes {
		p := newWritePair(t)
		for i, c := range writeCases {
			w0 := p.fast.FastWriteStats()
			got := runWrite(t, p.fastWS, sbc.make(), c.q, c.args)
			w1 := p.fast.FastWriteStats()
			want := runWrite(t, p.slowWS, sbc.make(), c.q, c.args)
			if d := cmp.Diff(want, got); d != "" {
				t.Fatalf("%s/%d %s %v: fast path differs from the engine (-engine +fast):\n%s", sbc.name, i, c.q, c.args, d)
			}
			// Under the policy users is read-only and secrets unreadable:
			// writes of them go to the engine, which refuses them (or
			// finds no row to refuse). A budget failure is the fast
			// path's own answer.
			wantHit := c.fast && got.Kind != ErrDenied.Error()
			if sbc.name == "policy" && (strings.Contains(c.q, " users ") || strings.Contains(c.q, " secrets ")) {
				wantHit = false
			}
			if hit := w1-w0 == 1; hit != wantHit && got.Kind != ErrResourceLimit.Error() {
				t.Fatalf("%s/%d %s %v: write fast path hit %v, want %v (outcome %+v)", sbc.name, i, c.q, c.args, hit, wantHit, got)
			}
		}
		// The tables themselves, not only their Hash.
		for _, tbl := range []string{"users", "order_items", "variants", "tiny", "docs"} {
			q := "SELECT * FROM " + tbl
			a, b := runOutcome(t, p.fastWS, nil, q, nil), runOutcome(t, p.slowWS, nil, q, nil)
			if d := cmp.Diff(b, a); d != "" {
				t.Fatalf("%s: %s differs (-engine +fast):\n%s", sbc.name, tbl, d)
			}
		}
	}
}

// TestFastWriteSecondaryIndexes: after fast-path writes every secondary
// index answers exactly the rows of the primary tree (the engine reads the
// index for these lookups; the fast path maintained it).
func TestFastWriteSecondaryIndexes(t *testing.T) {
	p := newWritePair(t)
	ctx := context.Background()
	steps := []struct {
		q    string
		args []any
	}{
		{"UPDATE users SET zip = ? WHERE user_id = ?", []any{"55555", "u3"}},
		{"INSERT INTO users (user_id, pos, name, zip) VALUES (?, ?, ?, ?)", []any{"u8", int64(8), "gus", "55555"}},
		{"DELETE FROM users WHERE user_id = ?", []any{"u2"}},
		{"UPDATE variants SET item_id = ? WHERE item_id = ?", []any{"i7", "i1"}},
	}
	for _, s := range steps {
		w0 := p.fast.FastWriteStats()
		if _, err := p.fastWS.Exec(ctx, s.q, s.args...); err != nil {
			t.Fatalf("%s: %v", s.q, err)
		}
		if p.fast.FastWriteStats() != w0+1 {
			t.Fatalf("%s: not applied on the fast path", s.q)
		}
	}
	p.fast.SetFastPath(false) // the engine's own index lookups
	for zip, want := range map[string]string{"55555": "[u3 u8]", "10001": "[]", "20002": "[u1]"} {
		rows, err := p.fastWS.Query(ctx, "SELECT user_id FROM users WHERE zip = ? ORDER BY user_id", zip)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rows.Values {
			got = append(got, r[0].(string))
		}
		if fmt.Sprint(got) != want && !(want == "[]" && len(got) == 0) {
			t.Errorf("zip %s: %v, want %s", zip, got, want)
		}
	}
	for item, want := range map[string]int{"i7": 1, "i1": 0, "i2": 1} {
		rows, err := p.fastWS.Query(ctx, "SELECT product_id FROM variants WHERE item_id = ?", item)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows.Values) != want {
			t.Errorf("item %s: %d rows, want %d", item, len(rows.Values), want)
		}
	}
	// The unique index still refuses a duplicate of the moved value.
	_, err := p.fastWS.Exec(ctx, "INSERT INTO variants (product_id, item_id, available, price) VALUES ('p5', 'i7', 1, 1.0)")
	if !errors.Is(err, ErrDuplicateKey) {
		t.Fatalf("duplicate of a moved unique value: %v, want ErrDuplicateKey", err)
	}
}

// FuzzFastWriteMatchesEngine feeds arbitrary statement texts with up to
// four arguments (integers where a field parses as one, floats, strings,
// NULL for "null") to a store with the fast path and one without, under a
// Sandbox with a table policy and a row budget: every outcome, and the
// state's Hash after it, must be the same. The two stores stay in step as
// long as they agree, so later inputs run on the states earlier ones left.
func FuzzFastWriteMatchesEngine(f *testing.F) {
	for _, c := range writeCases {
		parts := make([]string, len(c.args))
		for i, a := range c.args {
			if a == nil {
				parts[i] = "null"
			} else {
				parts[i] = fmt.Sprint(a)
			}
		}
		f.Add(c.q, strings.Join(parts, "|"))
	}
	p := newWritePair(f)
	f.Fuzz(func(t *testing.T, q, argText string) {
		var args []any
		if argText != "" {
			for _, s := range strings.SplitN(argText, "|", 5)[:min(4, strings.Count(argText, "|")+1)] {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					args = append(args, n)
				} else if x, err := strconv.ParseFloat(s, 64); err == nil && strings.Contains(s, ".") {
					args = append(args, x)
				} else if s == "null" {
					args = append(args, nil)
				} else {
					args = append(args, s)
				}
			}
		}
		switch strings.ToLower(firstWord(q)) {
		case "update", "insert", "delete", "select", "replace":
		default:
			return // DDL would make the stores' schemas differ in ways Hash does not compare
		}
		mk := func() *Sandbox {
			return &Sandbox{Tables: NewTablePolicy([]string{"order_items", "users", "variants", "tiny", "docs"}, nil), Limits: Limits{MaxRowsRead: 3}}
		}
		got := runWrite(t, p.fastWS, mk(), q, args)
		want := runWrite(t, p.slowWS, mk(), q, args)
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s %v: fast path differs from the engine (-engine +fast):\n%s", q, args, d)
		}
	})
}

// retailWrites are the retail module's write texts
// (examples/modules/retail/tools_write.go) with the argument kinds the
// module binds (strings, int64 positions, float64 money, JSON list text or
// NULL for optional fields).
var retailWrites = []fastCase{
	{"UPDATE orders SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ?, status = ?, " +
		"cancel_reason = ?, exchange_items = ?, exchange_new_items = ?, exchange_payment_method_id = ?, exchange_price_difference = ?, " +
		"return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
		[]any{"1 Main St", "Suite 2", "Austin", "USA", "TX", "78701", "exchange requested", nil, `["0000000003"]`, `["0000000009"]`,
			"credit_card_1", -12.5, nil, nil, "#W0000001"}, true},
	{"UPDATE orders SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ?, status = ?, " +
		"cancel_reason = ?, exchange_items = ?, exchange_new_items = ?, exchange_payment_method_id = ?, exchange_price_difference = ?, " +
		"return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
		[]any{"1 Main St", "Suite 2", "Austin", "USA", "TX", "78701", "cancelled", "no longer needed", nil, nil, nil, nil, nil, nil, "#W0000002"}, true},
	{"INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id) VALUES (?, ?, ?, ?, ?)",
		[]any{"#W0000002", int64(1), "refund", 78.0, "credit_card_1"}, true},
	{"UPDATE payment_methods SET balance = ? WHERE user_id = ? AND payment_method_id = ?", []any{41.25, "user_1", "gift_card_1"}, true},
	{"UPDATE order_items SET item_id = ?, product_id = ?, name = ?, price = ? WHERE order_id = ? AND pos = ?",
		[]any{"0000000099", "0000000000", "Water Bottle", 27.0, "#W0000001", int64(0)}, true},
	{"DELETE FROM order_item_options WHERE order_id = ? AND item_pos = ?", []any{"#W0000001", int64(0)}, true},
	{"INSERT INTO order_item_options (order_id, item_pos, pos, name, value) VALUES (?, ?, ?, ?, ?)",
		[]any{"#W0000001", int64(0), int64(0), "color", "red"}, true},
	{"UPDATE users SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ? WHERE user_id = ?",
		[]any{"9 Elm", "", "Boston", "USA", "MA", "02101", "user_1"}, true},
}

// TestFastWriteRetailStatements: every write text of the retail module
// takes the fast path over the retail schema, under the module's table
// policy, with the engine's outcome and Hash.
func TestFastWriteRetailStatements(t *testing.T) {
	p, mk := newRetailPair(t, append(benchRetailData(5),
		TableRows{Table: "users", Columns: []string{"user_id", "pos", "first_name", "last_name", "address1", "address2", "city", "country", "state", "zip", "email"},
			Rows: [][]any{{"user_1", 0, "C", "D", "2 Main", "", "Austin", "USA", "TX", "78701", "c@x"}}},
		TableRows{Table: "payment_methods", Columns: []string{"user_id", "payment_method_id", "pos", "source", "balance"},
			Rows: [][]any{{"user_1", "gift_card_1", 0, "gift_card", 100.0}}},
	)...)
	for _, c := range retailWrites {
		w0 := p.fast.FastWriteStats()
		got := runWrite(t, p.fastWS, mk(), c.q, c.args)
		w1 := p.fast.FastWriteStats()
		want := runWrite(t, p.slowWS, mk(), c.q, c.args)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s %v: fast path differs from the engine (-engine +fast):\n%s", c.q, c.args, d)
		}
		if w1-w0 != 1 {
			t.Errorf("%s: not applied on the fast path", c.q)
		}
		if got.Err != "" || got.Res.RowsAffected == 0 {
			t.Errorf("%s: %+v; the fixture should make every write change a row", c.q, got)
		}
	}
}
