package sqlhost

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/hosts"
)

func TestCallResultBuffer(t *testing.T) {
	f := &fakeExec{rows: &Rows{Columns: []string{"a"}, Values: [][]any{{int64(1)}}}}
	h := &Handler{Exec: f, Policy: pol}
	env := &hosts.Call{SQL: h.Handle}
	ctx := hosts.With(context.Background(), env)
	want := `{"columns":["a"],"types":["int"],"rows":[[1]],"rows_affected":0,"last_insert_id":0,"error":null}`
	req := []byte(`{"sql":"SELECT a FROM orders"}`)

	big := make([]byte, 1024)
	n := Query(ctx, req, big)
	if int(n) != len(want) || string(big[:n]) != want {
		t.Fatalf("fits: n=%d %q", n, big[:n])
	}
	if Take(ctx, big) != 0 {
		t.Fatal("pending after a result that fitted")
	}

	small := make([]byte, 8)
	n = Query(ctx, req, small)
	if int(n) != len(want) || string(small) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
		t.Fatalf("too small: n=%d, buffer written %q", n, small)
	}
	if m := Take(ctx, small); m != n {
		t.Fatalf("take into a small buffer: %d", m)
	}
	out := make([]byte, n)
	if m := Take(ctx, out); m != n || string(out) != want {
		t.Fatalf("take: %d %q", m, out)
	}
	if Take(ctx, out) != 0 {
		t.Fatal("pending after take")
	}

	// no binding: an sql error, never a trap
	for name, ctx := range map[string]context.Context{
		"no environment": context.Background(),
		"no handler":     hosts.With(context.Background(), &hosts.Call{}),
	} {
		n = Query(ctx, req, big)
		if string(big[:n]) != string(errNoCall) {
			t.Fatalf("%s: %s", name, big[:n])
		}
		if Take(ctx, big) != 0 {
			t.Fatalf("%s: take", name)
		}
	}
}
