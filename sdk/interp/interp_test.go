package interp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// fakeHost answers SQL from a function and records the requests; its
// clock and random stream are fixed.
type fakeHost struct {
	sql  func(abi.SQLRequest) string
	reqs []abi.SQLRequest
	logs []string
}

func (h *fakeHost) SQL(req []byte) []byte {
	var r abi.SQLRequest
	if err := json.Unmarshal(req, &r); err != nil {
		panic(err)
	}
	h.reqs = append(h.reqs, r)
	return []byte(h.sql(r))
}
func (h *fakeHost) Now() int64 { return time.Date(2024, 5, 15, 15, 0, 0, 0, time.UTC).UnixNano() }
func (h *fakeHost) Rand(p []byte) {
	for i := range p {
		p[i] = byte(i + 1)
	}
}
func (h *fakeHost) Log(level int, msg string)             { h.logs = append(h.logs, msg) }
func (h *fakeHost) Progress(p, total float64, msg string) {}

const program = `
LIMIT = 3

def get_user(user_id):
    u = query_one("SELECT * FROM users WHERE id = ?", user_id)
    if u == None:
        tool_error("not_found", "user %s not found" % user_id)
    return u

def list_users(limit = LIMIT):
    return [u["id"] for u in query("SELECT id FROM users LIMIT ?", limit)]

def set_prefs(user_id, prefs):
    n = execute("UPDATE users SET prefs = ? WHERE id = ?", prefs, user_id)
    return "updated %d" % n

def stamp():
    log("stamping")
    return {"now": now(), "unix": now_unix(), "r": rand_int(1000), "f": 2.0, "pi": math.floor(3.7)}

def spin():
    x = 0
    while True:
        x += 1

def bad_code():
    tool_error("nope", "x")

def broken():
    return 1 // 0

def bad_sql():
    return query("SELEC 1")

def opaque():
    return set([1])
`

func request(tool, args string, withSource bool) []byte {
	p := abi.Program{Digest: spec.ProgramDigest(program, []string{"not_found"}), Errors: []string{"not_found"}}
	if withSource {
		p.Source = program
	}
	b, _ := json.Marshal(abi.CallRequest{Tool: tool, Arguments: json.RawMessage(args), Program: &p})
	return b
}

func users(r abi.SQLRequest) string {
	switch {
	case strings.HasPrefix(r.SQL, "SELECT * FROM users"):
		if string(r.Args[0]) != `"u1"` {
			return `{"columns":["id","prefs","balance"],"types":["string","json","decimal"],"rows":[],"rows_affected":0,"last_insert_id":0,"error":null}`
		}
		return `{"columns":["id","prefs","balance"],"types":["string","json","decimal"],"rows":[["u1",{"z":1,"a":[true,null]},"12.30"]],"rows_affected":0,"last_insert_id":0,"error":null}`
	case strings.HasPrefix(r.SQL, "SELECT id FROM users"):
		return `{"columns":["id"],"types":["string"],"rows":[["u1"],["u2"]],"rows_affected":0,"last_insert_id":0,"error":null}`
	case strings.HasPrefix(r.SQL, "UPDATE"):
		return `{"columns":[],"types":[],"rows":[],"rows_affected":1,"last_insert_id":0,"error":null}`
	}
	return `{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"syntax","message":"near SELEC"}}`
}

func TestDispatch(t *testing.T) {
	in := interp.New(interp.Options{MaxSteps: 100_000})
	h := &fakeHost{sql: users}
	ctx := context.Background()
	for _, tc := range []struct {
		tool, args string
		want       string
	}{
		{"get_user", `{"user_id":"u1"}`, `{"content":[{"type":"text","text":"{\"id\":\"u1\",\"prefs\":{\"z\":1,\"a\":[true,null]},\"balance\":12.3}"}],"structuredContent":{"id":"u1","prefs":{"z":1,"a":[true,null]},"balance":12.3}}`},
		{"get_user", `{"user_id":"u9"}`, `{"content":[{"type":"text","text":"user u9 not found"}],"structuredContent":{"error":"not_found","message":"user u9 not found"},"isError":true}`},
		{"get_user", `{}`, `{"content":[{"type":"text","text":"missing required argument \"user_id\""}],"structuredContent":{"error":"invalid_arguments","message":"missing required argument \"user_id\""},"isError":true}`},
		{"get_user", `{"user_id":"u1","x":1}`, `{"content":[{"type":"text","text":"unexpected argument \"x\""}],"structuredContent":{"error":"invalid_arguments","message":"unexpected argument \"x\""},"isError":true}`},
		{"list_users", `{}`, `{"content":[{"type":"text","text":"[\"u1\",\"u2\"]"}]}`},
		{"set_prefs", `{"user_id":"u1","prefs":{"b":[1,2.5],"a":"x"}}`, `{"content":[{"type":"text","text":"updated 1"}]}`},
		{"stamp", `{}`, `{"content":[{"type":"text","text":"{\"now\":\"2024-05-15T15:00:00\",\"unix\":1715785200,\"r\":856,\"f\":2.0,\"pi\":3}"}],"structuredContent":{"now":"2024-05-15T15:00:00","unix":1715785200,"r":856,"f":2.0,"pi":3}}`},
		{"nonesuch", `{}`, `{"internalError":"the program defines no function \"nonesuch\"","code":"program"}`},
		{"LIMIT", `{}`, `{"internalError":"\"LIMIT\" is a int, not a function defined by the program","code":"program"}`},
		{"spin", `{}`, `{"internalError":"tool spin ran out of its step budget (100000 steps)","code":"step_budget"}`},
		{"bad_code", `{}`, `{"internalError":"tool_error code \"nope\" is not among the server's errors (at program.star:27:15)","code":"fail"}`},
		{"bad_sql", `{}`, `{"internalError":"query(\"SELEC 1\"): sql syntax: near SELEC (at program.star:33:17)","code":"sql"}`},
		{"weft.resource.read", `{}`, `{"content":[{"type":"text","text":"request \"weft.resource.read\" is not served by synthesized servers"}],"isError":true}`},
	} {
		got := string(in.Dispatch(ctx, h, request(tc.tool, tc.args, true)))
		if got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, got, tc.want)
		}
	}
	// The dict argument was bound as its JSON text, keys in order.
	last := h.reqs[len(h.reqs)-2] // the UPDATE, before bad_sql's statement
	if diff := cmp.Diff([]json.RawMessage{json.RawMessage(`"{\"b\":[1,2.5],\"a\":\"x\"}"`), json.RawMessage(`"u1"`)}, last.Args); diff != "" {
		t.Errorf("UPDATE args (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"stamping"}, h.logs); diff != "" {
		t.Errorf("logs (-want +got):\n%s", diff)
	}
}

func TestDispatchRuntimeError(t *testing.T) {
	got := string(interp.New(interp.Options{}).Dispatch(context.Background(), &fakeHost{sql: users}, request("broken", `{}`, true)))
	if !strings.HasPrefix(got, `{"internalError":"Traceback`) || !strings.Contains(got, "floored division by zero") || !strings.HasSuffix(got, `"code":"fail"}`) {
		t.Errorf("broken: %s", got)
	}
	got = string(interp.New(interp.Options{}).Dispatch(context.Background(), &fakeHost{sql: users}, request("opaque", `{}`, true)))
	if got != `{"internalError":"tool opaque returned set: a set has no JSON form","code":"fail"}` {
		t.Errorf("opaque: %s", got)
	}
}

// A program travels by digest: without its source, an interpreter that
// has not compiled it asks for it; once compiled, the digest is enough.
func TestProgramByDigest(t *testing.T) {
	in := interp.New(interp.Options{})
	h := &fakeHost{sql: users}
	ctx := context.Background()
	digest := spec.ProgramDigest(program, []string{"not_found"})
	if in.Has(digest) {
		t.Fatal("fresh interpreter has the program")
	}
	got := string(in.Dispatch(ctx, h, request("list_users", `{}`, false)))
	if want := `{"internalError":"no compiled program ` + digest + `: send its source","code":"program_missing"}`; got != want {
		t.Fatalf("without source: %s", got)
	}
	in.Dispatch(ctx, h, request("list_users", `{}`, true))
	if !in.Has(digest) {
		t.Fatal("program not cached")
	}
	if got := string(in.Dispatch(ctx, h, request("list_users", `{}`, false))); got != `{"content":[{"type":"text","text":"[\"u1\",\"u2\"]"}]}` {
		t.Fatalf("by digest: %s", got)
	}
}

// The cache keeps at most MaxPrograms programs, dropping the least
// recently used.
func TestProgramCacheBound(t *testing.T) {
	in := interp.New(interp.Options{MaxPrograms: 2})
	h := &fakeHost{sql: users}
	ctx := context.Background()
	var digests []string
	for i := range 3 {
		src := "def f():\n    return " + string(rune('0'+i)) + "\n"
		d := spec.ProgramDigest(src, nil)
		digests = append(digests, d)
		b, _ := json.Marshal(abi.CallRequest{Tool: "f", Arguments: json.RawMessage(`{}`), Program: &abi.Program{Digest: d, Source: src}})
		if got := string(in.Dispatch(ctx, h, b)); got != `{"content":[{"type":"text","text":"`+string(rune('0'+i))+`"}]}` {
			t.Fatalf("program %d: %s", i, got)
		}
	}
	if in.Has(digests[0]) || !in.Has(digests[1]) || !in.Has(digests[2]) {
		t.Errorf("cache after 3 programs with room for 2: %v %v %v", in.Has(digests[0]), in.Has(digests[1]), in.Has(digests[2]))
	}
}

// The cache keeps programs up to MaxProgramBytes of ProgramCharge,
// dropping the least recently used (a call moves its program to the back);
// one program alone over the bound is still kept.
func TestProgramCacheBytes(t *testing.T) {
	h := &fakeHost{sql: users}
	ctx := context.Background()
	src := func(i int) string { return "def f():\n    return " + string(rune('0'+i)) + "\n" }
	charge := interp.ProgramCharge(len(src(0)))
	call := func(t *testing.T, in *interp.Interpreter, i int) string {
		t.Helper()
		b, _ := json.Marshal(abi.CallRequest{Tool: "f", Arguments: json.RawMessage(`{}`), Program: &abi.Program{Digest: spec.ProgramDigest(src(i), nil), Source: src(i)}})
		got := string(in.Dispatch(ctx, h, b))
		if want := `{"content":[{"type":"text","text":"` + string(rune('0'+i)) + `"}]}`; got != want {
			t.Fatalf("program %d: %s, want %s", i, got, want)
		}
		return spec.ProgramDigest(src(i), nil)
	}
	t.Run("lru", func(t *testing.T) {
		in := interp.New(interp.Options{MaxProgramBytes: 2*charge + charge/2})
		d0, d1 := call(t, in, 0), call(t, in, 1)
		call(t, in, 0) // 0 is now the most recently used
		d2 := call(t, in, 2)
		if !in.Has(d0) || in.Has(d1) || !in.Has(d2) {
			t.Errorf("kept 0:%v 1:%v 2:%v, want 0 and 2 (1 least recently used)", in.Has(d0), in.Has(d1), in.Has(d2))
		}
		if n, b := in.Stats(); n != 2 || b != 2*charge {
			t.Errorf("Stats = %d programs, %d bytes; want 2, %d", n, b, 2*charge)
		}
	})
	t.Run("one-over", func(t *testing.T) {
		in := interp.New(interp.Options{MaxProgramBytes: 1})
		d0 := call(t, in, 0)
		if !in.Has(d0) {
			t.Error("a program alone over the bound was dropped")
		}
		d1 := call(t, in, 1)
		if in.Has(d0) || !in.Has(d1) {
			t.Errorf("kept 0:%v 1:%v, want only 1", in.Has(d0), in.Has(d1))
		}
		if n, b := in.Stats(); n != 1 || b != charge {
			t.Errorf("Stats = %d, %d; want 1, %d", n, b, charge)
		}
	})
}

func TestCompileErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"def f(:\n  pass\n", "program: program.star:1:8: got ':', want ')'"},
		{"x = query('SELECT 1')\n", "program init: Traceback (most recent call last):\n  program.star:1:10: in <toplevel>\nError in query: query() can only be called while a tool runs, not at the program's top level"},
		{"def f():\n    return undefined_name\n", "program: program.star:2:12: undefined: undefined_name"},
	} {
		err := interp.Check(tc.src)
		if err == nil || err.Error() != tc.want {
			t.Errorf("Check(%q) = %v\nwant %s", tc.src, err, tc.want)
		}
	}
	fns, err := interp.Functions(program)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]interp.Param{{Name: "limit", Required: false}}, fns["list_users"]); diff != "" {
		t.Errorf("list_users params (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]interp.Param{{Name: "user_id", Required: true}, {Name: "prefs", Required: true}}, fns["set_prefs"]); diff != "" {
		t.Errorf("set_prefs params (-want +got):\n%s", diff)
	}
	if _, ok := fns["LIMIT"]; ok {
		t.Error("a constant listed as a function")
	}
}

// A deadline on the call's context stops a running program.
func TestDeadlineCancels(t *testing.T) {
	in := interp.New(interp.Options{MaxSteps: 1 << 62})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	got := string(in.Dispatch(ctx, &fakeHost{sql: users}, request("spin", `{}`, true)))
	if !strings.Contains(got, "deadline: context deadline exceeded") || !strings.HasSuffix(got, `"code":"deadline"}`) {
		t.Errorf("spin with a deadline: %s", got)
	}
}

// Same state, arguments and host give the same answer (replay relies on it).
func TestDeterministic(t *testing.T) {
	var first string
	for i := range 5 {
		got := string(interp.New(interp.Options{}).Dispatch(context.Background(), &fakeHost{sql: users}, request("stamp", `{}`, true)))
		if i == 0 {
			first = got
		} else if got != first {
			t.Fatalf("run %d: %s, first %s", i, got, first)
		}
	}
}

// Cells of every column type read back as the values they hold, with and
// without JSON escapes.
func TestCellValues(t *testing.T) {
	const src = "def row():\n    return query_one('SELECT * FROM t')\n"
	h := &fakeHost{sql: func(abi.SQLRequest) string {
		return `{"columns":["s","e","u","i","big","f","d","j","tm","n"],"types":["string","string","string","int","int","float","decimal","json","time","int"],` +
			`"rows":[["plain","a\"b\\c\u00e9","héllo",-42,123456789012345678901234,2.5,"0.10",[1,{"k":"v"}],"2024-05-15T15:00:00Z",null]],"rows_affected":0,"last_insert_id":0,"error":null}`
	}}
	b, _ := json.Marshal(abi.CallRequest{Tool: "row", Arguments: json.RawMessage(`{}`), Program: &abi.Program{Digest: spec.ProgramDigest(src, nil), Source: src}})
	got := string(interp.New(interp.Options{}).Dispatch(context.Background(), h, b))
	const want = `{"s":"plain","e":"a\"b\\cé","u":"héllo","i":-42,"big":123456789012345678901234,"f":2.5,"d":0.1,"j":[1,{"k":"v"}],"tm":"2024-05-15T15:00:00Z","n":null}`
	var res abi.CallResult
	if err := json.Unmarshal([]byte(got), &res); err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredContent) != want {
		t.Errorf("row:\n got %s\nwant %s", res.StructuredContent, want)
	}
}
