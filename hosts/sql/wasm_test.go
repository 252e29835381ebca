package sqlhost

import (
	"context"
	"testing"
)

func TestCallResultBuffer(t *testing.T) {
	f := &fakeExec{rows: &Rows{Columns: []string{"a"}, Values: [][]any{{int64(1)}}}}
	c := &Call{Handler: &Handler{Exec: f, Policy: pol}}
	want := `{"columns":["a"],"types":["int"],"rows":[[1]],"rows_affected":0,"last_insert_id":0,"error":null}`
	req := []byte(`{"sql":"SELECT a FROM orders"}`)

	big := make([]byte, 1024)
	n := c.Query(context.Background(), req, big)
	if int(n) != len(want) || string(big[:n]) != want {
		t.Fatalf("fits: n=%d %q", n, big[:n])
	}
	if c.Take(big) != 0 {
		t.Fatal("pending after a result that fitted")
	}

	small := make([]byte, 8)
	n = c.Query(context.Background(), req, small)
	if int(n) != len(want) || string(small) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("too small: n=%d, buffer written %q", n, small)
	}
	if m := c.Take(small); m != n {
		t.Fatalf("take into a small buffer: %d", m)
	}
	out := make([]byte, n)
	if m := c.Take(out); m != n || string(out) != want {
		t.Fatalf("take: %d %q", m, out)
	}
	if c.Take(out) != 0 {
		t.Fatal("pending after take")
	}

	// no binding: an sql error, never a trap
	var none *Call
	n = none.Query(context.Background(), req, big)
	if string(big[:n]) != string(errNoCall) {
		t.Fatalf("unbound: %s", big[:n])
	}
	if none.Take(big) != 0 {
		t.Fatal("unbound take")
	}
	if CallFrom(WithCall(context.Background(), c)) != c || CallFrom(context.Background()) != nil {
		t.Fatal("context binding")
	}
}
