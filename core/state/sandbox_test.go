package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sandboxStore(t *testing.T) (*Store, *Version) {
	t.Helper()
	st := NewStore()
	v, err := st.Load(context.Background(), `CREATE TABLE notes (id INT PRIMARY KEY, text VARCHAR(100));
CREATE TABLE ro (id INT PRIMARY KEY, v VARCHAR(10));
CREATE TABLE secret (id INT PRIMARY KEY, answer VARCHAR(100))`,
		TableRows{Table: "notes", Columns: []string{"id", "text"}, Rows: [][]any{{1, "a"}, {2, "b"}, {3, "c"}, {4, "d"}, {5, "e"}}},
		TableRows{Table: "ro", Columns: []string{"id", "v"}, Rows: [][]any{{1, "r"}}},
		TableRows{Table: "secret", Columns: []string{"id", "answer"}, Rows: [][]any{{1, "TOPSECRET"}}})
	if err != nil {
		t.Fatal(err)
	}
	return st, v
}

func isKind(err, kind error) bool {
	var se *Error
	return errors.As(err, &se) && se.Kind == kind
}

// TestSandboxTablePolicyAtTheEngine: reads of undeclared tables and writes
// of tables not owned are refused where the engine resolves and writes
// them, with the table named; without a Sandbox nothing is refused.
func TestSandboxTablePolicyAtTheEngine(t *testing.T) {
	st, v := sandboxStore(t)
	ctx := WithSandbox(context.Background(), &Sandbox{Tables: NewTablePolicy([]string{"notes"}, []string{"ro"})})
	ws := st.Fork(v)
	before := ws.Hash()
	for q, table := range map[string]string{
		"SELECT * FROM secret":                                      "secret",
		"SELECT (SELECT answer FROM secret LIMIT 1)":                "secret",
		"UPDATE ro SET v = 'x'":                                     "ro",
		"DELETE FROM ro":                                            "ro",
		"INSERT INTO ro (id, v) VALUES (9, 'x')":                    "ro",
		"REPLACE INTO ro (id, v) VALUES (1, 'x')":                   "ro",
		"UPDATE notes n JOIN ro r ON 1 = 1 SET r.v = n.text":        "ro",
		"INSERT INTO notes (id, text) SELECT 9, answer FROM secret": "secret",
	} {
		_, err := ws.Exec(ctx, q)
		var se *Error
		if !errors.As(err, &se) || se.Kind != ErrDenied || se.Table != table {
			t.Errorf("%s: %v, want ErrDenied naming %s", q, err, table)
		}
	}
	if ws.Hash() != before {
		t.Fatal("refused statements changed the workspace")
	}
	if _, err := ws.Exec(ctx, "UPDATE notes SET text = (SELECT v FROM ro LIMIT 1) WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	if r, err := ws.Query(context.Background(), "SELECT answer FROM secret"); err != nil || fmt.Sprint(r.Values) != "[[TOPSECRET]]" {
		t.Fatalf("without a Sandbox: %v %v", r, err)
	}
}

// TestSandboxRefusedFunctionsAll: every function of RefusedFunctions, in
// any position, is ErrDenied naming it; SELECT @@variables and WITH
// RECURSIVE are refused; outside a Sandbox the engine's own behaviour
// stays.
func TestSandboxRefusedFunctionsAll(t *testing.T) {
	st, v := sandboxStore(t)
	ctx := WithSandbox(context.Background(), &Sandbox{})
	ws := st.Fork(v)
	args := map[string]string{"get_lock": "'a', 0", "is_free_lock": "'a'", "is_used_lock": "'a'", "release_lock": "'a'",
		"sleep": "0", "benchmark": "1, 1", "load_file": "'x'"}
	for name := range RefusedFunctions {
		for _, q := range []string{
			fmt.Sprintf("SELECT %s(%s)", name, args[name]),
			fmt.Sprintf("SELECT id FROM notes WHERE id = %s(%s)", strings.ToUpper(name), args[name]),
		} {
			_, err := ws.Query(ctx, q)
			if !isKind(err, ErrDenied) || (!strings.Contains(err.Error(), strings.ToUpper(name)+"()") && name != "load_file") {
				t.Errorf("%s: %v", q, err)
			}
		}
	}
	for _, q := range []string{"SELECT @@server_uuid", "SELECT @@hostname", "SELECT @x",
		"WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"} {
		if _, err := ws.Query(ctx, q); !isKind(err, ErrDenied) {
			t.Errorf("%s: %v", q, err)
		}
	}
	if _, err := ws.Query(ctx, "SELECT '@@x', 'WITH RECURSIVE', 'GET_LOCK(1)'"); err != nil {
		t.Fatalf("string literals: %v", err)
	}
	// Named locks are refused in every statement, sandboxed or not: the
	// verifier's and the inspection server's SQL must not open a channel
	// either.
	if _, err := ws.Query(context.Background(), "SELECT IS_FREE_LOCK('unsandboxed')"); !isKind(err, ErrDenied) {
		t.Fatalf("without a Sandbox: %v", err)
	}
}

// TestSandboxClockAndRandom: the clock family and column defaults read
// Sandbox.Now, RAND()/UUID()/UUID_SHORT()/RANDOM_BYTES() read
// Sandbox.Rand; equal inputs give equal outputs, another stream other ones.
func TestSandboxClockAndRandom(t *testing.T) {
	ctx := context.Background()
	st := NewStore()
	v, err := st.Load(ctx, "CREATE TABLE t (id INT PRIMARY KEY, at TIMESTAMP(6) DEFAULT CURRENT_TIMESTAMP(6), u CHAR(36) DEFAULT (UUID()))")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 3, 4, 5, 6, 7, 891000000, time.UTC)
	run := func(seed byte) []any {
		ws := st.Fork(v)
		sb := &Sandbox{Now: func() time.Time { return at }, Rand: bytes.NewReader(bytes.Repeat([]byte{seed, 7, 1, 200}, 64))}
		sctx := WithSandbox(ctx, sb)
		if _, err := ws.Exec(sctx, "INSERT INTO t (id) VALUES (1)"); err != nil {
			t.Fatal(err)
		}
		r, err := ws.Query(sctx, "SELECT NOW(6), SYSDATE(6), UTC_TIMESTAMP(), CURDATE(), CURTIME(), UNIX_TIMESTAMP(), at, RAND(), UUID(), UUID_SHORT(), HEX(RANDOM_BYTES(4)), u FROM t")
		if err != nil {
			t.Fatal(err)
		}
		return r.Values[0]
	}
	a, b, c := run(1), run(1), run(2)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("equal clock and stream, different values (-a +b):\n%s", diff)
	}
	wantClock := []any{at, at, at, "2030-03-04", "05:06:07", int64(at.Unix()), at}
	gotClock := a[:7]
	if diff := cmp.Diff(fmt.Sprint(wantClock), fmt.Sprint(gotClock)); diff != "" {
		t.Fatalf("clock (-want +got):\n%s", diff)
	}
	if cmp.Equal(a[7:], c[7:]) {
		t.Fatal("another random stream gave the same values")
	}
	if _, err := st.Fork(v).Query(WithSandbox(ctx, &Sandbox{}), "SELECT RAND()"); !isKind(err, ErrDenied) {
		t.Fatalf("RAND() with no stream: %v", err)
	}
	if r, err := st.Fork(v).Query(WithSandbox(ctx, &Sandbox{}), "SELECT UNIX_TIMESTAMP()"); err != nil || fmt.Sprint(r.Values) != "[[0]]" {
		t.Fatalf("no clock reads the epoch: %v %v", r, err)
	}
}

// TestSandboxLimits: each limit stops the statement with ErrResourceLimit,
// the workspace unchanged, and Exceeded stays set.
func TestSandboxLimits(t *testing.T) {
	st, v := sandboxStore(t)
	for _, c := range []struct {
		lim Limits
		q   string
	}{
		{Limits{MaxValueBytes: 1000}, "SELECT REPEAT('ab', 501)"},
		{Limits{MaxValueBytes: 1000}, "SELECT LPAD('a', 251, 'x')"},
		{Limits{MaxValueBytes: 1000}, "SELECT REPLACE('aaaa', 'a', REPEAT('b', 300))"},
		{Limits{MaxValueBytes: 1000}, "SELECT CONCAT(REPEAT('a', 600), REPEAT('b', 600))"},
		{Limits{MaxValueBytes: 1000}, "SELECT UNCOMPRESS(COMPRESS(REPEAT('a', 900)) ) FROM notes WHERE id = 1 AND LENGTH(REPEAT('a', 2000)) > 0"},
		{Limits{MaxComputedBytes: 1000}, "SELECT REPEAT(text, 300) FROM notes"},
		{Limits{MaxRowsRead: 20}, "SELECT COUNT(*) FROM notes a, notes b, notes c"},
		{Limits{MaxResultBytes: 100}, "SELECT a.text, b.text FROM notes a, notes b"},
	} {
		ws := st.Fork(v)
		before := ws.Hash()
		sb := &Sandbox{Tables: NewTablePolicy([]string{"notes"}, nil), Limits: c.lim}
		_, err := ws.Query(WithSandbox(context.Background(), sb), c.q)
		if !isKind(err, ErrResourceLimit) || !isKind(sb.Exceeded(), ErrResourceLimit) {
			t.Errorf("%+v %s: %v (exceeded %v)", c.lim, c.q, err, sb.Exceeded())
		}
		if ws.Hash() != before {
			t.Errorf("%s changed the workspace", c.q)
		}
	}
	sb := &Sandbox{}
	if r, err := st.Fork(v).Query(WithSandbox(context.Background(), sb), "SELECT LENGTH(REPEAT('x', 1000000)), COUNT(*) FROM notes a, notes b"); err != nil ||
		fmt.Sprint(r.Values) != "[[1000000 25]]" || sb.Exceeded() != nil {
		t.Fatalf("within the defaults: %v %v %v", r, err, sb.Exceeded())
	}
}
