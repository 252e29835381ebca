package module

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
)

// sqlReply is the decoded weft_sql_v1 response of a native handler.
type sqlReply struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
	Error   *struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"error"`
}

func runSQL(t *testing.T, h func(context.Context, []byte) []byte, ctx context.Context, q string) sqlReply {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"sql": q})
	var r sqlReply
	if err := json.Unmarshal(h(ctx, req), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func errKind(r sqlReply) string {
	if r.Error == nil {
		return ""
	}
	return r.Error.Kind
}

// TestSandboxCTEScopeDoesNotExemptTables is issue 15 item 1: a CTE named
// like an undeclared table exempts the name only inside its own scope. The
// issue's two statements are refused and copy nothing into the session.
func TestSandboxCTEScopeDoesNotExemptTables(t *testing.T) {
	ctx := context.Background()
	ws := fxWorkspace(t)
	m := &Manifest{Tables: Tables{Owns: []string{"items"}, Reads: []string{"ro"}}}
	h := NativeSQL(ws, m)
	before := ws.Hash()
	for _, q := range []string{
		"SELECT (WITH secrets AS (SELECT 1) SELECT 1) AS x, s.* FROM secrets s",
		"INSERT INTO items (id, n) SELECT v, 1 FROM (WITH secrets AS (SELECT 1 AS x) SELECT 1 AS x) q, secrets",
		"WITH a AS (WITH secrets AS (SELECT 1 AS id) SELECT id FROM secrets) SELECT * FROM a, secrets",
		"SELECT * FROM ro WHERE id IN (WITH secrets AS (SELECT 2 AS id) SELECT id FROM secrets) OR id IN (SELECT id FROM secrets)",
		"SELECT * FROM (SELECT 1 AS secrets) secrets, secrets s2",
	} {
		r := runSQL(t, h, ctx, q)
		if errKind(r) != "denied" || !strings.Contains(r.Error.Message, `"secrets"`) {
			t.Errorf("%s: got %+v rows %v, want denied naming secrets", q, r.Error, r.Rows)
		}
	}
	if ws.Hash() != before {
		t.Fatal("a refused statement changed the workspace")
	}
	// A CTE that shadows the name in its own scope is fine and reads no
	// table.
	r := runSQL(t, h, ctx, "WITH secrets AS (SELECT 7 AS id) SELECT id FROM secrets")
	if r.Error != nil || !cmp.Equal(r.Rows, [][]any{{float64(7)}}) {
		t.Fatalf("shadowing CTE: %+v %v", r.Error, r.Rows)
	}
}

// TestSandboxRefusesProcessWideFunctions is issue 15 item 3: named locks
// were shared between sessions (GET_LOCK in one, IS_FREE_LOCK = 0 in
// another). Every function with process-wide state or a side effect is
// refused, naming the function.
func TestSandboxRefusesProcessWideFunctions(t *testing.T) {
	ctx := context.Background()
	m := &Manifest{Tables: Tables{Owns: []string{"items"}}}
	a, b := NativeSQL(fxWorkspace(t), m), NativeSQL(fxWorkspace(t), m)
	if r := runSQL(t, a, ctx, "SELECT GET_LOCK('chan', 0)"); errKind(r) != "denied" {
		t.Fatalf("GET_LOCK: %+v %v", r.Error, r.Rows)
	}
	if r := runSQL(t, b, ctx, "SELECT IS_FREE_LOCK('chan')"); errKind(r) != "denied" {
		t.Fatalf("IS_FREE_LOCK in another session: %+v %v", r.Error, r.Rows)
	}
	for _, q := range []string{
		"SELECT IS_USED_LOCK('x')", "SELECT RELEASE_LOCK('x')", "SELECT RELEASE_ALL_LOCKS()",
		"SELECT SLEEP(1)", "SELECT LOAD_FILE('/etc/passwd')", "SELECT CONNECTION_ID()",
		"SELECT id FROM items WHERE n = GET_LOCK('y', 0)",
		"INSERT INTO items (id, n) VALUES ('a', IS_FREE_LOCK('z'))",
	} {
		r := runSQL(t, a, ctx, q)
		if errKind(r) != "denied" {
			t.Errorf("%s: %+v %v, want denied", q, r.Error, r.Rows)
		}
	}
	r := runSQL(t, a, ctx, "SELECT sleep(0)")
	if errKind(r) != "denied" || !strings.Contains(r.Error.Message, "SLEEP() is refused") {
		t.Fatalf("SLEEP message: %+v", r.Error)
	}
}

// TestSandboxVirtualClockAndSeededRandom is issue 15 item 4: NOW() and its
// family, RAND(), UUID() and UUID_SHORT() read the call's virtual clock and
// seeded stream, in queries and in column defaults; the same session seed
// and call number give the same values.
func TestSandboxVirtualClockAndSeededRandom(t *testing.T) {
	ctx := context.Background()
	st := state.NewStore()
	v, err := st.Load(ctx, `CREATE TABLE notes (id INT PRIMARY KEY, at DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6), u VARCHAR(36) DEFAULT (UUID()), r DOUBLE DEFAULT (RAND()))`)
	if err != nil {
		t.Fatal(err)
	}
	m := &Manifest{Tables: Tables{Owns: []string{"notes"}}}
	at := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	run := func() []any {
		ws := st.Fork(v)
		s := &Session{Workspace: ws, Seed: 42, Clock: NewVirtualClock(at)}
		h := NewNativeHost(ctx, s, ws, m)
		q := func(sql string) sqlReply {
			req, _ := json.Marshal(map[string]any{"sql": sql})
			var r sqlReply
			if err := json.Unmarshal(h.SQL(req), &r); err != nil {
				t.Fatal(err)
			}
			if r.Error != nil {
				t.Fatalf("%s: %+v", sql, r.Error)
			}
			return r
		}
		q("INSERT INTO notes (id) VALUES (1)")
		r := q("SELECT NOW(), CURRENT_TIMESTAMP, SYSDATE(), UTC_TIMESTAMP(), CURDATE(), UNIX_TIMESTAMP(), RAND(), UUID(), UUID_SHORT(), at, u, r FROM notes")
		return r.Rows[0]
	}
	a, b := run(), run()
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("two runs of the same seed and clock differ (-a +b):\n%s", diff)
	}
	want := []any{"2031-05-06T07:08:09Z", "2031-05-06T07:08:09Z", "2031-05-06T07:08:09Z", "2031-05-06T07:08:09Z",
		"2031-05-06", float64(at.Unix()), "2031-05-06T07:08:09Z"}
	got := []any{a[0], a[1], a[2], a[3], a[4], a[5], a[9]}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("clock functions (-want +got):\n%s", diff)
	}
	if f, ok := a[6].(float64); !ok || f < 0 || f >= 1 {
		t.Fatalf("RAND() = %v", a[6])
	}
	for _, u := range []any{a[7], a[10]} {
		if s, ok := u.(string); !ok || len(s) != 36 || s[14] != '4' {
			t.Fatalf("UUID() = %v, want a version-4 UUID", u)
		}
	}
	if a[7] == a[10] {
		t.Fatal("two UUID() calls returned the same value")
	}
}

// TestSandboxSQLBudget is issue 15 item 13: SQL that makes the host compute
// a huge value or read rows without bound stops at once with the typed
// resource_limit error, well within the deadline, and changes nothing.
func TestSandboxSQLBudget(t *testing.T) {
	ws := fxWorkspace(t)
	m := &Manifest{Tables: Tables{Owns: []string{"items"}, Reads: []string{"ro"}}}
	h := NativeSQL(ws, m)
	for i := 0; i < 200; i++ {
		runSQL(t, h, context.Background(), fmt.Sprintf("INSERT INTO items (id, n) VALUES ('i%03d', %d)", i, i))
	}
	before := ws.Hash()
	for _, q := range []string{
		"SELECT REPEAT('x', 1000000000)",
		"SELECT LENGTH(REPEAT('x', 300000000))",
		"SELECT SPACE(2000000000)",
		"SELECT LPAD('a', 1000000000, 'b')",
		"SELECT RPAD('a', 1000000000, 'b')",
		"SELECT REPLACE(REPEAT('a', 1000000), 'a', REPEAT('b', 100))",
		"SELECT CONCAT(REPEAT('a', 9000000), REPEAT('a', 9000000))",
		"UPDATE items SET id = REPEAT(id, 100000000) WHERE n = 1",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		r := runSQL(t, h, ctx, q)
		cancel()
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("%s: took %s", q, el)
		}
		if errKind(r) != "resource_limit" {
			t.Errorf("%s: %+v %v, want resource_limit", q, r.Error, r.Rows)
		}
	}
	// A cartesian join the engine runs from cached rows stops at the
	// deadline (in a tool call: the call's deadline error).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	start := time.Now()
	r := runSQL(t, h, ctx, "SELECT COUNT(*) FROM items a, items b, items c, items d, items e")
	cancel()
	if el := time.Since(start); el > 2500*time.Millisecond || r.Error == nil ||
		(r.Error.Kind != "resource_limit" && !strings.Contains(r.Error.Message, "deadline exceeded")) {
		t.Errorf("cartesian join: %+v %v after %s", r.Error, r.Rows, el)
	}
	r = runSQL(t, h, context.Background(), "WITH RECURSIVE r (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT COUNT(*) FROM r")
	if errKind(r) != "denied" || !strings.Contains(r.Error.Message, "WITH RECURSIVE") {
		t.Errorf("recursive CTE: %+v", r.Error)
	}
	if ws.Hash() != before {
		t.Fatal("a statement over the budget changed the workspace")
	}
	// Ordinary statements still run (on a new handler: the rows-read
	// budget is per call, and the cartesian join above may have spent it).
	if r := runSQL(t, NativeSQL(ws, m), context.Background(), "SELECT LENGTH(REPEAT('x', 1000)), COUNT(*) FROM items a, items b"); r.Error != nil ||
		!cmp.Equal(r.Rows, [][]any{{float64(1000), float64(40000)}}) {
		t.Fatalf("within budget: %+v %v", r.Error, r.Rows)
	}
}

const napSource = `package main

import (
	"context"
	"time"

	"github.com/weft-dev/weft/sdk/tool"
)

func init() {
	tool.Module(tool.Info{Name: "nap", Version: "0.1.0"})
	tool.Register("nap", "Sleeps.", nap, tool.ReadOnly())
}

func main() {}

type napIn struct {
	Ms int64 ` + "`json:\"ms\"`" + `
}

type napOut struct {
	Before string ` + "`json:\"before\"`" + `
	After  string ` + "`json:\"after\"`" + `
	Timer  string ` + "`json:\"timer\"`" + `
}

func nap(ctx context.Context, in napIn) (napOut, error) {
	before := time.Now().UTC()
	time.Sleep(time.Duration(in.Ms) * time.Millisecond)
	after := time.Now().UTC()
	<-time.After(time.Duration(in.Ms) * time.Millisecond)
	timer := time.Now().UTC()
	return napOut{before.Format(time.RFC3339Nano), after.Format(time.RFC3339Nano), timer.Format(time.RFC3339Nano)}, nil
}
`

// TestGuestSleepAdvancesTheCallClock is issue 15 item 5: time.Sleep in a
// guest never returned (the virtual clock did not move during a call). A
// sleep now returns at once and advances the call's virtual clock by the
// duration; the session's clock is not moved by it.
func TestGuestSleepAdvancesTheCallClock(t *testing.T) {
	m, err := newRuntime(t, Config{CallTimeout: 2 * time.Second}).Compile(context.Background(), fixtureSource(t, "nap", napSource))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &Session{Workspace: fxWorkspace(t), Clock: NewVirtualClock(at)}
	for _, ms := range []int64{1, 1500, 3_600_000} {
		start := time.Now()
		res, err := m.Call(context.Background(), s, "nap", json.RawMessage(fmt.Sprintf(`{"ms":%d}`, ms)))
		if err != nil {
			t.Fatalf("nap %d ms: %v", ms, err)
		}
		if el := time.Since(start); el > time.Second {
			t.Errorf("nap %d ms took %s of real time", ms, el)
		}
		var got map[string]string
		if err := json.Unmarshal(res.StructuredContent, &got); err != nil {
			t.Fatal(err)
		}
		d := time.Duration(ms) * time.Millisecond
		want := map[string]string{
			"before": at.Format(time.RFC3339Nano),
			"after":  at.Add(d).Format(time.RFC3339Nano),
			"timer":  at.Add(2 * d).Format(time.RFC3339Nano),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("nap %d ms (-want +got):\n%s", ms, diff)
		}
		if !s.Clock.Now().Equal(at) {
			t.Fatalf("the session clock moved to %s", s.Clock.Now())
		}
	}
}

// TestManifestTableNameCharset is issue 15 item 2's second half: a
// manifest table name is a plain identifier, so no separator, quote or
// space can hide in one ("notes,secret" was one name to the policy's cache
// key and two to a reader).
func TestManifestTableNameCharset(t *testing.T) {
	for _, name := range []string{"notes,secret", "a|b", "`x`", "with space", "1abc", "a.b", "x\x00", strings.Repeat("t", 65)} {
		m := &Manifest{ABI: ABIVersion, Name: "m", Tables: Tables{Owns: []string{name}}}
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "plain SQL identifiers") {
			t.Errorf("%q: %v", name, err)
		}
	}
	for _, name := range []string{"notes", "Order_Items", "_t", "t$2", strings.Repeat("t", 64)} {
		m := &Manifest{ABI: ABIVersion, Name: "m", Tables: Tables{Owns: []string{name}}}
		if err := m.Validate(); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}
