package state

// Benchmarks for core/state against go-mysql-server's own `memory` backend,
// run in the same process so that results are read as ratios. See
// docs/benchmarks.md for the command, the results and what each memory
// baseline measures.
//
// Fixture at rows=N (identical schema and rows on both backends):
//
//	users  N rows (id PK)
//	orders N rows (id PK, user_id indexed; users 0..N/4-1 have 4 orders each)
//	items  N rows (id PK, order_id indexed; orders 0..N/4-1 have 4 items each)
//
// so the three-table join for a user u < N/16 returns 16 rows. Single-table
// operations (update, insert, lookup, hash, diff) work on orders.
//
// go-mysql-server's memory backend keeps rows and secondary indexes in
// unsorted slices and re-sorts them on every statement; with secondary
// indexes its inserts are quadratic (loading 10k rows takes seconds, 30k rows
// minutes), so it runs at 1k and 10k rows only and its sub-benchmarks at 100k
// are skipped with a message. Memory has no fork, snapshot or restore: its
// baseline for those is copying every table's row slice (see benchMemCopy).

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

var benchSizes = []int{1000, 10000, 100000}

// benchMemMaxRows is the largest size the memory backend is loaded at.
const benchMemMaxRows = 10000

const benchDDL = `
CREATE TABLE users (
  id BIGINT PRIMARY KEY,
  name VARCHAR(64) NOT NULL,
  email VARCHAR(128) NOT NULL,
  balance DECIMAL(12,2) NOT NULL
);
CREATE TABLE orders (
  id BIGINT PRIMARY KEY,
  user_id BIGINT NOT NULL,
  status VARCHAR(16) NOT NULL,
  total DECIMAL(12,2) NOT NULL,
  KEY idx_orders_user (user_id)
);
CREATE TABLE items (
  id BIGINT PRIMARY KEY,
  order_id BIGINT NOT NULL,
  sku VARCHAR(32) NOT NULL,
  qty INT NOT NULL,
  price DECIMAL(10,2) NOT NULL,
  KEY idx_items_order (order_id)
)`

var benchMemDDL = []string{
	"CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128) NOT NULL, balance DECIMAL(12,2) NOT NULL)",
	"CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, status VARCHAR(16) NOT NULL, total DECIMAL(12,2) NOT NULL, KEY idx_orders_user (user_id))",
	"CREATE TABLE items (id BIGINT PRIMARY KEY, order_id BIGINT NOT NULL, sku VARCHAR(32) NOT NULL, qty INT NOT NULL, price DECIMAL(10,2) NOT NULL, KEY idx_items_order (order_id))",
}

var benchTables = []string{"users", "orders", "items"}

const (
	benchUpdateSQL = "UPDATE orders SET status = ?, total = ? WHERE id = ?"
	benchInsertSQL = "INSERT INTO orders (id, user_id, status, total) VALUES (?, ?, ?, ?)"
	benchLookupSQL = "SELECT id, user_id, status, total FROM orders WHERE id = ?"
	benchJoinSQL   = "SELECT u.name, o.id, o.total, i.sku, i.qty, i.price FROM users u JOIN orders o ON o.user_id = u.id JOIN items i ON i.order_id = o.id WHERE u.id = ?"
)

var benchStatuses = []string{"new", "paid", "shipped", "delivered", "cancelled"}

func benchCents(x int) string { return fmt.Sprintf("%d.%02d", x/100, x%100) }

// benchRows returns the fixture rows as weft bulk data and as memory rows.
func benchRows(n int) ([]TableRows, map[string][]sql.Row) {
	users := TableRows{Table: "users", Columns: []string{"id", "name", "email", "balance"}}
	orders := TableRows{Table: "orders", Columns: []string{"id", "user_id", "status", "total"}}
	items := TableRows{Table: "items", Columns: []string{"id", "order_id", "sku", "qty", "price"}}
	mem := map[string][]sql.Row{}
	dec := func(s string) decimal.Decimal { return decimal.RequireFromString(s) }
	for i := 0; i < n; i++ {
		name, email, bal := fmt.Sprintf("user %d", i), fmt.Sprintf("user%d@example.com", i), benchCents(i*37%1000000)
		users.Rows = append(users.Rows, []any{int64(i), name, email, bal})
		mem["users"] = append(mem["users"], sql.Row{int64(i), name, email, dec(bal)})

		st, tot := benchStatuses[i%len(benchStatuses)], benchCents(i*91%100000)
		orders.Rows = append(orders.Rows, []any{int64(i), int64(i / 4), st, tot})
		mem["orders"] = append(mem["orders"], sql.Row{int64(i), int64(i / 4), st, dec(tot)})

		sku, qty, price := "SKU-"+strconv.Itoa(i%5000), int32(1+i%7), benchCents(100+i*13%20000)
		items.Rows = append(items.Rows, []any{int64(i), int64(i / 4), sku, qty, price})
		mem["items"] = append(mem["items"], sql.Row{int64(i), int64(i / 4), sku, qty, dec(price)})
	}
	return []TableRows{users, orders, items}, mem
}

// ---- fixtures (built once per size, shared by all benchmarks) ----

type benchWeft struct {
	store *Store
	base  *Version
}

type benchMem struct {
	engine *sqle.Engine
	db     *memory.Database
	sess   *memory.Session
}

var (
	benchMu       sync.Mutex
	benchWeftFix  = map[int]*benchWeft{}
	benchMemFix   = map[int]*benchMem{}
	benchMemRowsF = map[int]map[string][]sql.Row{}
)

func benchGetWeft(b *testing.B, n int) *benchWeft {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if f, ok := benchWeftFix[n]; ok {
		return f
	}
	data, mem := benchRows(n)
	benchMemRowsF[n] = mem
	s := NewStore()
	v, err := s.Load(context.Background(), benchDDL, data...)
	if err != nil {
		b.Fatal(err)
	}
	f := &benchWeft{store: s, base: v}
	benchWeftFix[n] = f
	return f
}

func benchGetMem(b *testing.B, n int) *benchMem {
	b.Helper()
	if n > benchMemMaxRows {
		b.Skipf("memory backend not run at %d rows: its inserts with secondary indexes are quadratic (setup alone would take tens of minutes)", n)
	}
	benchGetWeft(b, n) // builds the row data
	benchMu.Lock()
	defer benchMu.Unlock()
	if f, ok := benchMemFix[n]; ok {
		return f
	}
	db := memory.NewDatabase(dbName)
	db.EnablePrimaryKeyIndexes()
	pro := memory.NewDBProvider(db)
	bs := sql.NewBaseSession()
	bs.SetCurrentDatabase(dbName)
	m := &benchMem{engine: sqle.NewDefault(pro), db: db, sess: memory.NewSession(bs, pro)}
	for _, st := range benchMemDDL {
		m.exec(b, st)
	}
	ctx := m.ctx()
	for _, name := range benchTables {
		ins := m.table(b, name).Inserter(ctx)
		ins.StatementBegin(ctx)
		for _, r := range benchMemRowsF[n][name] {
			if err := ins.Insert(ctx, r.Copy()); err != nil {
				b.Fatal(err)
			}
		}
		if err := ins.StatementComplete(ctx); err != nil {
			b.Fatal(err)
		}
		if err := ins.Close(ctx); err != nil {
			b.Fatal(err)
		}
		// The edits live in the session until committed to the database.
		if err := m.sess.CommitTransaction(ctx, nil); err != nil {
			b.Fatal(err)
		}
		got := m.query(b, "SELECT COUNT(*) FROM "+name)
		if len(got) != 1 || fmt.Sprint(got[0][0]) != strconv.Itoa(n) {
			b.Fatalf("memory %s: loaded %v rows, want %d", name, got, n)
		}
	}
	benchMemFix[n] = m
	return m
}

func (m *benchMem) ctx() *sql.Context {
	return sql.NewContext(context.Background(), sql.WithSession(m.sess))
}

func (m *benchMem) table(b *testing.B, name string) *memory.Table {
	t, ok, err := m.db.GetTableInsensitive(m.ctx(), name)
	if err != nil || !ok {
		b.Fatalf("memory table %s: %v", name, err)
	}
	return t.(*memory.Table)
}

// run executes one statement on the memory engine the way Workspace.exec does
// on weft: bind arguments, plan, drain the iterator.
func (m *benchMem) run(query string, args ...any) ([]sql.Row, error) {
	bind, err := toBindings(args)
	if err != nil {
		return nil, err
	}
	ctx := m.ctx()
	_, iter, _, err := m.engine.QueryWithBindings(ctx, query, nil, bind, nil)
	if err != nil {
		return nil, err
	}
	var out []sql.Row
	for {
		r, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			_ = iter.Close(ctx)
			return nil, err
		}
		out = append(out, r)
	}
	return out, iter.Close(ctx)
}

func (m *benchMem) exec(b *testing.B, query string, args ...any) {
	if _, err := m.run(query, args...); err != nil {
		b.Fatalf("memory %q: %v", query, err)
	}
}

func (m *benchMem) query(b *testing.B, query string, args ...any) []sql.Row {
	r, err := m.run(query, args...)
	if err != nil {
		b.Fatalf("memory %q: %v", query, err)
	}
	return r
}

// benchMemCopy is the memory baseline for fork, snapshot and restore: a copy
// of every table's row slice, as memory's own statement rollback does
// (memory.TableData.copy, unexported). Memory never mutates a stored row in
// place, so sharing the row values is enough for isolation. This is a lower
// bound: it does not include rebuilding a queryable memory database from the
// copy (which through memory's insert path is quadratic) nor copying its
// secondary index slices.
type benchMemSnap map[string][]sql.Row

func (m *benchMem) copyRows(ctx *sql.Context, b *testing.B) benchMemSnap {
	out := make(benchMemSnap, len(benchTables))
	for _, name := range benchTables {
		t := m.table(b, name)
		parts, err := t.Partitions(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var rows []sql.Row
		for {
			p, err := parts.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if rows == nil {
				rows = slices.Clone(t.GetPartition(string(p.Key())))
			} else {
				rows = append(rows, t.GetPartition(string(p.Key()))...)
			}
		}
		out[name] = rows
	}
	return out
}

// benchHashRows is the memory baseline for Hash: SHA-256 over every row of
// every table in primary-key order (memory keeps rows sorted by key).
func benchHashRows(s benchMemSnap) [32]byte {
	h := sha256.New()
	var buf []byte
	for _, name := range benchTables {
		for _, r := range s[name] {
			buf = buf[:0]
			for _, v := range r {
				switch x := v.(type) {
				case int64:
					buf = binary.BigEndian.AppendUint64(buf, uint64(x))
				case int32:
					buf = binary.BigEndian.AppendUint32(buf, uint32(x))
				case string:
					buf = binary.BigEndian.AppendUint32(buf, uint32(len(x)))
					buf = append(buf, x...)
				case decimal.Decimal:
					buf = append(buf, x.String()...)
					buf = append(buf, 0)
				default:
					buf = fmt.Append(buf, v, "\x00")
				}
			}
			h.Write(buf)
		}
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// benchDiffRows is the memory baseline for Diff: a merge walk of two
// key-sorted row slices comparing every row by value. Returns the number of
// added, removed and changed rows.
func benchDiffRows(a, b benchMemSnap) int {
	n := 0
	for _, name := range benchTables {
		ra, rb := a[name], b[name]
		i, j := 0, 0
		for i < len(ra) || j < len(rb) {
			switch {
			case j == len(rb) || (i < len(ra) && ra[i][0].(int64) < rb[j][0].(int64)):
				n++
				i++
			case i == len(ra) || ra[i][0].(int64) > rb[j][0].(int64):
				n++
				j++
			default:
				if !benchRowEq(ra[i], rb[j]) {
					n++
				}
				i++
				j++
			}
		}
	}
	return n
}

func benchRowEq(a, b sql.Row) bool {
	for k := range a {
		if da, ok := a[k].(decimal.Decimal); ok {
			db, ok := b[k].(decimal.Decimal)
			if !ok || !da.Equal(db) {
				return false
			}
			continue
		}
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

// ---- helpers ----

func benchEach(b *testing.B, fn func(b *testing.B, n int, backend string)) {
	for _, n := range benchSizes {
		for _, backend := range []string{"weft", "memory"} {
			b.Run(fmt.Sprintf("rows=%d/backend=%s", n, backend), func(b *testing.B) { fn(b, n, backend) })
		}
	}
}

func benchExec(b *testing.B, ws *Workspace, query string, args ...any) {
	if _, err := ws.Exec(context.Background(), query, args...); err != nil {
		b.Fatalf("%q: %v", query, err)
	}
}

func benchUpdateArgs(r *rand.Rand, n int) []any {
	return []any{benchStatuses[r.IntN(len(benchStatuses))], benchCents(r.IntN(100000)), int64(r.IntN(n))}
}

var (
	benchSinkWS  *Workspace
	benchSinkV   *Version
	benchSinkAny any
)

// ---- fork / snapshot / restore ----

func BenchmarkFork(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		if backend == "weft" {
			f := benchGetWeft(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchSinkWS = f.store.Fork(f.base)
			}
			return
		}
		m := benchGetMem(b, n)
		ctx := m.ctx()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			benchSinkAny = m.copyRows(ctx, b)
		}
	})
}

func BenchmarkSnapshot(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(1, 2))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			benchExec(b, ws, benchUpdateSQL, benchUpdateArgs(r, n)...) // a workspace with a change
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v, err := ws.Snapshot()
				if err != nil {
					b.Fatal(err)
				}
				benchSinkV = v
			}
			return
		}
		m := benchGetMem(b, n)
		ctx := m.ctx()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			benchSinkAny = m.copyRows(ctx, b)
		}
	})
}

func BenchmarkRestore(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(1, 2))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			benchExec(b, ws, benchUpdateSQL, benchUpdateArgs(r, n)...)
			v1, err := ws.Snapshot()
			if err != nil {
				b.Fatal(err)
			}
			vs := [2]*Version{f.base, v1}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.Restore(vs[i&1]); err != nil {
					b.Fatal(err)
				}
			}
			return
		}
		// Restoring a memory database to a saved copy means copying the saved
		// rows back: the same row-slice copy as fork.
		m := benchGetMem(b, n)
		ctx := m.ctx()
		saved := m.copyRows(ctx, b)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			out := make(benchMemSnap, len(saved))
			for k, rows := range saved {
				out[k] = slices.Clone(rows)
			}
			benchSinkAny = out
		}
	})
}

// ---- retained memory ----

// benchRetained runs fn(i) b.N times, keeping the last min(b.N, hold)
// results reachable, and reports the heap they retain per result.
func benchRetained(b *testing.B, hold int, fn func(i int) any) {
	held := make([]any, min(b.N, hold))
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		held[i%len(held)] = fn(i)
	}
	b.StopTimer()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/float64(len(held)), "B/fork")
	runtime.KeepAlive(held)
}

func BenchmarkForkRetained(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		if backend == "weft" {
			f := benchGetWeft(b, n)
			benchRetained(b, 1000, func(int) any { return f.store.Fork(f.base) })
			return
		}
		m := benchGetMem(b, n)
		ctx := m.ctx()
		benchRetained(b, benchMemHold(n), func(int) any { return m.copyRows(ctx, b) })
	})
}

// benchMemHold keeps about 256 MiB of memory copies alive at most.
func benchMemHold(n int) int { return max(4, min(1000, (256<<20)/(3*n*24))) }

func BenchmarkForkRetainedAfterWrite(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(3, 4))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			benchRetained(b, 1000, func(int) any {
				ws := f.store.Fork(f.base)
				benchExec(b, ws, benchUpdateSQL, benchUpdateArgs(r, n)...)
				return ws
			})
			return
		}
		// Memory: the row-slice copy with one row replaced by a changed copy
		// (the write itself is applied in Go, not through SQL).
		m := benchGetMem(b, n)
		ctx := m.ctx()
		benchRetained(b, benchMemHold(n), func(int) any {
			c := m.copyRows(ctx, b)
			k := r.IntN(n)
			row := c["orders"][k].Copy()
			row[2] = "shipped"
			c["orders"][k] = row
			return c
		})
	})
}

// ---- writes and reads through SQL ----

func BenchmarkUpdateByPK(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(5, 6))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchExec(b, ws, benchUpdateSQL, benchUpdateArgs(r, n)...)
			}
			return
		}
		m := benchGetMem(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			m.exec(b, benchUpdateSQL, benchUpdateArgs(r, n)...)
		}
	})
}

// benchNextID hands out fresh order ids above every fixture's range, so
// inserts never collide even though the memory fixture is shared.
var benchNextID = map[string]int64{}

func BenchmarkInsertByPK(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(7, 8))
		key := fmt.Sprint(n, backend)
		if benchNextID[key] == 0 {
			benchNextID[key] = int64(n) + 1_000_000
		}
		args := func() []any {
			id := benchNextID[key]
			benchNextID[key]++
			return []any{id, int64(r.IntN(n / 4)), "new", benchCents(r.IntN(100000))}
		}
		// The table is kept near n rows: weft restores its fork every 256
		// inserts; memory deletes each inserted row again (its cost grows
		// with the table, and its fixture is shared with later benchmarks).
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchExec(b, ws, benchInsertSQL, args()...)
				if i%256 == 255 {
					b.StopTimer()
					if err := ws.Restore(f.base); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
			}
			return
		}
		m := benchGetMem(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			a := args()
			m.exec(b, benchInsertSQL, a...)
			b.StopTimer()
			m.exec(b, "DELETE FROM orders WHERE id = ?", a[0])
			b.StartTimer()
		}
	})
}

func BenchmarkLookupByPK(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(9, 10))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rows, err := ws.Query(context.Background(), benchLookupSQL, int64(r.IntN(n)))
				if err != nil || len(rows.Values) != 1 {
					b.Fatalf("lookup: %v %v", rows, err)
				}
			}
			return
		}
		m := benchGetMem(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if rows := m.query(b, benchLookupSQL, int64(r.IntN(n))); len(rows) != 1 {
				b.Fatalf("lookup: %v", rows)
			}
		}
	})
}

func BenchmarkJoin3(b *testing.B) {
	benchEach(b, func(b *testing.B, n int, backend string) {
		r := rand.New(rand.NewPCG(11, 12))
		if backend == "weft" {
			f := benchGetWeft(b, n)
			ws := f.store.Fork(f.base)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rows, err := ws.Query(context.Background(), benchJoinSQL, int64(r.IntN(n/16)))
				if err != nil || len(rows.Values) != 16 {
					b.Fatalf("join: %d rows, %v", len(rows.Values), err)
				}
			}
			return
		}
		m := benchGetMem(b, n)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if rows := m.query(b, benchJoinSQL, int64(r.IntN(n/16))); len(rows) != 16 {
				b.Fatalf("join: %d rows", len(rows))
			}
		}
	})
}

// ---- hash and diff after k changed rows ----

var benchKs = []int{1, 10, 100}

// BenchmarkHashAfterWrites: per op, k one-row UPDATEs by primary key, then
// Snapshot and Hash (weft); k UPDATEs then hashing every row (memory).
func BenchmarkHashAfterWrites(b *testing.B) {
	for _, n := range benchSizes {
		for _, k := range benchKs {
			for _, backend := range []string{"weft", "memory"} {
				b.Run(fmt.Sprintf("rows=%d/k=%d/backend=%s", n, k, backend), func(b *testing.B) {
					r := rand.New(rand.NewPCG(13, uint64(k)))
					if backend == "weft" {
						f := benchGetWeft(b, n)
						b.ReportAllocs()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							ws := f.store.Fork(f.base)
							for j := 0; j < k; j++ {
								benchExec(b, ws, benchUpdateSQL, benchUpdateArgs(r, n)...)
							}
							v, err := ws.Snapshot()
							if err != nil {
								b.Fatal(err)
							}
							benchSinkAny = v.Hash()
						}
						return
					}
					m := benchGetMem(b, n)
					if n > 1000 && k > 1 {
						// One memory UPDATE with secondary indexes costs about a
						// second at 10k rows (it re-sorts the table).
						b.Skipf("memory: %d UPDATEs per op at %d rows would take k seconds per op", k, n)
					}
					ctx := m.ctx()
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						for j := 0; j < k; j++ {
							m.exec(b, benchUpdateSQL, benchUpdateArgs(r, n)...)
						}
						benchSinkAny = benchHashRows(m.copyRows(ctx, b))
					}
				})
			}
		}
	}
}

// benchDerived returns the base version and one derived from it by k
// updates of distinct orders rows (changing status), and the same as memory
// row copies (the k changes applied to the copy in Go).
func benchDerived(b *testing.B, n, k int) (*Version, *Version) {
	f := benchGetWeft(b, n)
	ws := f.store.Fork(f.base)
	for j := 0; j < k; j++ {
		id := int64(j * (n / k))
		benchExec(b, ws, "UPDATE orders SET status = ? WHERE id = ?", "refunded", id)
	}
	v, err := ws.Snapshot()
	if err != nil {
		b.Fatal(err)
	}
	if c := Diff(f.base, v).Count(); c != k {
		b.Fatalf("diff of %d updates: %d changes", k, c)
	}
	return f.base, v
}

func benchMemDerived(b *testing.B, m *benchMem, n, k int) (benchMemSnap, benchMemSnap) {
	a := m.copyRows(m.ctx(), b)
	d := make(benchMemSnap, len(a))
	for name, rows := range a {
		d[name] = slices.Clone(rows)
	}
	for j := 0; j < k; j++ {
		id := j * (n / k)
		row := d["orders"][id].Copy()
		if row[0].(int64) != int64(id) {
			b.Fatalf("memory orders not in key order at %d", id)
		}
		row[2] = "refunded"
		d["orders"][id] = row
	}
	if c := benchDiffRows(a, d); c != k {
		b.Fatalf("memory diff of %d updates: %d changes", k, c)
	}
	return a, d
}

// BenchmarkHashOnly: Hash of a state k rows away from the loaded one (weft:
// Workspace.Hash, uncached, incremental; memory: hashing every row).
func BenchmarkHashOnly(b *testing.B) {
	for _, n := range benchSizes {
		for _, k := range benchKs {
			for _, backend := range []string{"weft", "memory"} {
				b.Run(fmt.Sprintf("rows=%d/k=%d/backend=%s", n, k, backend), func(b *testing.B) {
					if backend == "weft" {
						_, v := benchDerived(b, n, k)
						ws := v.Store().Fork(v)
						b.ReportAllocs()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							benchSinkAny = ws.Hash()
						}
						return
					}
					m := benchGetMem(b, n)
					_, d := benchMemDerived(b, m, n, k)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						benchSinkAny = benchHashRows(d)
					}
				})
			}
		}
	}
}

// BenchmarkDiff: Diff between a version and one derived from it by k updates.
func BenchmarkDiff(b *testing.B) {
	for _, n := range benchSizes {
		for _, k := range benchKs {
			for _, backend := range []string{"weft", "memory"} {
				b.Run(fmt.Sprintf("rows=%d/k=%d/backend=%s", n, k, backend), func(b *testing.B) {
					if backend == "weft" {
						a, v := benchDerived(b, n, k)
						b.ReportAllocs()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							benchSinkAny = Diff(a, v)
						}
						return
					}
					m := benchGetMem(b, n)
					a, d := benchMemDerived(b, m, n, k)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						benchSinkAny = benchDiffRows(a, d)
					}
				})
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Issue 16 item 1: keyed reads on the fast path (fast.go) against the same
// statements planned by go-mysql-server (Store.SetFastPath(false)), in one
// run. Each sub-benchmark reports, beside ns/op and allocs/op, cpu-ns/op:
// the process's CPU time (user + system, getrusage) per op.

// benchCPU reports the process CPU time per op from t0 (benchRusage at the
// start of the timed loop).
func benchCPU(b *testing.B, t0 time.Duration) {
	b.ReportMetric(float64(benchRusage()-t0)/float64(b.N), "cpu-ns/op")
}

func benchRusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchPaths = []struct {
	name string
	fast bool
}{{"path=fast", true}, {"path=engine", false}}

// BenchmarkSQLLookupByPK is one primary-key lookup through SQL
// (benchLookupSQL, 10k orders) inside a unit with a Sandbox, as a tool
// call's statement runs.
func BenchmarkSQLLookupByPK(b *testing.B) {
	const n = 10000
	data, _ := benchRows(n)
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			s := NewStore()
			defer s.Close()
			s.SetFastPath(path.fast)
			v, err := s.Load(context.Background(), benchDDL, data...)
			if err != nil {
				b.Fatal(err)
			}
			ws := s.Fork(v)
			ctx := WithSandbox(context.Background(), &Sandbox{Tables: NewTablePolicy([]string{"orders"}, nil), Limits: Limits{MaxRowsRead: 1 << 62}})
			u, err := ws.Begin()
			if err != nil {
				b.Fatal(err)
			}
			defer u.Rollback()
			r := rand.New(rand.NewPCG(9, 10))
			b.ReportAllocs()
			b.ResetTimer()
			t0 := benchRusage()
			for i := 0; i < b.N; i++ {
				rows, err := u.Query(ctx, benchLookupSQL, int64(r.IntN(n)))
				if err != nil || len(rows.Values) != 1 {
					b.Fatalf("lookup: %v %v", rows, err)
				}
			}
			benchCPU(b, t0)
			if hits, _ := s.FastPathStats(); path.fast && hits < int64(b.N) {
				b.Fatalf("fast path hits %d < %d", hits, b.N)
			}
		})
	}
}

// benchRetailSchema is the retail module's schema (read-only reference).
const benchRetailSchema = "../../examples/modules/retail/retaildb/schema.sql"

// benchRetailOrderSQL are the 7 SELECTs of the retail module's
// get_order_details (examples/modules/retail/store.go, readOrders with a
// filter on one order id), in order.
var benchRetailOrderSQL = []string{
	"SELECT order_id, user_id, address1, address2, city, country, state, zip, status, cancel_reason, exchange_items, exchange_new_items, " +
		"exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id FROM orders WHERE order_id = ? ORDER BY pos",
	"SELECT order_id, pos, item_id, product_id, name, price FROM order_items WHERE order_id = ? ORDER BY order_id, pos",
	"SELECT order_id, item_pos, name, value FROM order_item_options WHERE order_id = ? ORDER BY order_id, item_pos, pos",
	"SELECT order_id, pos FROM fulfillments WHERE order_id = ? ORDER BY order_id, pos",
	"SELECT order_id, fulfillment_pos, tracking_id FROM fulfillment_tracking_ids WHERE order_id = ? ORDER BY order_id, fulfillment_pos, pos",
	"SELECT order_id, fulfillment_pos, item_id FROM fulfillment_item_ids WHERE order_id = ? ORDER BY order_id, fulfillment_pos, pos",
	"SELECT order_id, transaction_type, amount, payment_method_id FROM payments WHERE order_id = ? ORDER BY order_id, pos",
}

// benchRetailData is a retail-shaped state of n orders (tau2's retail has
// 1,000): 3 items with 2 options each, one fulfillment with a tracking id
// and 3 item ids, one payment.
func benchRetailData(n int) []TableRows {
	var orders, items, opts, fuls, tracks, fitems, pays [][]any
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("#W%07d", i)
		orders = append(orders, []any{id, i, fmt.Sprintf("user_%d", i%500), "1 Main St", "Suite 2", "Austin", "USA", "TX", "78701", "delivered"})
		for p := 0; p < 3; p++ {
			item := fmt.Sprintf("%010d", i*3+p)
			items = append(items, []any{id, p, item, fmt.Sprintf("%010d", p), "Water Bottle", 25.5 + float64(p)})
			opts = append(opts, []any{id, p, 0, "color", "blue"}, []any{id, p, 1, "capacity", "750ml"})
			fitems = append(fitems, []any{id, 0, p, item})
		}
		fuls = append(fuls, []any{id, 0})
		tracks = append(tracks, []any{id, 0, 0, fmt.Sprintf("%012d", i)})
		pays = append(pays, []any{id, 0, "payment", 78.0, "credit_card_1"})
	}
	return []TableRows{
		{Table: "orders", Columns: []string{"order_id", "pos", "user_id", "address1", "address2", "city", "country", "state", "zip", "status"}, Rows: orders},
		{Table: "order_items", Columns: []string{"order_id", "pos", "item_id", "product_id", "name", "price"}, Rows: items},
		{Table: "order_item_options", Columns: []string{"order_id", "item_pos", "pos", "name", "value"}, Rows: opts},
		{Table: "fulfillments", Columns: []string{"order_id", "pos"}, Rows: fuls},
		{Table: "fulfillment_tracking_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "tracking_id"}, Rows: tracks},
		{Table: "fulfillment_item_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "item_id"}, Rows: fitems},
		{Table: "payments", Columns: []string{"order_id", "pos", "transaction_type", "amount", "payment_method_id"}, Rows: pays},
	}
}

// BenchmarkRetailOrderDetails runs get_order_details' 7 SELECTs for one
// order (1,000 orders) as one tool call: a unit under a Sandbox with the
// retail module's table policy. One op is the 7 statements.
func BenchmarkRetailOrderDetails(b *testing.B) {
	ddl, err := os.ReadFile(benchRetailSchema)
	if err != nil {
		b.Fatal(err)
	}
	const n = 1000
	data := benchRetailData(n)
	tables := []string{"users", "payment_methods", "user_orders", "orders", "order_items", "order_item_options", "fulfillments",
		"fulfillment_tracking_ids", "fulfillment_item_ids", "payments", "products", "variants", "variant_options"}
	for _, path := range benchPaths {
		b.Run(path.name, func(b *testing.B) {
			s := NewStore()
			defer s.Close()
			s.SetFastPath(path.fast)
			v, err := s.Load(context.Background(), string(ddl), data...)
			if err != nil {
				b.Fatal(err)
			}
			ws := s.Fork(v)
			r := rand.New(rand.NewPCG(3, 4))
			h0, s0 := s.FastPathStats() // Load's DDL statements are not counted
			b.ReportAllocs()
			b.ResetTimer()
			t0 := benchRusage()
			for i := 0; i < b.N; i++ {
				ctx := WithSandbox(context.Background(), &Sandbox{Tables: NewTablePolicy(tables, nil)})
				id := fmt.Sprintf("#W%07d", r.IntN(n))
				err := ws.Do(func(u *Unit) error {
					for j, q := range benchRetailOrderSQL {
						rows, err := u.Query(ctx, q, id)
						if err != nil {
							return err
						}
						if want := []int{1, 3, 6, 1, 1, 3, 1}[j]; len(rows.Values) != want {
							return fmt.Errorf("%s: %d rows, want %d", q, len(rows.Values), want)
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
			benchCPU(b, t0)
			hits, slow := s.FastPathStats()
			hits, slow = hits-h0, slow-s0
			b.ReportMetric(float64(hits)/float64(hits+slow), "fast-hit-ratio")
		})
	}
}
