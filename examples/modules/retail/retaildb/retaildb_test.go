package retaildb_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math/big"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/records"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

const (
	dbPath     = "../../../data/tau2-retail/db.json"
	oraclePath = "../../../data/tau2-retail/oracle/tasks-train.json"
)

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// parse decodes JSON into plain values with numbers as json.Number.
func parse(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// toJSONValue marshals v and parses it back into plain values.
func toJSONValue(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, b)
}

// numEqual compares JSON numbers by exact numeric value (12.0 == 12).
var numEqual = cmp.Comparer(func(a, b json.Number) bool {
	x, okx := new(big.Rat).SetString(string(a))
	y, oky := new(big.Rat).SetString(string(b))
	return okx && oky && x.Cmp(y) == 0
})

// shared is db.json loaded once for the whole test binary; versions are
// immutable, so tests fork it freely.
var shared struct {
	once sync.Once
	s    *state.Store
	v    *state.Version
	raw  []byte
	err  error
}

func load(t testing.TB) (*state.Store, *state.Version, []byte) {
	t.Helper()
	shared.once.Do(func() {
		shared.raw, shared.err = os.ReadFile(dbPath)
		if shared.err != nil {
			return
		}
		shared.s = state.NewStore()
		shared.v, shared.err = retaildb.Load(context.Background(), shared.s, bytes.NewReader(shared.raw))
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s, shared.v, shared.raw
}

func count(t *testing.T, ws *state.Workspace, table string) int64 {
	t.Helper()
	r, err := ws.Query(context.Background(), "SELECT COUNT(*) FROM "+table)
	if err != nil {
		t.Fatal(err)
	}
	return r.Values[0][0].(int64)
}

func TestLoadCountsAndRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, v, raw := load(t)
	ws := s.Fork(v)

	// Expected counts, computed from the file independently of the package.
	doc := parse(t, raw).(map[string]any)
	want := map[string]int64{}
	for _, u := range doc["users"].(map[string]any) {
		u := u.(map[string]any)
		want["payment_methods"] += int64(len(u["payment_methods"].(map[string]any)))
		want["user_orders"] += int64(len(u["orders"].([]any)))
	}
	for _, o := range doc["orders"].(map[string]any) {
		o := o.(map[string]any)
		for _, it := range o["items"].([]any) {
			want["order_items"]++
			want["order_item_options"] += int64(len(it.(map[string]any)["options"].(map[string]any)))
		}
		for _, f := range o["fulfillments"].([]any) {
			f := f.(map[string]any)
			want["fulfillments"]++
			want["fulfillment_tracking_ids"] += int64(len(f["tracking_id"].([]any)))
			want["fulfillment_item_ids"] += int64(len(f["item_ids"].([]any)))
		}
		want["payments"] += int64(len(o["payment_history"].([]any)))
	}
	for _, p := range doc["products"].(map[string]any) {
		for _, vr := range p.(map[string]any)["variants"].(map[string]any) {
			want["variants"]++
			want["variant_options"] += int64(len(vr.(map[string]any)["options"].(map[string]any)))
		}
	}
	want["users"], want["orders"], want["products"] = 500, 1000, 50
	// Spot values of the tau2 file, so the independent count is itself checked.
	for table, n := range map[string]int64{"order_items": 2978, "variants": 591, "payment_methods": 695, "payments": 1102, "fulfillments": 577} {
		if want[table] != n {
			t.Fatalf("db.json has %d %s, test expects %d", want[table], table, n)
		}
	}
	got := map[string]int64{}
	for _, table := range v.Tables() {
		got[table] = count(t, ws, table)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("row counts (-want +got):\n%s", d)
	}

	out, err := retaildb.Export(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(parse(t, raw), parse(t, out), numEqual); d != "" {
		t.Fatalf("export differs from db.json (-want +got):\n%s", d)
	}
	// Stronger than needed, and true for this file: same bytes.
	if !bytes.Equal(raw, out) {
		t.Errorf("export is semantically equal but not byte-identical to db.json (%d vs %d bytes)", len(out), len(raw))
	}

	// Key order of every object is kept, not only content.
	var first struct {
		Users json.RawMessage `json:"users"`
	}
	if err := json.Unmarshal(out, &first); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.Join(strings.Fields(string(first.Users)), ""), `{"noah_brown_6181":{"user_id":"noah_brown_6181"`) {
		t.Errorf("users do not start with the file's first user: %.80s", first.Users)
	}
}

func TestExportRecords(t *testing.T) {
	ctx := context.Background()
	s, v, raw := load(t)
	ws := s.Fork(v)
	doc := parse(t, raw).(map[string]any)
	optional := []string{"cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
		"exchange_price_difference", "return_items", "return_payment_method_id"}

	// The first and last order, two holding the same item twice (also in
	// their fulfillment's item_ids), a cancelled one.
	for _, id := range []string{"#W2611340", "#W5765741", "#W1840144", "#W4316152", "#W3220387"} {
		want, ok := doc["orders"].(map[string]any)[id].(map[string]any)
		if !ok {
			t.Fatalf("order %s not in db.json", id)
		}
		for _, k := range optional {
			want[k] = nil // tau2's record shape: every optional key, null
		}
		o, err := retaildb.ExportOrder(ctx, ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(any(want), toJSONValue(t, o), numEqual); d != "" {
			t.Errorf("ExportOrder(%s) (-want +got):\n%s", id, d)
		}
	}
	for _, id := range []string{"noah_brown_6181", "ethan_khan_3904", "emma_smith_8564", "aarav_davis_4756"} {
		u, err := retaildb.ExportUser(ctx, ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(doc["users"].(map[string]any)[id], toJSONValue(t, u), numEqual); d != "" {
			t.Errorf("ExportUser(%s) (-want +got):\n%s", id, d)
		}
	}
	for _, id := range []string{"9523456873", "6858788497"} {
		p, err := retaildb.ExportProduct(ctx, ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(doc["products"].(map[string]any)[id], toJSONValue(t, p), numEqual); d != "" {
			t.Errorf("ExportProduct(%s) (-want +got):\n%s", id, d)
		}
	}
	// Exact typed values of one product's first variant, in file order.
	p, err := retaildb.ExportProduct(ctx, ws, "9523456873")
	if err != nil {
		t.Fatal(err)
	}
	wantVar := &records.Variant{ItemID: "9612497925", Available: true, Price: 50.88, Options: records.Options{
		{Name: "color", Value: "blue"}, {Name: "size", Value: "M"}, {Name: "material", Value: "cotton"}, {Name: "style", Value: "crew neck"}}}
	if p.Name != "T-Shirt" || len(p.Variants) == 0 {
		t.Fatalf("product 9523456873 = %+v", p)
	}
	if d := cmp.Diff(wantVar, p.Variants[0]); d != "" {
		t.Errorf("first variant (-want +got):\n%s", d)
	}

	for name, f := range map[string]func() error{
		"user":    func() error { _, err := retaildb.ExportUser(ctx, ws, "nobody_1"); return err },
		"order":   func() error { _, err := retaildb.ExportOrder(ctx, ws, "#W0000000"); return err },
		"product": func() error { _, err := retaildb.ExportProduct(ctx, ws, "0"); return err },
	} {
		if err := f(); !errors.Is(err, retaildb.ErrNotFound) {
			t.Errorf("missing %s: err = %v, want ErrNotFound", name, err)
		}
	}
}

// TestCancelOrderMatchesOracle replays tau2's cancel_pending_order of
// oracle case task-69 as SQL and checks the per-record export against the
// oracle's final_changes and the state diff against the exact rows.
func TestCancelOrderMatchesOracle(t *testing.T) {
	ctx := context.Background()
	s, v0, _ := load(t)
	const orderID, userID, gift = "#W2417020", "emma_smith_8564", "gift_card_8541487"

	ws := s.Fork(v0)
	err := ws.Do(func(u *state.Unit) error {
		r, err := u.Query(ctx, "SELECT COUNT(*) FROM payments WHERE order_id = ?", orderID)
		if err != nil {
			return err
		}
		n := r.Values[0][0].(int64)
		if _, err := u.Exec(ctx, `INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id)
			SELECT order_id, pos + ?, 'refund', amount, payment_method_id FROM payments WHERE order_id = ? ORDER BY pos`, n, orderID); err != nil {
			return err
		}
		if _, err := u.Exec(ctx, `UPDATE payment_methods pm
			JOIN payments p ON p.payment_method_id = pm.payment_method_id AND p.order_id = ? AND p.transaction_type = 'refund'
			SET pm.balance = ROUND(pm.balance + p.amount, 2)
			WHERE pm.user_id = ? AND pm.source = 'gift_card'`, orderID, userID); err != nil {
			return err
		}
		_, err = u.Exec(ctx, "UPDATE orders SET status = 'cancelled', cancel_reason = ? WHERE order_id = ?", "no longer needed", orderID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v1, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}

	var oracle struct {
		Cases []struct {
			ID           string `json:"id"`
			FinalChanges struct {
				Users  map[string]json.RawMessage `json:"users"`
				Orders map[string]json.RawMessage `json:"orders"`
			} `json:"final_changes"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(readFile(t, oraclePath), &oracle); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, c := range oracle.Cases {
		if c.ID != "task-69" {
			continue
		}
		found = true
		if len(c.FinalChanges.Orders) != 1 || len(c.FinalChanges.Users) != 1 {
			t.Fatalf("task-69 changes %d orders and %d users, want 1 and 1", len(c.FinalChanges.Orders), len(c.FinalChanges.Users))
		}
		o, err := retaildb.ExportOrder(ctx, ws, orderID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(parse(t, c.FinalChanges.Orders[orderID]), toJSONValue(t, o), numEqual); d != "" {
			t.Errorf("order vs oracle (-want +got):\n%s", d)
		}
		u, err := retaildb.ExportUser(ctx, ws, userID)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(parse(t, c.FinalChanges.Users[userID]), toJSONValue(t, u), numEqual); d != "" {
			t.Errorf("user vs oracle (-want +got):\n%s", d)
		}
	}
	if !found {
		t.Fatal("oracle case task-69 not found")
	}

	got := state.Diff(v0, v1)
	want := &state.Changes{Tables: []state.TableDiff{
		{
			Table: "orders", Columns: orderColumns, PrimaryKey: []string{"order_id"},
			Changed: []state.RowChange{{Key: []any{orderID}, Columns: []state.ColumnChange{
				{Column: "status", Old: "pending", New: "cancelled"},
				{Column: "cancel_reason", Old: nil, New: "no longer needed"},
			}}},
		},
		{
			Table: "payment_methods", Columns: []string{"user_id", "payment_method_id", "pos", "source", "brand", "last_four", "balance"},
			PrimaryKey: []string{"user_id", "payment_method_id"},
			Changed: []state.RowChange{{Key: []any{userID, gift}, Columns: []state.ColumnChange{
				{Column: "balance", Old: 62.0, New: 2736.4},
			}}},
		},
		{
			Table: "payments", Columns: []string{"order_id", "pos", "transaction_type", "amount", "payment_method_id"},
			PrimaryKey: []string{"order_id", "pos"},
			Added:      []state.Row{{Key: []any{orderID, int64(1)}, Values: []any{orderID, int64(1), "refund", 2674.4, gift}}},
		},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Diff (-want +got):\n%s", d)
	}

	// The whole-file export shows the change in file shape: only the
	// optional key that is set appears.
	out, err := retaildb.Export(ctx, v1)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Orders map[string]map[string]any `json:"orders"`
	}
	if err := json.Unmarshal(out, &file); err != nil {
		t.Fatal(err)
	}
	o := file.Orders[orderID]
	if o["status"] != "cancelled" || o["cancel_reason"] != "no longer needed" || len(o) != 8 {
		t.Errorf("exported order %s = %v; want status cancelled, cancel_reason set, 8 keys", orderID, o)
	}
	if _, ok := o["return_items"]; ok {
		t.Errorf("exported order has an unset optional key: %v", o)
	}
	// And it loads back to the same state.
	s2 := state.NewStore()
	defer s2.Close()
	v2, err := retaildb.Load(ctx, s2, bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Hash() != v1.Hash() {
		t.Errorf("Load(Export(v1)) hash %s != v1 hash %s", v2.Hash(), v1.Hash())
	}
}

// TestOracleRecordsRoundTrip loads every record the reference tools
// produced in the oracle files (final_changes: orders after cancel, exchange,
// return and item changes, with float artefacts such as
// 0.04999999999999716; users with new gift card balances) and checks that
// each exports back exactly, in tau2's record shape.
func TestOracleRecordsRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, _, raw := load(t)
	db, err := retaildb.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	orderAt, userAt := map[string]int{}, map[string]int{}
	for i, o := range db.Orders {
		orderAt[o.OrderID] = i
	}
	for i, u := range db.Users {
		userAt[u.UserID] = i
	}
	wantOrders, wantUsers := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for _, path := range []string{oraclePath, "../../../data/tau2-retail/oracle/fuzz-public.json"} {
		var oracle struct {
			Cases []struct {
				FinalChanges struct {
					Users  map[string]json.RawMessage `json:"users"`
					Orders map[string]json.RawMessage `json:"orders"`
				} `json:"final_changes"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(readFile(t, path), &oracle); err != nil {
			t.Fatal(err)
		}
		for _, c := range oracle.Cases {
			for id, rec := range c.FinalChanges.Orders {
				if _, dup := wantOrders[id]; dup {
					continue // first version of each record only
				}
				wantOrders[id] = rec
				var o retaildb.Order
				if err := json.Unmarshal(rec, &o); err != nil {
					t.Fatalf("order %s: %v", id, err)
				}
				db.Orders[orderAt[id]] = o
			}
			for id, rec := range c.FinalChanges.Users {
				if _, dup := wantUsers[id]; dup {
					continue
				}
				wantUsers[id] = rec
				var u retaildb.User
				if err := json.Unmarshal(rec, &u); err != nil {
					t.Fatalf("user %s: %v", id, err)
				}
				db.Users[userAt[id]] = u
			}
		}
	}
	if len(wantOrders) < 150 || len(wantUsers) < 50 {
		t.Fatalf("only %d orders and %d users in the oracle files", len(wantOrders), len(wantUsers))
	}
	s := state.NewStore()
	defer s.Close()
	v, err := retaildb.LoadDB(ctx, s, db)
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Fork(v)
	got, err := retaildb.ExportDB(ctx, ws)
	if err != nil {
		t.Fatal(err)
	}
	statuses := map[string]int{}
	for _, o := range got.Orders {
		want, ok := wantOrders[o.OrderID]
		if !ok {
			continue
		}
		statuses[o.Status]++
		if d := cmp.Diff(parse(t, want), toJSONValue(t, o), numEqual); d != "" {
			t.Errorf("order %s (-oracle +export):\n%s", o.OrderID, d)
		}
	}
	for _, u := range got.Users {
		if want, ok := wantUsers[u.UserID]; ok {
			if d := cmp.Diff(parse(t, want), toJSONValue(t, u), numEqual); d != "" {
				t.Errorf("user %s (-oracle +export):\n%s", u.UserID, d)
			}
		}
	}
	for _, st := range []string{"cancelled", "exchange requested", "return requested", "pending (item modified)"} {
		if statuses[st] == 0 {
			t.Errorf("no oracle order with status %q was checked", st)
		}
	}
	// The per-record path agrees, e.g. on an exchange with a float artefact.
	for _, id := range slices.Sorted(maps.Keys(wantOrders)) {
		o, err := retaildb.ExportOrder(ctx, ws, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(parse(t, wantOrders[id]), toJSONValue(t, o), numEqual); d != "" {
			t.Errorf("ExportOrder(%s) (-oracle +export):\n%s", id, d)
		}
		if o.ExchangeItems != nil {
			break
		}
	}
	o, err := retaildb.ExportOrder(ctx, ws, "#W4776164")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(o.PaymentHistory); n < 2 || o.PaymentHistory[n-1].Amount != 0.04999999999999716 {
		t.Errorf("#W4776164 payment history = %+v, want last amount 0.04999999999999716", o.PaymentHistory)
	}
}

var orderColumns = []string{"order_id", "pos", "user_id", "address1", "address2", "city", "country", "state", "zip", "status",
	"cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id", "exchange_price_difference",
	"return_items", "return_payment_method_id"}

func TestHashes(t *testing.T) {
	ctx := context.Background()
	s, v, raw := load(t)

	// state's own JSON export/import keeps the hash.
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		t.Fatal(err)
	}
	vi, err := s.Import(ctx, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if vi.Hash() != v.Hash() {
		t.Errorf("Import(Export(v)).Hash() = %s, want %s", vi.Hash(), v.Hash())
	}
	if d := state.Diff(v, vi); !d.Empty() {
		t.Errorf("Diff(v, Import(Export(v))) has %d changes", d.Count())
	}

	// A fresh Load in another store hashes the same, and so does a Load of
	// retaildb's own export.
	s2 := state.NewStore()
	defer s2.Close()
	v2, err := retaildb.Load(ctx, s2, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	out, err := retaildb.Export(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	v3, err := retaildb.Load(ctx, s2, bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if v2.Hash() != v.Hash() || v3.Hash() != v.Hash() {
		t.Errorf("hashes differ: load %s, reload %s, export-load %s", v.Hash(), v2.Hash(), v3.Hash())
	}
	// A one-cent change changes the hash.
	ws := s.Fork(v)
	if _, err := ws.Exec(ctx, "UPDATE variants SET price = price + 0.01 WHERE item_id = ?", "9612497925"); err != nil {
		t.Fatal(err)
	}
	if ws.Hash() == v.Hash() {
		t.Error("hash unchanged after a price update")
	}
}

func TestDecodeRejectsLossyInput(t *testing.T) {
	ctx := context.Background()
	s := state.NewStore()
	defer s.Close()
	const pm = `{"source":"paypal","id":"paypal_1"}`
	user := func(extra string) string {
		return `{"user_id":"u1","name":{"first_name":"A","last_name":"B"},"address":{"address1":"1","address2":"","city":"c","country":"US","state":"NY","zip":"1"},"email":"e","payment_methods":{"paypal_1":` + pm + `},"orders":[]` + extra + `}`
	}
	ok := `{"products":{},"users":{"u1":` + user("") + `},"orders":{}}`
	v, err := retaildb.Load(ctx, s, strings.NewReader(ok))
	if err != nil {
		t.Fatalf("valid input: %v", err)
	}
	if n, _ := v.RowCount("users"); n != 1 {
		t.Errorf("users = %d, want 1", n)
	}
	for _, c := range []struct{ name, in, wantErr string }{
		{"unknown user key", `{"products":{},"users":{"u1":` + user(`,"phone":"1"`) + `},"orders":{}}`, `"users": "u1": "phone": unknown key`},
		{"map key is not id", `{"products":{},"users":{"u2":` + user("") + `},"orders":{}}`, `"users": "u2": key holds a record with id "u1"`},
		{"missing top key", `{"products":{},"users":{}}`, `missing key "orders"`},
		{"unknown top key", `{"products":{},"users":{},"orders":{},"x":{}}`, `"x": unknown key`},
		{"duplicate key", `{"products":{},"users":{"u1":` + user("") + `,"u1":` + user("") + `},"orders":{}}`, `duplicate key "u1"`},
		{"missing product key", `{"products":{"p":{"product_id":"p","variants":{}}},"users":{},"orders":{}}`, `"p": missing key "name"`},
		{"non-string option", `{"products":{"p":{"name":"n","product_id":"p","variants":{"i":{"item_id":"i","options":{"a":1},"available":true,"price":1}}}},"users":{},"orders":{}}`,
			`"options": "a": want a string, got float64 1`},
		{"trailing data", ok + `{}`, "data after the JSON value"},
	} {
		_, err := retaildb.Load(ctx, s, strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: err = %v, want one containing %q", c.name, err, c.wantErr)
		}
	}
}

func BenchmarkLoadRetail(b *testing.B) {
	raw := readFile(b, dbPath)
	ctx := context.Background()
	s := state.NewStore()
	defer s.Close()
	b.Run("total", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := retaildb.Load(ctx, s, bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := retaildb.Decode(bytes.NewReader(raw)); err != nil {
				b.Fatal(err)
			}
		}
	})
	db, err := retaildb.Decode(bytes.NewReader(raw))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("state", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := retaildb.LoadDB(ctx, s, db); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFloatFormat checks that money is written like Python's repr (what
// tau2's json.dump writes), which keeps Export byte-identical to db.json.
func TestFloatFormat(t *testing.T) {
	for x, want := range map[float64]string{
		198.0: "198.0", 0.04999999999999716: "0.04999999999999716", 1e-05: "1e-05", 0.0001: "0.0001",
		1e16: "1e+16", 9999999999999998.0: "9999999999999998.0", 123456789012345678.0: "1.2345678901234568e+17",
		-0.6: "-0.6", 0: "0.0", 71.96000000000001: "71.96000000000001", 2736.4: "2736.4", 1.5e-7: "1.5e-07", 1e22: "1e+22",
	} {
		b, err := json.Marshal(records.Payment{TransactionType: "payment", Amount: x, PaymentMethodID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		if got, w := string(b), `{"transaction_type":"payment","amount":`+want+`,"payment_method_id":"p"}`; got != w {
			t.Errorf("%v: got %s, want %s", x, got, w)
		}
	}
}
