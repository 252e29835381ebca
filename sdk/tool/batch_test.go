package tool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/abi"
)

// batchHost serves weft_sql_v2: it records the decoded statements and
// answers the first with rows, the others as writes, failing the one named
// fail (1-based; 0 none).
type batchHost struct {
	fakeHost
	got  []abi.SQLStatement
	fail int
}

func (h *batchHost) SQLBatch(req []byte) []byte {
	stmts, err := abi.DecodeSQLBatch(req)
	if err != nil {
		return abi.SQLFailure(abi.KindOther, err.Error())
	}
	h.got = stmts
	var w abi.SQLResultsWriter
	tm := time.Date(2026, 12, 2, 1, 2, 3, 4, time.UTC)
	for i := range stmts {
		if i+1 == h.fail {
			w.Fail(abi.KindDuplicateKey, "dup")
			break
		}
		if i > 0 {
			w.Rows(nil, nil, 0)
			w.Done(1, uint64(i))
			continue
		}
		w.Rows([]string{"s", "i", "f", "d", "n", "t", "j", "u"},
			[]byte{abi.SQLTagString, abi.SQLTagInt, abi.SQLTagFloat, abi.SQLTagDecimal, abi.SQLTagNull, abi.SQLTagTime, abi.SQLTagJSON, abi.SQLTagUint}, 1)
		for _, v := range []any{"x", int64(-2), 2.5, abi.Decimal("1.20"), nil, tm, abi.JSONText(`["a","b"]`), uint64(7)} {
			if err := w.Cell(v); err != nil {
				panic(err)
			}
		}
		w.Done(0, 0)
	}
	return w.Bytes()
}

func TestBatchAndTypedRows(t *testing.T) {
	h := &batchHost{}
	var rs []*Rows
	var err error
	run := func(ctx context.Context) {
		rs, err = Batch(ctx,
			Stmt{SQL: "SELECT * FROM t WHERE id = ?", Args: []any{"#W1"}},
			Stmt{SQL: "UPDATE t SET d = ?, j = ?", Args: []any{abi.Decimal("3.10"), abi.JSONText("[]")}})
	}
	withHost(t, h, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.got) != 2 || h.got[0].Args[0] != "#W1" || h.got[1].Args[0] != abi.Decimal("3.10") || h.got[1].Args[1] != abi.JSONText("[]") {
		t.Fatalf("host got %+v", h.got)
	}
	r := rs[0]
	if r.Len() != 1 || !r.Next() {
		t.Fatalf("rows %d", r.Len())
	}
	var list []string
	s, i, f, d, n := r.Str(), r.Int(), r.Float(), r.Float(), r.NullStr()
	tm := r.Time()
	ok := r.JSON(&list)
	u := r.Int()
	if s != "x" || i != -2 || f != 2.5 || d != 1.2 || n != nil || !tm.Equal(time.Date(2026, 12, 2, 1, 2, 3, 4, time.UTC)) || !ok || strings.Join(list, ",") != "a,b" || u != 7 || r.Err() != nil {
		t.Fatalf("reads: %q %d %v %v %v %v %v %v %d %v", s, i, f, d, n, tm, ok, list, u, r.Err())
	}
	if r.Next() {
		t.Fatal("a second row")
	}
	if res := rs[1].Result(); res.RowsAffected != 1 || res.LastInsertID != 1 {
		t.Fatalf("write result %+v", res)
	}
	// a mismatch: the first error is kept, naming row and column
	r = &Rows{res: &abi.SQLResult{Columns: []string{"s", "n"}, Tags: []byte{abi.SQLTagString, abi.SQLTagNull}, Cells: []abi.SQLCell{{T: abi.SQLTagString, S: "x"}, {}}}, row: -1}
	r.Next()
	if r.Int() != 0 || r.Str() != "" || r.Err() == nil || r.Err().Error() != "weft sql: row 0 column 1: want an integer, got string" {
		t.Fatalf("mismatch: %v", r.Err())
	}
}

func TestBatchStopsAtError(t *testing.T) {
	h := &batchHost{fail: 2}
	var rs []*Rows
	var err error
	withHost(t, h, func(ctx context.Context) {
		rs, err = Batch(ctx, Stmt{SQL: "SELECT 1"}, Stmt{SQL: "INSERT INTO t VALUES (1)"}, Stmt{SQL: "DELETE FROM t"})
	})
	var se *SQLError
	if !errors.As(err, &se) || se.Kind != KindDuplicateKey || !strings.HasPrefix(err.Error(), "weft sql: statement 2: ") || len(rs) != 1 {
		t.Fatalf("%v %d", err, len(rs))
	}
	// the database/sql driver over the same host uses weft_sql_v2 too
	withHost(t, h, func(ctx context.Context) {
		_, err = DB().ExecContext(ctx, "INSERT INTO t VALUES (?)", 1)
	})
	if err != nil || len(h.got) != 1 || h.got[0].Args[0] != int64(1) || len(h.requests) != 0 {
		t.Fatalf("driver: %v %+v %v", err, h.got, h.requests)
	}
}

// withHost runs fn with h as the host of the call in progress.
func withHost(t *testing.T, h Host, fn func(ctx context.Context)) {
	t.Helper()
	callMu.Lock()
	current.Store(&hostRef{h})
	defer func() {
		current.Store(nil)
		callMu.Unlock()
	}()
	fn(context.Background())
}
