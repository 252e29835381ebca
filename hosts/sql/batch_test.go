package sqlhost

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/weft-dev/weft/hosts"
	"github.com/weft-dev/weft/sdk/abi"
)

// seqExec answers each statement with the next of its answers.
type seqExec struct {
	calls []call
	rows  []*Rows
	errs  []error
}

func (s *seqExec) next() (*Rows, error) {
	i := len(s.calls) - 1
	var r *Rows
	var err error
	if i < len(s.rows) {
		r = s.rows[i]
	}
	if i < len(s.errs) {
		err = s.errs[i]
	}
	return r, err
}

func (s *seqExec) Query(_ context.Context, q string, args ...any) (*Rows, error) {
	s.calls = append(s.calls, call{false, q, args})
	return s.next()
}

func (s *seqExec) Exec(_ context.Context, q string, args ...any) (Result, error) {
	s.calls = append(s.calls, call{true, q, args})
	_, err := s.next()
	return Result{RowsAffected: 1, LastInsertID: uint64(len(s.calls))}, err
}

func (s *seqExec) Classify(err error) string {
	if errors.Is(err, errDup) {
		return KindDuplicateKey
	}
	return ""
}

func batch(t *testing.T, stmts ...abi.SQLStatement) []byte {
	t.Helper()
	raw, err := abi.EncodeSQLBatch(stmts)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestHandleBatchValues(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("x", 3600))
	ex := &seqExec{rows: []*Rows{{
		Columns: []string{"i", "u", "f", "d", "s", "b", "t", "j", "jnull", "n", "bool"},
		Values: [][]any{
			{int8(-1), uint64(18446744073709551615), 1.5, decimal.RequireFromString("12.30"), "a<b", []byte("hi"), ts,
				types.JSONDocument{Val: map[string]any{"k": []any{1.0, "<x>"}}}, types.JSONDocument{Val: nil}, nil, true},
		},
	}}}
	h := &Handler{Exec: ex, Policy: pol}
	raw := h.HandleBatch(context.Background(), batch(t,
		abi.SQLStatement{SQL: "SELECT * FROM orders WHERE id = ?", Args: []any{int64(7)}},
		abi.SQLStatement{SQL: "UPDATE orders SET d = ?, j = ?, t = ? WHERE id = ?", Args: []any{abi.Decimal("1.50"), abi.JSONText(`["a"]`), ts, "#W1"}},
	))
	res, err := abi.DecodeSQLResults(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Error != nil || res[1].Error != nil {
		t.Fatalf("results %+v", res)
	}
	wantTags := []byte{abi.SQLTagInt, abi.SQLTagUint, abi.SQLTagFloat, abi.SQLTagDecimal, abi.SQLTagString, abi.SQLTagBytes, abi.SQLTagTime, abi.SQLTagJSON, abi.SQLTagJSON, abi.SQLTagNull, abi.SQLTagInt}
	if d := cmp.Diff(wantTags, res[0].Tags); d != "" {
		t.Fatalf("tags (-want +got)\n%s", d)
	}
	var got []any
	for _, c := range res[0].Row(0) {
		got = append(got, c.Value())
	}
	want := []any{int64(-1), uint64(18446744073709551615), 1.5, abi.Decimal("12.30"), "a<b", []byte("hi"), ts.UTC(),
		abi.JSONText(`{"k":[1,"<x>"]}`), nil, nil, int64(1)}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("cells (-want +got)\n%s", d)
	}
	if res[1].RowsAffected != 1 || res[1].LastInsertID != 2 {
		t.Fatalf("exec result %+v", res[1])
	}
	// arguments reach the executor as weft_sql_v1's DecodeArg gives them
	wantArgs := []any{decimal.RequireFromString("1.50"), `["a"]`, ts.UTC(), "#W1"}
	if d := cmp.Diff(wantArgs, ex.calls[1].args, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) && a.Exponent() == b.Exponent() })); d != "" || !ex.calls[1].exec || ex.calls[0].exec {
		t.Fatalf("args (-want +got)\n%s\ncalls %+v", d, ex.calls)
	}
}

// The batch stops at the first failed statement: its error is the last
// result, later statements never reach the executor; refusals, executor
// errors and argument errors all stop it the same way.
func TestHandleBatchStopsAtFailure(t *testing.T) {
	for name, c := range map[string]struct {
		stmts []abi.SQLStatement
		errs  []error
		kind  string
		ran   int // statements that reached the executor
	}{
		"executor error": {
			stmts: []abi.SQLStatement{{SQL: "INSERT INTO orders VALUES (1)"}, {SQL: "INSERT INTO orders VALUES (1)"}, {SQL: "DELETE FROM orders"}},
			errs:  []error{nil, errDup}, kind: KindDuplicateKey, ran: 2,
		},
		"denied": {
			stmts: []abi.SQLStatement{{SQL: "SELECT 1 FROM orders"}, {SQL: "SELECT * FROM secrets"}, {SQL: "DELETE FROM orders"}},
			kind:  KindDenied, ran: 1,
		},
		"write to a read-only table": {
			stmts: []abi.SQLStatement{{SQL: "DELETE FROM products"}},
			kind:  KindDenied, ran: 0,
		},
	} {
		ex := &seqExec{errs: c.errs}
		var denied []string
		h := &Handler{Exec: ex, Policy: pol, OnDenied: func(d *DeniedError) { denied = append(denied, d.Statement) }}
		res, err := abi.DecodeSQLResults(h.HandleBatch(context.Background(), batch(t, c.stmts...)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(ex.calls) != c.ran {
			t.Errorf("%s: %d statements ran, want %d", name, len(ex.calls), c.ran)
		}
		last := res[len(res)-1]
		if last.Error == nil || last.Error.Kind != c.kind {
			t.Errorf("%s: last result %+v", name, last)
		}
		wantRes := c.ran // an executor error is the ran statement's result
		if c.kind == KindDenied {
			wantRes++ // a refusal never reaches the executor
		}
		if len(res) != wantRes {
			t.Errorf("%s: %d results, want %d", name, len(res), wantRes)
		}
		if c.kind == KindDenied && len(denied) != 1 {
			t.Errorf("%s: OnDenied told %v", name, denied)
		}
	}
}

func TestHandleBatchMalformed(t *testing.T) {
	ex := &seqExec{}
	h := &Handler{Exec: ex, Policy: pol}
	for name, raw := range map[string][]byte{
		"not v2":    []byte(`{"sql":"SELECT 1"}`),
		"truncated": batch(t, abi.SQLStatement{SQL: "SELECT 1 FROM orders"})[:5],
		"too many":  batch(t, make([]abi.SQLStatement, MaxBatch+1)...),
	} {
		res, err := abi.DecodeSQLResults(h.HandleBatch(context.Background(), raw))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res) != 1 || res[0].Error == nil || res[0].Error.Kind != KindOther || !strings.HasPrefix(res[0].Error.Message, "malformed sql batch") {
			t.Fatalf("%s: %+v", name, res)
		}
	}
	if len(ex.calls) != 0 {
		t.Fatalf("a malformed batch ran %v", ex.calls)
	}
}

func TestBatchResultBuffer(t *testing.T) {
	ex := &seqExec{rows: []*Rows{{Columns: []string{"a"}, Values: [][]any{{"0123456789abcdef"}}}}}
	h := &Handler{Exec: ex, Policy: pol}
	env := &hosts.Call{SQLBatch: h.HandleBatch}
	ctx := hosts.With(context.Background(), env)
	req := batch(t, abi.SQLStatement{SQL: "SELECT a FROM orders"})
	small := make([]byte, 4)
	n := Batch(ctx, req, small)
	out := make([]byte, n)
	if m := Take(ctx, out); m != n {
		t.Fatalf("take %d of %d", m, n)
	}
	res, err := abi.DecodeSQLResults(out)
	if err != nil || res[0].Row(0)[0].S != "0123456789abcdef" {
		t.Fatalf("%v %+v", err, res)
	}
	// no binding: an error result, never a trap
	big := make([]byte, 256)
	n = Batch(context.Background(), req, big)
	res, err = abi.DecodeSQLResults(big[:n])
	if err != nil || len(res) != 1 || res[0].Error == nil || res[0].Error.Kind != KindOther {
		t.Fatalf("no call: %v %+v", err, res)
	}
}

// FuzzHandleBatch: any request bytes get a well-formed response and never
// a panic; a malformed request runs nothing.
func FuzzHandleBatch(f *testing.F) {
	for _, s := range [][]abi.SQLStatement{
		{{SQL: "SELECT a FROM orders WHERE id = ?", Args: []any{"#W1"}}},
		{{SQL: "UPDATE orders SET d = ? WHERE id = ?", Args: []any{abi.Decimal("1.20"), int64(3)}}, {SQL: "SELECT 1 FROM secrets"}},
	} {
		raw, err := abi.EncodeSQLBatch(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ex := &seqExec{rows: []*Rows{{Columns: []string{"a"}, Values: [][]any{{int64(1)}}}}}
		h := &Handler{Exec: ex, Policy: pol}
		res, err := abi.DecodeSQLResults(h.HandleBatch(context.Background(), data))
		if err != nil {
			t.Fatalf("response does not decode: %v", err)
		}
		if _, derr := abi.DecodeSQLBatch(data); derr != nil && len(ex.calls) != 0 {
			t.Fatalf("malformed request ran %v", ex.calls)
		}
		if len(res) == 0 && len(data) > 2 {
			if stmts, _ := abi.DecodeSQLBatch(data); len(stmts) > 0 {
				t.Fatal("no result for a non-empty batch")
			}
		}
	})
}
