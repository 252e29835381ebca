package sqlitepeer

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/records"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

// The retail tools' statements (examples/modules/retail) run by the same Go
// code over each engine: weft's core/state (a unit of work on a fork, the
// fast path of decision 024) and SQLite (modernc.org/sqlite, pure Go, one
// file, synchronous=OFF as AWM runs it). Each call reads with the module's
// statements (records.OrderStatements, UserStatements, ProductStatements),
// assembles with the module's assembly code, writes the module's
// statements and encodes the answer as JSON.

const dbJSON = "../../examples/data/tau2-retail/db.json"

// engine is one SQL engine in a call.
type engine interface {
	query(ctx context.Context, q string, args ...any) ([][]any, error)
	exec(ctx context.Context, q string, args ...any) error
}

type weftUnit struct{ u *state.Unit }

func (w weftUnit) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	r, err := w.u.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return r.Values, nil
}

func (w weftUnit) exec(ctx context.Context, q string, args ...any) error {
	_, err := w.u.Exec(ctx, q, args...)
	return err
}

type sqliteTx struct{ tx *sql.Tx }

func (s sqliteTx) query(ctx context.Context, q string, args ...any) ([][]any, error) {
	rows, err := s.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}

func (s sqliteTx) exec(ctx context.Context, q string, args ...any) error {
	_, err := s.tx.ExecContext(ctx, q, args...)
	return err
}

func readOrder(ctx context.Context, e engine, id string) (*records.Order, error) {
	os, err := records.ReadOrders(ctx, e.query, records.Filter{ID: id})
	if err != nil || len(os) == 0 {
		return nil, errors.New("Order not found")
	}
	return os[0], nil
}

func readUser(ctx context.Context, e engine, id string) (*records.User, error) {
	us, err := records.ReadUsers(ctx, e.query, records.Filter{ID: id})
	if err != nil || len(us) == 0 {
		return nil, errors.New("User not found")
	}
	return us[0], nil
}

func saveOrder(ctx context.Context, e engine, o *records.Order) error {
	a := o.Address
	return e.exec(ctx, "UPDATE orders SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ?, status = ?, "+
		"cancel_reason = ?, exchange_items = ?, exchange_new_items = ?, exchange_payment_method_id = ?, exchange_price_difference = ?, "+
		"return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
		a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, o.Status, records.Deref(o.CancelReason), records.JSONList(o.ExchangeItems),
		records.JSONList(o.ExchangeNewItems), records.Deref(o.ExchangePaymentMethodID), records.Deref(o.ExchangePriceDifference), records.JSONList(o.ReturnItems),
		records.Deref(o.ReturnPaymentMethodID), o.OrderID)
}

func addPayment(ctx context.Context, e engine, o *records.Order, i int) error {
	p := o.PaymentHistory[i]
	return e.exec(ctx, "INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id) VALUES (?, ?, ?, ?, ?)",
		o.OrderID, i, p.TransactionType, p.Amount, p.PaymentMethodID)
}

func saveBalance(ctx context.Context, e engine, userID string, m *records.PaymentMethod) error {
	return e.exec(ctx, "UPDATE payment_methods SET balance = ? WHERE user_id = ? AND payment_method_id = ?", records.Deref(m.Balance), userID, m.ID)
}

func getOrderDetails(ctx context.Context, e engine, id string) ([]byte, error) {
	o, err := readOrder(ctx, e, id)
	if err != nil {
		return nil, err
	}
	return json.Marshal(o)
}

// cancelPendingOrder: the module's cancel_pending_order (13 statements).
func cancelPendingOrder(ctx context.Context, e engine, id string) ([]byte, error) {
	o, err := readOrder(ctx, e, id)
	if err != nil {
		return nil, err
	}
	if o.Status != "pending" {
		return nil, errors.New("Non-pending order cannot be cancelled")
	}
	u, err := readUser(ctx, e, o.UserID)
	if err != nil {
		return nil, err
	}
	n := len(o.PaymentHistory)
	var touched []*records.PaymentMethod
	for _, p := range o.PaymentHistory[:n] {
		o.PaymentHistory = append(o.PaymentHistory, records.Payment{TransactionType: "refund", Amount: p.Amount, PaymentMethodID: p.PaymentMethodID})
		m := u.Method(p.PaymentMethodID)
		if m == nil {
			return nil, errors.New("Payment method not found")
		}
		if m.IsGiftCard() {
			b := records.PyRound2(*m.Balance + p.Amount)
			m.Balance = &b
			touched = append(touched, m)
		}
	}
	reason := "no longer needed"
	o.Status, o.CancelReason = "cancelled", &reason
	for _, m := range touched {
		if err := saveBalance(ctx, e, u.UserID, m); err != nil {
			return nil, err
		}
	}
	if err := saveOrder(ctx, e, o); err != nil {
		return nil, err
	}
	for i := n; i < len(o.PaymentHistory); i++ {
		if err := addPayment(ctx, e, o, i); err != nil {
			return nil, err
		}
	}
	return json.Marshal(o)
}

// modifyPendingOrderItems: the module's modify_pending_order_items for one
// item (21 statements).
func modifyPendingOrderItems(ctx context.Context, e engine, id, oldItem, newItem, pm string) ([]byte, error) {
	o, err := readOrder(ctx, e, id)
	if err != nil {
		return nil, err
	}
	if o.Status != "pending" {
		return nil, errors.New("Non-pending order cannot be modified")
	}
	pos := -1
	for i, it := range o.Items {
		if it.ItemID == oldItem {
			pos = i
			break
		}
	}
	if pos < 0 {
		return nil, fmt.Errorf("Item %s not found", oldItem)
	}
	it := o.Items[pos]
	ps, err := records.ReadProducts(ctx, e.query, records.Filter{ID: it.ProductID})
	if err != nil || len(ps) == 0 {
		return nil, errors.New("Product not found")
	}
	var v *records.Variant
	for _, x := range ps[0].Variants {
		if x.ItemID == newItem {
			v = x
		}
	}
	if v == nil || !v.Available {
		return nil, errors.New("New item not available")
	}
	diff := v.Price - it.Price
	u, err := readUser(ctx, e, o.UserID)
	if err != nil {
		return nil, err
	}
	m := u.Method(pm)
	if m == nil {
		return nil, errors.New("Payment method not found")
	}
	kind := "refund"
	if diff > 0 {
		kind = "payment"
	}
	n := len(o.PaymentHistory)
	o.PaymentHistory = append(o.PaymentHistory, records.Payment{TransactionType: kind, Amount: math.Abs(diff), PaymentMethodID: pm})
	it.ItemID, it.Price, it.Options = newItem, v.Price, append(records.Options{}, v.Options...)
	o.Status = "pending (item modified)"
	if err := addPayment(ctx, e, o, n); err != nil {
		return nil, err
	}
	if m.IsGiftCard() {
		b := records.PyRound2(*m.Balance - diff)
		m.Balance = &b
		if err := saveBalance(ctx, e, u.UserID, m); err != nil {
			return nil, err
		}
	}
	if err := e.exec(ctx, "UPDATE order_items SET item_id = ?, product_id = ?, name = ?, price = ? WHERE order_id = ? AND pos = ?",
		it.ItemID, it.ProductID, it.Name, it.Price, o.OrderID, pos); err != nil {
		return nil, err
	}
	if err := e.exec(ctx, "DELETE FROM order_item_options WHERE order_id = ? AND item_pos = ?", o.OrderID, pos); err != nil {
		return nil, err
	}
	for k, op := range it.Options {
		if err := e.exec(ctx, "INSERT INTO order_item_options (order_id, item_pos, pos, name, value) VALUES (?, ?, ?, ?, ?)",
			o.OrderID, pos, k, op.Name, op.Value); err != nil {
			return nil, err
		}
	}
	if err := saveOrder(ctx, e, o); err != nil {
		return nil, err
	}
	return json.Marshal(o)
}

// --- the two engines, loaded with db.json ---------------------------------

var indexRE = regexp.MustCompile(`(?m)^\s*(UNIQUE )?INDEX (\w+) \(([^)]*)\),?\n`)

// sqliteDDL turns the retail schema.sql (MySQL dialect) into SQLite's:
// inline INDEX clauses become CREATE INDEX statements.
func sqliteDDL() string {
	var out []string
	var lines []string
	for _, l := range strings.Split(retaildb.DDL, "\n") {
		if t := strings.TrimSpace(l); !strings.HasPrefix(t, "--") {
			if i := strings.Index(l, "--"); i >= 0 {
				l = l[:i]
			}
			lines = append(lines, l)
		}
	}
	for _, stmt := range strings.Split(strings.Join(lines, "\n"), ";") {
		m := regexp.MustCompile(`CREATE TABLE (\w+)`).FindStringSubmatch(stmt)
		if m == nil {
			continue
		}
		var idx []string
		stmt = indexRE.ReplaceAllStringFunc(stmt, func(s string) string {
			p := indexRE.FindStringSubmatch(s)
			idx = append(idx, fmt.Sprintf("CREATE %sINDEX %s ON %s (%s)", p[1], p[2], m[1], p[3]))
			return ""
		})
		stmt = regexp.MustCompile(`,(\s*)\)\s*$`).ReplaceAllString(strings.TrimSpace(stmt), "$1)")
		out = append(out, stmt)
		out = append(out, idx...)
	}
	return strings.Join(out, ";\n")
}

type fixture struct {
	store *state.Store
	base  *state.Version
	file  string // the SQLite database of db.json
}

func setup(b *testing.B) *fixture {
	b.Helper()
	ctx := context.Background()
	f, err := os.Open(dbJSON)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	db, err := retaildb.Decode(f)
	if err != nil {
		b.Fatal(err)
	}
	fx := &fixture{store: state.NewStore()}
	if fx.base, err = retaildb.LoadDB(ctx, fx.store, db); err != nil {
		b.Fatal(err)
	}
	fx.file = filepath.Join(b.TempDir(), "retail.db")
	sdb := openSQLite(b, fx.file)
	defer sdb.Close()
	if _, err := sdb.Exec(sqliteDDL()); err != nil {
		b.Fatalf("schema: %v", err)
	}
	tx, _ := sdb.Begin()
	for _, t := range db.TableRows() {
		q := "INSERT INTO " + t.Table + " (" + strings.Join(t.Columns, ", ") + ") VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ") + ")"
		for _, r := range t.Rows {
			if _, err := tx.Exec(q, r...); err != nil {
				b.Fatalf("%s: %v", t.Table, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return fx
}

func openSQLite(b *testing.B, file string) *sql.DB {
	b.Helper()
	db, err := sql.Open("sqlite", file)
	if err != nil {
		b.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("PRAGMA synchronous=OFF; PRAGMA journal_mode=MEMORY"); err != nil {
		b.Fatal(err)
	}
	return db
}

func copyFile(b *testing.B, from, to string) {
	src, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		b.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		b.Fatal(err)
	}
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// call is one tool call on an engine.
type call func(ctx context.Context, e engine) ([]byte, error)

var (
	getCall    call = func(ctx context.Context, e engine) ([]byte, error) { return getOrderDetails(ctx, e, "#W2417020") }
	cancelCall call = func(ctx context.Context, e engine) ([]byte, error) { return cancelPendingOrder(ctx, e, "#W4776164") }
	modifyCall call = func(ctx context.Context, e engine) ([]byte, error) {
		return modifyPendingOrderItems(ctx, e, "#W4776164", "8349118980", "9647292434", "credit_card_9513926")
	}
)

// onWeft runs c in a unit of work of ws and commits it.
func onWeft(b *testing.B, ws *state.Workspace, c call) []byte {
	u, err := ws.Begin()
	if err != nil {
		b.Fatal(err)
	}
	out, err := c(context.Background(), weftUnit{u})
	if err != nil {
		b.Fatal(err)
	}
	if err := u.Commit(); err != nil {
		b.Fatal(err)
	}
	return out
}

// onSQLite runs c in a transaction of db and commits it.
func onSQLite(b *testing.B, db *sql.DB, c call) []byte {
	tx, err := db.Begin()
	if err != nil {
		b.Fatal(err)
	}
	out, err := c(context.Background(), sqliteTx{tx})
	if err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	return out
}

func report(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
}

// BenchmarkPeerCall: one tool call, each engine; writes on a fresh copy of
// the seed state per call (made outside the timed CPU). The answers of the
// two engines are checked equal first.
func BenchmarkPeerCall(b *testing.B) {
	fx := setup(b)
	for _, tc := range []struct {
		name  string
		c     call
		write bool
	}{{"get_order_details", getCall, false}, {"modify_pending_order_items", modifyCall, true}, {"cancel_pending_order", cancelCall, true}} {
		w := onWeft(b, fx.store.Fork(fx.base), tc.c)
		cp := filepath.Join(b.TempDir(), "check.db")
		copyFile(b, fx.file, cp)
		sdb := openSQLite(b, cp)
		s := onSQLite(b, sdb, tc.c)
		sdb.Close()
		if string(w) != string(s) {
			b.Fatalf("%s: weft and SQLite differ:\n%s\n%s", tc.name, w, s)
		}
		b.Run(tc.name+"/engine=weft", func(b *testing.B) {
			ws := fx.store.Fork(fx.base)
			b.ReportAllocs()
			var cpu time.Duration
			for b.Loop() {
				if tc.write {
					b.StopTimer()
					ws = fx.store.Fork(fx.base)
					b.StartTimer()
				}
				c0 := processCPU()
				onWeft(b, ws, tc.c)
				cpu += processCPU() - c0
			}
			report(b, cpu)
		})
		b.Run(tc.name+"/engine=sqlite", func(b *testing.B) {
			dir := b.TempDir()
			cp := filepath.Join(dir, "call.db")
			copyFile(b, fx.file, cp)
			db := openSQLite(b, cp)
			b.ReportAllocs()
			var cpu time.Duration
			n := 0
			for b.Loop() {
				if tc.write {
					b.StopTimer()
					db.Close()
					n++
					cp = filepath.Join(dir, fmt.Sprintf("call%d.db", n))
					copyFile(b, fx.file, cp)
					db = openSQLite(b, cp)
					b.StartTimer()
				}
				c0 := processCPU()
				onSQLite(b, db, tc.c)
				cpu += processCPU() - c0
			}
			db.Close()
			report(b, cpu)
		})
	}
}

// pendingOrders are the first pending orders of db.json other than the
// one the group's write modifies.
func pendingOrders(b *testing.B, fx *fixture, n int) []string {
	r, err := fx.store.Fork(fx.base).Query(context.Background(), "SELECT order_id FROM orders WHERE status = 'pending' AND order_id <> '#W4776164' ORDER BY pos LIMIT ?", n)
	if err != nil || len(r.Values) != n {
		b.Fatalf("pending orders: %v", err)
	}
	out := make([]string, n)
	for i, row := range r.Values {
		out[i] = row[0].(string)
	}
	return out
}

// BenchmarkPeerGRPOGroup: one GRPO group's environment work (G = 8): from
// the state after 5 writes (5 cancelled orders), 8 copies, each with one
// write (modify_pending_order_items). weft forks the version; SQLite copies
// the mid-episode file and opens each copy (AWM's approach). The CPU of
// reaching the mid-episode state is not counted.
func BenchmarkPeerGRPOGroup(b *testing.B) {
	fx := setup(b)
	ctx := context.Background()
	orders := pendingOrders(b, fx, 5)
	const G = 8
	// weft: the mid-episode version
	ws := fx.store.Fork(fx.base)
	for _, id := range orders {
		onWeft(b, ws, func(ctx context.Context, e engine) ([]byte, error) { return cancelPendingOrder(ctx, e, id) })
	}
	mid, err := ws.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	// SQLite: the mid-episode file
	dir := b.TempDir()
	midFile := filepath.Join(dir, "mid.db")
	copyFile(b, fx.file, midFile)
	db := openSQLite(b, midFile)
	for _, id := range orders {
		onSQLite(b, db, func(ctx context.Context, e engine) ([]byte, error) { return cancelPendingOrder(ctx, e, id) })
	}
	db.Close()
	_ = ctx

	b.Run("engine=weft", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		for b.Loop() {
			c0 := processCPU()
			for range G {
				onWeft(b, fx.store.Fork(mid), modifyCall)
			}
			cpu += processCPU() - c0
		}
		report(b, cpu)
	})
	b.Run("engine=sqlite", func(b *testing.B) {
		b.ReportAllocs()
		var cpu time.Duration
		n := 0
		for b.Loop() {
			c0 := processCPU()
			for range G {
				n++
				cp := filepath.Join(dir, fmt.Sprintf("g%d.db", n))
				copyFile(b, midFile, cp)
				db := openSQLite(b, cp)
				onSQLite(b, db, modifyCall)
				db.Close()
			}
			cpu += processCPU() - c0
			b.StopTimer()
			for k := n - G + 1; k <= n; k++ {
				os.Remove(filepath.Join(dir, fmt.Sprintf("g%d.db", k)))
			}
			b.StartTimer()
		}
		report(b, cpu)
	})
}
