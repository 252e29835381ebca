package abi

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestSQLBatchRoundTrip(t *testing.T) {
	tm := time.Date(2026, 12, 2, 13, 4, 5, 123456789, time.UTC)
	old := time.Date(1500, 1, 2, 3, 4, 5, 6, time.UTC) // before 1678: outside int64 nanoseconds
	in := []SQLStatement{
		{SQL: "SELECT a FROM t WHERE id = ?", Args: []any{"#W1"}},
		{SQL: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", Args: []any{
			nil, true, false, int64(-3), math.MinInt64, uint64(math.MaxUint64), 12.5, "héllo\x00", []byte{0, 1, 255}, tm, Decimal("-12.30"), JSONText(`{"k":[1]}`)}},
		{SQL: "SELECT ?", Args: []any{old}},
		{SQL: "DELETE FROM t"},
	}
	raw, err := EncodeSQLBatch(in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeSQLBatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]SQLStatement(nil), in...)
	want[1].Args = append([]any(nil), in[1].Args...)
	want[1].Args[4] = int64(math.MinInt64) // an untyped constant arrives as int
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("(-sent +decoded)\n%s", d)
	}
	if _, err := EncodeSQLBatch([]SQLStatement{{SQL: "x", Args: []any{math.NaN()}}}); err == nil {
		t.Fatal("NaN argument encoded")
	}
	if _, err := EncodeSQLBatch([]SQLStatement{{SQL: "x", Args: []any{1, struct{}{}}}}); err == nil || err.Error() != "statement 1 argument 2: unsupported SQL value type struct {}" {
		t.Fatalf("unsupported type: %v", err)
	}
}

func TestSQLResultsRoundTrip(t *testing.T) {
	var w SQLResultsWriter
	w.Rows([]string{"id", "n", "price", "when", "opts"}, []byte{SQLTagString, SQLTagInt, SQLTagDecimal, SQLTagTime, SQLTagJSON}, 2)
	tm := time.Date(2020, 1, 1, 0, 0, 0, 5, time.UTC)
	for _, v := range []any{"a", int64(1), Decimal("1.50"), tm, JSONText(`[1]`), "b", nil, nil, nil, nil} {
		if err := w.Cell(v); err != nil {
			t.Fatal(err)
		}
	}
	w.Done(0, 0)
	w.Rows(nil, nil, 0)
	w.Done(3, 77)
	at, n := w.Mark()
	w.Rows([]string{"x"}, []byte{SQLTagInt}, 1)
	w.Rewind(at, n)
	w.Fail(KindDuplicateKey, "dup")
	res, err := DecodeSQLResults(w.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 3 {
		t.Fatalf("%d results", len(res))
	}
	r := res[0]
	if r.NumRows() != 2 || r.Row(0)[0].S != "a" || int64(r.Row(0)[1].N) != 1 || r.Row(0)[2].Value() != Decimal("1.50") ||
		!r.Row(0)[3].Value().(time.Time).Equal(tm) || r.Row(0)[4].Value() != JSONText(`[1]`) || r.Row(1)[0].S != "b" || r.Row(1)[1].T != SQLTagNull {
		t.Fatalf("rows: %+v", r)
	}
	if res[1].RowsAffected != 3 || res[1].LastInsertID != 77 || res[1].NumRows() != 0 || res[1].Error != nil {
		t.Fatalf("write: %+v", res[1])
	}
	if e := res[2].Error; e == nil || e.Kind != KindDuplicateKey || e.Message != "dup" {
		t.Fatalf("error: %+v", res[2])
	}
	if got := SQLFailure(KindOther, "no"); string(got) != "\x02\x01\x01\x05other\x02no" {
		t.Fatalf("failure: %q", got)
	}
}

func TestSQLWireMalformed(t *testing.T) {
	for name, c := range map[string]struct {
		raw      string
		response bool
	}{
		"empty":                {"", false},
		"version":              {"\x01\x00", false},
		"count past the end":   {"\x02\x7f", false},
		"sql past the end":     {"\x02\x01\x09SEL", false},
		"varint overflow":      {"\x02\x01\x01x\x01\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", false},
		"unknown tag":          {"\x02\x01\x01x\x01\x42", false},
		"float truncated":      {"\x02\x01\x01x\x01\x03\x00\x00", false},
		"NaN":                  {"\x02\x01\x01x\x01\x03\x01\x00\x00\x00\x00\x00\xf8\x7f", false},
		"string not UTF-8":     {"\x02\x01\x01x\x01\x06\x01\xff", false},
		"bad decimal":          {"\x02\x01\x01x\x01\x09\x031.a", false},
		"time nanos":           {"\x02\x01\x01x\x01\x08\x00\x80\x94\xeb\xdc\x03", false},
		"trailing":             {"\x02\x00\x00", false},
		"error before last":    {"\x02\x02\x01\x00\x00\x00\x00\x00\x00\x00", true},
		"status":               {"\x02\x01\x07", true},
		"column type":          {"\x02\x01\x00\x01\x01a\x42\x00\x00\x00", true},
		"rows without columns": {"\x02\x01\x00\x00\x05\x00\x00", true},
		"rows past the end":    {"\x02\x01\x00\x01\x01a\x01\x7f", true},
	} {
		var err error
		if c.response {
			_, err = DecodeSQLResults([]byte(c.raw))
		} else {
			_, err = DecodeSQLBatch([]byte(c.raw))
		}
		if !errors.Is(err, ErrSQLWire) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func reencodeResults(t *testing.T, res []SQLResult) []byte {
	var w SQLResultsWriter
	for _, r := range res {
		if r.Error != nil {
			w.Fail(r.Error.Kind, r.Error.Message)
			continue
		}
		w.Rows(r.Columns, r.Tags, r.NumRows())
		for i := range r.Cells {
			if err := w.Cell(r.Cells[i].Value()); err != nil {
				t.Fatalf("re-encoding a decoded cell: %v", err)
			}
		}
		w.Done(r.RowsAffected, r.LastInsertID)
	}
	return w.Bytes()
}

// FuzzDecodeSQLBatch: the host's decoder of guest requests never panics,
// and what it accepts re-encodes to a request that decodes to the same
// statements.
func FuzzDecodeSQLBatch(f *testing.F) {
	for _, s := range [][]SQLStatement{
		{{SQL: "SELECT a FROM t WHERE id = ?", Args: []any{"#W1"}}},
		{{SQL: "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", Args: []any{nil, true, int64(-7), 2.5, []byte("b"), time.Unix(5, 6)}}, {SQL: "DELETE FROM t WHERE d = ?", Args: []any{Decimal("1.20"), JSONText("[]")}}},
		{},
	} {
		raw, err := EncodeSQLBatch(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stmts, err := DecodeSQLBatch(data)
		if err != nil {
			if !errors.Is(err, ErrSQLWire) {
				t.Fatalf("error without ErrSQLWire: %v", err)
			}
			return
		}
		raw, err := EncodeSQLBatch(stmts)
		if err != nil {
			t.Fatalf("re-encoding decoded statements: %v", err)
		}
		again, err := DecodeSQLBatch(raw)
		if err != nil {
			t.Fatalf("decoding the re-encoding: %v", err)
		}
		if d := cmp.Diff(stmts, again); d != "" {
			t.Fatalf("%q: (-first +again)\n%s", data, d)
		}
	})
}

// FuzzDecodeSQLResults: the guest's decoder of host responses never
// panics, and what it accepts re-encodes to the same results.
func FuzzDecodeSQLResults(f *testing.F) {
	var w SQLResultsWriter
	w.Rows([]string{"a", "b"}, []byte{SQLTagString, SQLTagFloat}, 1)
	_ = w.Cell("x")
	_ = w.Cell(1.5)
	w.Done(0, 0)
	w.Rows(nil, nil, 0)
	w.Done(1, 2)
	w.Fail(KindDenied, "no")
	f.Add(w.Bytes())
	f.Add(SQLFailure(KindOther, "m"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := DecodeSQLResults(data)
		if err != nil {
			if !errors.Is(err, ErrSQLWire) {
				t.Fatalf("error without ErrSQLWire: %v", err)
			}
			return
		}
		again, err := DecodeSQLResults(reencodeResults(t, res))
		if err != nil {
			t.Fatalf("decoding the re-encoding: %v", err)
		}
		if d := cmp.Diff(res, again); d != "" {
			t.Fatalf("%q: (-first +again)\n%s", data, d)
		}
	})
}
