package module

import (
	"context"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/state"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

const testDDL = `
CREATE TABLE items (id VARCHAR(20) PRIMARY KEY, n INT NOT NULL, u BIGINT UNSIGNED, price DECIMAL(10,2), f DOUBLE, at DATETIME(6), doc JSON, raw VARBINARY(10));
CREATE TABLE secrets (id INT PRIMARY KEY);
`

func newWorkspace(t testing.TB) *state.Workspace {
	t.Helper()
	st := state.NewStore()
	v, err := st.Load(context.Background(), testDDL)
	if err != nil {
		t.Fatal(err)
	}
	return st.Fork(v)
}

func TestSQLExecutorOnState(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	m := &Manifest{Tables: Tables{Owns: []string{"items"}}}
	h := NativeSQL(ws, m)
	got := string(h(ctx, []byte(`{"sql":"INSERT INTO items VALUES (?,?,?,?,?,?,?,?)","args":["a",1,18446744073709551615,{"t":"decimal","v":"12.30"},0.5,{"t":"time","v":"2024-01-02T03:04:05.123456Z"},"{\"k\": [1, 2]}",{"t":"bytes","v":"AAE="}]}`)))
	if got != `{"columns":[],"types":[],"rows":[],"rows_affected":1,"last_insert_id":0,"error":null}` {
		t.Fatal(got)
	}
	got = string(h(ctx, []byte(`{"sql":"SELECT id, n, u, price, f, at, doc, raw, NULL AS z FROM items WHERE id = ?","args":["a"]}`)))
	want := `{"columns":["id","n","u","price","f","at","doc","raw","z"],"types":["string","int","uint","decimal","float","time","json","bytes","null"],` +
		`"rows":[["a",1,18446744073709551615,"12.30",0.5,"2024-01-02T03:04:05.123456Z",{"k":[1,2]},"AAE=",null]],"rows_affected":0,"last_insert_id":0,"error":null}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for req, kind := range map[string]string{
		`{"sql":"INSERT INTO items (id, n) VALUES ('a', 2)"}`: "duplicate_key",
		`{"sql":"INSERT INTO items (id) VALUES ('b')"}`:       "not_null",
		`{"sql":"SELECT nope FROM items"}`:                    "no_such_column",
		`{"sql":"SELECT * FROM secrets"}`:                     "denied",
		`{"sql":"DROP TABLE items"}`:                          "denied",
		`{"sql":"SELECT * FROM"}`:                             "syntax",
	} {
		got := string(h(ctx, []byte(req)))
		if !strings.Contains(got, `"kind":"`+kind+`"`) {
			t.Errorf("%s: %s", req, got)
		}
	}
	_ = sqlhost.KindOther
}

func TestNativeHost(t *testing.T) {
	ctx := context.Background()
	ws := newWorkspace(t)
	m := &Manifest{Tables: Tables{Owns: []string{"items"}}}
	s := &Session{Workspace: ws, Seed: 3}
	h := NewNativeHost(ctx, s, ws, m)
	if got := string(h.SQL([]byte(`{"sql":"SELECT COUNT(*) AS n FROM items"}`))); !strings.Contains(got, `"rows":[[0]]`) {
		t.Fatal(got)
	}
	h.SQL([]byte(`{"sql":"SELECT * FROM secrets"}`))
	if len(h.Denied()) != 1 || h.Now() != DefaultEpoch.UnixNano() || s.Seq() != 1 {
		t.Fatalf("denied %v now %d seq %d", h.Denied(), h.Now(), s.Seq())
	}
	a, b := make([]byte, 8), make([]byte, 8)
	h.Rand(a)
	RandStream(3, 0).Read(b)
	if string(a) != string(b) {
		t.Fatal("native rand differs from the wasm stream")
	}
}
