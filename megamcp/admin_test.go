package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// The HTTP tests share one module runtime: it compiles each test module
// once per process (Runtime.Compile is deduplicated by digest; the compiled
// code is also in megamcptest's cache shared across processes), so a fresh
// Server per test costs only its seed versions.
var (
	httpRTOnce sync.Once
	httpRT     *module.Runtime
	httpRTErr  error
)

const testToken = "sekret"

func sharedRuntime(t *testing.T) *module.Runtime {
	t.Helper()
	httpRTOnce.Do(func() {
		httpRT, httpRTErr = module.NewRuntime(context.Background(), module.Config{CallTimeout: 10 * time.Second, CacheDir: megamcptest.CacheDir()})
	})
	if httpRTErr != nil {
		t.Fatal(httpRTErr)
	}
	return httpRT
}

// newHTTPServer opens a Server (on a data directory, so the ledger and
// versions go through the disk) and serves its Handler with opts (Token
// defaults to testToken) on a loopback httptest server.
func newHTTPServer(t *testing.T, opts HTTPOptions) (*Server, *httptest.Server) {
	t.Helper()
	return newHTTPServerMetrics(t, nil, opts)
}

// newHTTPServerMetrics is newHTTPServer with metrics (nil: none).
func newHTTPServerMetrics(t *testing.T, met *Metrics, opts HTTPOptions) (*Server, *httptest.Server) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, Config{Runtime: sharedRuntime(t), Registry: megamcptest.Registry(t), DataDir: t.TempDir(),
		CheckpointInterval: -1, Fsync: FsyncNever, Metrics: met})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Token == "" {
		opts.Token = testToken
	}
	h, err := s.Handler(ctx, opts)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, ts
}

// api is a client of the admin API.
type api struct {
	t     *testing.T
	base  string
	token string
}

func newAPI(t *testing.T, ts *httptest.Server) *api {
	return &api{t: t, base: ts.URL, token: testToken}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends a request; body is sent as is if it is a string or []byte, else
// JSON-encoded. hdr are header name/value pairs.
func (a *api) do(method, path string, body any, hdr ...string) response {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: raw}
}

// json decodes the body into v after checking the status and content type.
func (r response) json(t *testing.T, status int, v any) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q: %s", ct, r.body)
	}
	if v == nil {
		return
	}
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// apiErr checks that r is an admin API error with the given status and code
// and returns it.
func (r response) apiErr(t *testing.T, status int, code string) apiError {
	t.Helper()
	var e apiError
	r.json(t, status, &e)
	if e.Error.Code != code || e.Error.Message == "" {
		t.Fatalf("error %+v, want code %q (status %d)", e.Error, code, status)
	}
	return e
}

// sessionJSON is the admin API's session object.
type sessionJSON struct {
	SessionInfo
	MCP string `json:"mcp"`
}

func (a *api) session(id string) sessionJSON {
	a.t.Helper()
	var s sessionJSON
	a.do("GET", "/v1/sessions/"+id, nil).json(a.t, 200, &s)
	return s
}

func (a *api) create(req any) sessionJSON {
	a.t.Helper()
	var s sessionJSON
	a.do("POST", "/v1/sessions", req).json(a.t, 201, &s)
	return s
}

// callJSON is a CallResult as the admin API returns it.
type callJSON struct {
	Result struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
	} `json:"result"`
	Seq         uint64 `json:"seq"`
	Generation  uint64 `json:"generation"`
	Index       uint64 `json:"index"`
	RowsChanged int    `json:"rows_changed"`
}

func (a *api) call(id, tool string, args any, hdr ...string) callJSON {
	a.t.Helper()
	var c callJSON
	a.do("POST", "/v1/sessions/"+id+"/calls", map[string]any{"tool": tool, "arguments": args}, hdr...).json(a.t, 200, &c)
	return c
}

func (a *api) ledger(id, query string) (recs []Record, next *uint64) {
	a.t.Helper()
	var body struct {
		Records []Record `json:"records"`
		Next    *uint64  `json:"next"`
	}
	a.do("GET", "/v1/sessions/"+id+"/ledger"+query, nil).json(a.t, 200, &body)
	return body.Records, body.Next
}

func jsonEq(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got %s, want %s", got, want)
	}
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestAdminSessions(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)

	// create
	before := time.Now().UTC()
	r := a.do("POST", "/v1/sessions", `{"modules":["hello"],"seed":7}`)
	var info sessionJSON
	r.json(t, http.StatusCreated, &info)
	id := info.ID
	if !validID(id) || info.MCP != "/mcp/sessions/"+id {
		t.Fatalf("id %q mcp %q", id, info.MCP)
	}
	g, err := s.group(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	seedID := VersionID(g.seed)
	if !slices.Equal(info.Modules, []string{"hello"}) || len(info.Digests) != 1 || !strings.HasPrefix(info.Digests[0], "sha256:") ||
		info.Version != seedID || info.Hash != seedID || info.Generation != 1 || info.Seed != 7 ||
		!info.Clock.Equal(module.DefaultEpoch) || info.Calls != 0 || info.Ledger != 0 || info.Checkpoint != 0 ||
		!slices.Equal(info.Tools, []string{"add_note", "list_notes", "now", "random"}) ||
		info.Created.Before(before.Add(-time.Second)) || info.Created.After(time.Now().Add(time.Second)) {
		t.Fatalf("created session %s", r.body)
	}
	// A second session with its own clock.
	clock := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	other := a.create(map[string]any{"modules": []string{"hello"}, "clock": clock})
	if other.ID == id || !other.Clock.Equal(clock) || other.Seed != 0 {
		t.Fatalf("second session %+v", other)
	}

	// get, list
	if got := a.session(id); !reflect.DeepEqual(got, info) {
		t.Fatalf("get = %+v, want %+v", got, info)
	}
	var list struct {
		Sessions []string `json:"sessions"`
	}
	a.do("GET", "/v1/sessions", nil).json(t, 200, &list)
	want := []string{id, other.ID}
	slices.Sort(want)
	if !slices.Equal(list.Sessions, want) {
		t.Fatalf("list = %v, want %v", list.Sessions, want)
	}

	// calls: a result, then refused calls as isError results
	c := a.call(id, "add_note", map[string]string{"text": "buy milk"})
	if c.Result.IsError || c.Seq != 0 || c.Index != 0 || c.Generation != 1 || c.RowsChanged != 1 ||
		len(c.Result.Content) != 1 || c.Result.Content[0].Type != "text" || c.Result.Content[0].Text != `{"id":1}` {
		t.Fatalf("add_note = %+v", c)
	}
	jsonEq(t, c.Result.StructuredContent, `{"id":1}`)
	h1 := a.session(id).Hash
	c = a.call(id, "add_note", map[string]int{"txt": 1})
	if !c.Result.IsError || c.Index != 1 || c.Seq != 1 || c.RowsChanged != 0 || !strings.Contains(c.Result.Content[0].Text, "invalid arguments") {
		t.Fatalf("invalid arguments = %+v", c)
	}
	c = a.call(id, "no_such_tool", nil)
	if !c.Result.IsError || c.Index != 2 || !strings.Contains(c.Result.Content[0].Text, "no_such_tool") {
		t.Fatalf("unknown tool = %+v", c)
	}
	if got := a.session(id); got.Hash != h1 || got.Calls != 3 || got.Ledger != 3 {
		t.Fatalf("after refused calls: %+v", got)
	}
	c = a.call(id, "list_notes", nil)
	jsonEq(t, c.Result.StructuredContent, `{"notes":[{"id":1,"text":"buy milk"}]}`)

	// snapshot -> version id (the state hash)
	var snap struct {
		Version string `json:"version"`
	}
	a.do("POST", "/v1/sessions/"+id+"/snapshot", nil).json(t, 200, &snap)
	if snap.Version != h1 || !hex64.MatchString(snap.Version) {
		t.Fatalf("snapshot %q, hash %s", snap.Version, h1)
	}
	a.call(id, "add_note", map[string]string{"text": "call mom"})

	// restore -> generation, in the body and the Weft-Generation header
	var rs struct {
		Generation uint64 `json:"generation"`
	}
	r = a.do("POST", "/v1/sessions/"+id+"/restore", map[string]string{"version": snap.Version})
	r.json(t, 200, &rs)
	if rs.Generation != 2 || r.header.Get(GenerationHeader) != "2" {
		t.Fatalf("restore = %s, header %q", r.body, r.header.Get(GenerationHeader))
	}
	if got := a.session(id); got.Hash != snap.Version || got.Generation != 2 {
		t.Fatalf("after restore: %+v", got)
	}
	// With the current generation (query parameter), a second restore.
	r = a.do("POST", "/v1/sessions/"+id+"/restore?generation=2", map[string]string{"version": snap.Version})
	r.json(t, 200, &rs)
	if rs.Generation != 3 || r.header.Get(GenerationHeader) != "3" {
		t.Fatalf("second restore = %s", r.body)
	}

	// A stale generation, as header, query parameter or JSON field, is
	// refused on every fenced route and changes nothing.
	cur := a.session(id)
	calls := `{"tool":"add_note","arguments":{"text":"stale"}}`
	for _, tc := range []struct {
		name, method, path string
		body               any
		hdr                []string
	}{
		{"call header", "POST", "/calls", calls, []string{GenerationHeader, "1"}},
		{"call query", "POST", "/calls?generation=1", calls, nil},
		{"call field", "POST", "/calls", `{"tool":"add_note","arguments":{"text":"stale"},"generation":1}`, nil},
		{"restore header", "POST", "/restore", map[string]string{"version": seedID}, []string{GenerationHeader, "1"}},
		{"restore field", "POST", "/restore", map[string]any{"version": seedID, "generation": 1}, nil},
		{"snapshot query", "POST", "/snapshot?generation=4", nil, nil},
		{"fork field", "POST", "/fork", `{"generation":1}`, nil},
		{"clock header", "POST", "/clock", `{"time":"2030-01-01T00:00:00Z"}`, []string{GenerationHeader, "1"}},
		{"verify field", "POST", "/verify", `{"checks":[],"generation":1}`, nil},
		{"delete query", "DELETE", "?generation=1", nil, nil},
	} {
		r := a.do(tc.method, "/v1/sessions/"+id+tc.path, tc.body, tc.hdr...)
		e := r.apiErr(t, http.StatusConflict, "stale_generation")
		if e.Error.CurrentGeneration != 3 || r.header.Get(GenerationHeader) != "3" {
			t.Fatalf("%s: %s (header %q)", tc.name, r.body, r.header.Get(GenerationHeader))
		}
	}
	if got := a.session(id); !reflect.DeepEqual(got, cur) {
		t.Fatalf("fenced requests changed the session:\n%+v\n%+v", cur, got)
	}
	if n := len(s.Sessions()); n != 2 {
		t.Fatalf("%d sessions after a fenced fork", n)
	}
	// The header wins over the body field; the current generation passes.
	if c := a.call(id, "list_notes", nil, GenerationHeader, "3"); c.Generation != 3 || c.Result.IsError {
		t.Fatalf("call with the current generation: %+v", c)
	}
	r = a.do("POST", "/v1/sessions/"+id+"/calls", `{"tool":"list_notes","generation":3}`, GenerationHeader, "1")
	r.apiErr(t, http.StatusConflict, "stale_generation")

	// fork: of the current state, then of a version
	var fk sessionJSON
	a.do("POST", "/v1/sessions/"+id+"/fork", `{"generation":3}`).json(t, http.StatusCreated, &fk)
	if fk.ID == id || !validID(fk.ID) || fk.Hash != cur.Hash || fk.Version != cur.Hash || fk.Seed != 7 ||
		fk.Generation != 1 || fk.Calls != 0 || fk.MCP != "/mcp/sessions/"+fk.ID || !slices.Equal(fk.Digests, cur.Digests) {
		t.Fatalf("fork = %+v (source %+v)", fk, cur)
	}
	a.call(fk.ID, "add_note", map[string]string{"text": "in fork"})
	c = a.call(id, "list_notes", nil)
	jsonEq(t, c.Result.StructuredContent, `{"notes":[{"id":1,"text":"buy milk"}]}`)
	var fk2 sessionJSON
	a.do("POST", "/v1/sessions/"+id+"/fork", map[string]string{"version": seedID}).json(t, http.StatusCreated, &fk2)
	if fk2.Hash != seedID || fk2.Version != seedID {
		t.Fatalf("fork of the seed = %+v", fk2)
	}

	// clock
	var ck struct {
		Clock time.Time `json:"clock"`
	}
	r = a.do("POST", "/v1/sessions/"+id+"/clock", `{"time":"2030-01-02T04:04:05+01:00"}`)
	r.json(t, 200, &ck)
	if string(bytes.TrimSpace(r.body)) != `{"clock":"2030-01-02T03:04:05Z"}` {
		t.Fatalf("clock = %s", r.body)
	}
	c = a.call(id, "now", nil)
	jsonEq(t, c.Result.StructuredContent, `{"now":"2030-01-02T03:04:05Z"}`)
	if got := a.session(id).Clock; !got.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("session clock %v", got)
	}

	// ledger, paged
	all, next := a.ledger(id, "")
	if next != nil {
		t.Fatalf("next = %d on a short ledger", *next)
	}
	var kinds []string
	for i, rec := range all {
		if rec.Index != uint64(i) || rec.Session != id || rec.Time.IsZero() {
			t.Fatalf("record %d = %+v", i, rec)
		}
		k := rec.Kind
		if rec.Kind == KindCall {
			k = rec.Tool
			if rec.Error != nil {
				k += ":" + rec.Error.Kind
			}
		}
		kinds = append(kinds, k)
	}
	wantKinds := "add_note add_note:invalid_arguments no_such_tool:unknown_tool list_notes add_note restore restore list_notes list_notes clock now"
	if strings.Join(kinds, " ") != wantKinds {
		t.Fatalf("ledger\n got %s\nwant %s", strings.Join(kinds, " "), wantKinds)
	}
	if rec := all[0]; rec.Module != "hello" || rec.Generation != 1 || rec.RowsChanged != 1 || rec.Clock != module.DefaultEpoch.UnixNano() {
		t.Fatalf("record 0 = %+v", rec)
	}
	jsonEq(t, all[0].Arguments, `{"text":"buy milk"}`)
	if rec := all[5]; rec.Version != snap.Version || rec.Generation != 2 {
		t.Fatalf("restore record = %+v", rec)
	}
	if rec := all[9]; rec.Clock != time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano() || rec.Generation != 3 {
		t.Fatalf("clock record = %+v", rec)
	}
	var paged []Record
	q := "?limit=4"
	for pages := 0; ; pages++ {
		if pages > len(all) {
			t.Fatal("paging does not end")
		}
		recs, next := a.ledger(id, q)
		paged = append(paged, recs...)
		if next == nil {
			break
		}
		if *next != recs[len(recs)-1].Index+1 {
			t.Fatalf("next = %d after record %d", *next, recs[len(recs)-1].Index)
		}
		q = "?limit=4&from=" + itoa(*next)
	}
	if !reflect.DeepEqual(paged, all) {
		t.Fatalf("paged ledger differs:\n%+v\n%+v", paged, all)
	}
	if recs, next := a.ledger(id, "?from=100"); len(recs) != 0 || next != nil {
		t.Fatalf("ledger past the end: %v %v", recs, next)
	}
	if r := a.do("GET", "/v1/sessions/"+id+"/ledger?from=100", nil); !strings.Contains(string(r.body), `"records":[]`) {
		t.Fatalf("empty page = %s", r.body)
	}

	// delete -> 204, then 404 everywhere
	r = a.do("DELETE", "/v1/sessions/"+fk.ID, nil)
	if r.status != http.StatusNoContent || len(r.body) != 0 {
		t.Fatalf("delete = %d %s", r.status, r.body)
	}
	a.do("GET", "/v1/sessions/"+fk.ID, nil).apiErr(t, 404, "no_such_session")
	a.do("DELETE", "/v1/sessions/"+fk.ID, nil).apiErr(t, 404, "no_such_session")
	a.do("POST", "/v1/sessions/"+fk.ID+"/calls", `{"tool":"list_notes"}`).apiErr(t, 404, "no_such_session")
	if r := a.do("DELETE", "/v1/sessions/"+id, nil, GenerationHeader, "3"); r.status != http.StatusNoContent {
		t.Fatalf("fenced delete with the current generation: %d %s", r.status, r.body)
	}
	a.do("GET", "/v1/sessions", nil).json(t, 200, &list)
	want = []string{other.ID, fk2.ID}
	slices.Sort(want)
	if !slices.Equal(list.Sessions, want) {
		t.Fatalf("list after deletes = %v, want %v", list.Sessions, want)
	}
}

func itoa(n uint64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func TestAdminStateVersionsDiffVerifyReplay(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"hello"}, "seed": 1})
	id, base := info.ID, info.Version
	a.call(id, "add_note", map[string]string{"text": "one"})
	a.call(id, "add_note", map[string]string{"text": "two"})
	a.call(id, "random", nil)

	// state export: a weft.state/v1 document of the current state
	r := a.do("GET", "/v1/sessions/"+id+"/state", nil)
	var doc struct {
		Format string `json:"format"`
		Tables []struct {
			Name    string   `json:"name"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"tables"`
	}
	r.json(t, 200, &doc)
	if doc.Format != "weft.state/v1" || len(doc.Tables) != 1 || doc.Tables[0].Name != "notes" ||
		!reflect.DeepEqual(doc.Tables[0].Rows, [][]any{{1.0, "one"}, {2.0, "two"}}) {
		t.Fatalf("state = %s", r.body)
	}
	// POSTed back to /v1/versions it is the version a snapshot gives.
	var imp, snap struct {
		Version string `json:"version"`
	}
	a.do("POST", "/v1/versions", r.body).json(t, http.StatusCreated, &imp)
	a.do("POST", "/v1/sessions/"+id+"/snapshot", nil).json(t, 200, &snap)
	cur := a.session(id).Hash
	if imp.Version != snap.Version || imp.Version != cur {
		t.Fatalf("imported %s, snapshot %s, hash %s", imp.Version, snap.Version, cur)
	}
	// versions/{vid} returns the same document.
	g := a.do("GET", "/v1/versions/"+imp.Version, nil)
	if g.status != 200 || g.header.Get("Content-Type") != "application/json" || !bytes.Equal(g.body, r.body) {
		t.Fatalf("version %d %s\nwant %s", g.status, g.body, r.body)
	}
	// An imported version no session made: a session can start from it.
	other := strings.Replace(string(r.body), `"two"`, `"deux"`, 1)
	a.do("POST", "/v1/versions", other).json(t, http.StatusCreated, &imp)
	if imp.Version == snap.Version || !hex64.MatchString(imp.Version) {
		t.Fatalf("imported edited state: %s", imp.Version)
	}
	fromImp := a.create(map[string]any{"modules": []string{"hello"}, "version": imp.Version})
	if fromImp.Hash != imp.Version || fromImp.Version != imp.Version {
		t.Fatalf("session from an imported version: %+v", fromImp)
	}
	c := a.call(fromImp.ID, "list_notes", nil)
	jsonEq(t, c.Result.StructuredContent, `{"notes":[{"id":1,"text":"one"},{"id":2,"text":"deux"}]}`)
	a.do("GET", "/v1/versions/"+strings.Repeat("0", 64), nil).apiErr(t, 404, "no_such_version")
	a.do("POST", "/v1/versions", `{"format":"nope"}`).apiErr(t, 400, "bad_request")

	// diff: the session against its base, from a version, and /v1/diff
	added := `{"tables":[{"table":"notes","columns":["id","text"],"primary_key":["id"],"added":[{"key":[1],"values":[1,"one"]},{"key":[2],"values":[2,"two"]}]}]}`
	r = a.do("GET", "/v1/sessions/"+id+"/diff", nil)
	r.json(t, 200, nil)
	jsonEq(t, r.body, added)
	r = a.do("GET", "/v1/sessions/"+id+"/diff?from="+base, nil)
	jsonEq(t, r.body, added)
	r = a.do("GET", "/v1/diff?a="+base+"&b=session:"+id, nil)
	r.json(t, 200, nil)
	jsonEq(t, r.body, added)
	r = a.do("GET", "/v1/diff?a="+snap.Version+"&b="+imp.Version, nil)
	r.json(t, 200, nil)
	jsonEq(t, r.body, `{"tables":[{"table":"notes","columns":["id","text"],"primary_key":["id"],"changed":[{"key":[2],"columns":[{"column":"text","old":"two","new":"deux"}]}]}]}`)
	r = a.do("GET", "/v1/diff?a=session:"+id+"&b="+snap.Version, nil)
	jsonEq(t, r.body, `{"tables":[]}`)
	a.do("GET", "/v1/diff?a="+base, nil).apiErr(t, 400, "bad_request")
	a.do("GET", "/v1/diff?a="+base+"&b=session:nope", nil).apiErr(t, 404, "no_such_session")
	a.do("GET", "/v1/sessions/"+id+"/diff?from=nope", nil).apiErr(t, 404, "no_such_version")

	// verify: sql, hash and tool checks, passing and failing
	var vr VerifyResult
	a.do("POST", "/v1/sessions/"+id+"/verify", map[string]any{"checks": []map[string]any{
		{"name": "rows", "sql": "SELECT id, text FROM notes ORDER BY id", "expect": [][]any{{1, "one"}, {2, "two"}}},
		{"name": "count", "sql": "SELECT COUNT(*) FROM notes", "expect": [][]any{{3}}},
		{"name": "hash", "hash": cur},
		{"name": "wrong hash", "hash": base},
		{"name": "added one", "tool": "add_note", "arguments": map[string]string{"text": "one"}, "times": 1},
		{"name": "added twice", "tool": "hello__add_note", "times": 2},
		{"name": "never added three", "tool": "add_note", "arguments": map[string]string{"text": "three"}},
		{"name": "bad sql", "sql": "SELECT nope FROM notes"},
	}}).json(t, 200, &vr)
	wantPassed := []bool{true, false, true, false, true, true, false, false}
	if vr.Passed || vr.Hash != cur || len(vr.Checks) != len(wantPassed) {
		t.Fatalf("verify = %+v", vr)
	}
	for i, c := range vr.Checks {
		if c.Passed != wantPassed[i] {
			t.Fatalf("check %d %q passed=%v: %+v", i, c.Name, c.Passed, c)
		}
	}
	jsonEq(t, vr.Checks[1].Got, `[[2]]`)
	jsonEq(t, vr.Checks[2].Got, `"`+cur+`"`)
	jsonEq(t, vr.Checks[5].Got, `2`)
	jsonEq(t, vr.Checks[6].Got, `0`)
	if vr.Checks[7].Message == "" || vr.Checks[1].Message == "" {
		t.Fatalf("failed checks without a message: %+v", vr.Checks)
	}
	a.do("POST", "/v1/sessions/"+id+"/verify", map[string]any{"checks": []map[string]any{{"name": "all passing", "hash": cur}}}).json(t, 200, &vr)
	if !vr.Passed {
		t.Fatalf("verify = %+v", vr)
	}
	a.do("POST", "/v1/sessions/"+id+"/verify", `{"checks":[{"name":"two","hash":"x","tool":"y"}]}`).apiErr(t, 400, "bad_request")

	// replay: the ledger re-run from the initial version gives the state
	var rp struct {
		ReplayHash string `json:"replay_hash"`
		Hash       string `json:"hash"`
		Equal      bool   `json:"equal"`
	}
	a.do("POST", "/v1/sessions/"+id+"/replay", nil).json(t, 200, &rp)
	if !rp.Equal || rp.Hash != cur || rp.ReplayHash != cur {
		t.Fatalf("replay = %+v, hash %s", rp, cur)
	}
	a.do("POST", "/v1/sessions/nope/replay", nil).apiErr(t, 404, "no_such_session")
	if got := a.session(id); got.Hash != cur || got.Ledger != 3 {
		t.Fatalf("inspection changed the session: %+v", got)
	}
	_ = s
}

func TestAdminErrors(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"hello"}})
	id := info.ID
	a.call(id, "add_note", map[string]string{"text": "x"})
	before := a.session(id)

	// No token or a wrong one: 401, and nothing happens.
	for _, tok := range []string{"", "wrong", testToken + "x"} {
		u := &api{t: t, base: ts.URL, token: tok}
		for _, rq := range []struct{ method, path, body string }{
			{"GET", "/v1/sessions", ""},
			{"POST", "/v1/sessions", `{"modules":["hello"]}`},
			{"POST", "/v1/sessions/" + id + "/calls", `{"tool":"add_note","arguments":{"text":"intruder"}}`},
			{"POST", "/v1/sessions/" + id + "/restore", `{"version":"` + info.Version + `"}`},
			{"DELETE", "/v1/sessions/" + id, ""},
			{"GET", "/v1/sessions/" + id + "/state", ""},
			{"GET", "/v1/nothing", ""},
		} {
			var body any
			if rq.body != "" {
				body = rq.body
			}
			r := u.do(rq.method, rq.path, body)
			r.apiErr(t, http.StatusUnauthorized, "unauthorized")
			if r.header.Get("WWW-Authenticate") != `Bearer realm="weft"` {
				t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		}
	}
	// A token in another scheme is not accepted either.
	r := a.do("GET", "/v1/sessions", nil, "Authorization", "Basic "+testToken)
	r.apiErr(t, http.StatusUnauthorized, "unauthorized")
	if got := a.session(id); !reflect.DeepEqual(got, before) || len(s.Sessions()) != 1 {
		t.Fatalf("unauthorized requests changed something: %+v -> %+v, %d sessions", before, got, len(s.Sessions()))
	}

	// Malformed requests: 400 bad_request.
	for _, rq := range []struct {
		method, path, body string
		hdr                []string
	}{
		{"POST", "/v1/sessions", `{"modules":["hello"`, nil},
		{"POST", "/v1/sessions", `{"modules":["hello"],"bogus":1}`, nil},
		{"POST", "/v1/sessions", `{"modules":"hello"}`, nil},
		{"POST", "/v1/sessions", `{}`, nil},
		{"POST", "/v1/sessions/" + id + "/calls", `{"tool":`, nil},
		{"POST", "/v1/sessions/" + id + "/calls", `[1,2]`, nil},
		{"POST", "/v1/sessions/" + id + "/calls", `{"tool":"now"}`, []string{GenerationHeader, "x"}},
		{"POST", "/v1/sessions/" + id + "/calls?generation=-1", `{"tool":"now"}`, nil},
		{"POST", "/v1/sessions/" + id + "/restore", `{}`, nil},
		{"POST", "/v1/sessions/" + id + "/restore", `{"version":1}`, nil},
		{"POST", "/v1/sessions/" + id + "/clock", `{}`, nil},
		{"POST", "/v1/sessions/" + id + "/clock", `{"time":"tomorrow"}`, nil},
		{"POST", "/v1/sessions/" + id + "/snapshot", `nope`, nil},
		{"POST", "/v1/sessions/" + id + "/fork", `{"version":`, nil},
		{"POST", "/v1/sessions/" + id + "/verify", `{"checks":{}}`, nil},
		{"GET", "/v1/sessions/" + id + "/ledger?limit=0", "", nil},
		{"GET", "/v1/sessions/" + id + "/ledger?limit=10001", "", nil},
		{"GET", "/v1/sessions/" + id + "/ledger?from=x", "", nil},
		{"DELETE", "/v1/sessions/" + id, "", []string{GenerationHeader, "one"}},
		{"POST", "/v1/versions", `not json`, nil},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		r := a.do(rq.method, rq.path, body, rq.hdr...)
		e := r.apiErr(t, http.StatusBadRequest, "bad_request")
		if !strings.HasPrefix(e.Error.Message, "bad request") {
			t.Fatalf("%s %s: message %q", rq.method, rq.path, e.Error.Message)
		}
	}

	// Unknown session: 404 no_such_session on every session route.
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "", ""}, {"DELETE", "", ""},
		{"POST", "/calls", `{"tool":"now"}`}, {"POST", "/snapshot", ""},
		{"POST", "/restore", `{"version":"` + info.Version + `"}`}, {"POST", "/fork", ""},
		{"POST", "/clock", `{"time":"2030-01-01T00:00:00Z"}`}, {"GET", "/ledger", ""},
		{"GET", "/state", ""}, {"GET", "/diff", ""}, {"POST", "/verify", `{"checks":[]}`},
		{"POST", "/replay", ""},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		e := a.do(rq.method, "/v1/sessions/"+strings.ToUpper(id)+rq.path, body).apiErr(t, http.StatusNotFound, "no_such_session")
		if !strings.Contains(e.Error.Message, strings.ToUpper(id)) {
			t.Fatalf("%s %s: %q", rq.method, rq.path, e.Error.Message)
		}
	}
	// Unknown module and version: 404.
	a.do("POST", "/v1/sessions", `{"modules":["hello","nope:1"]}`).apiErr(t, http.StatusNotFound, "no_such_module")
	a.do("POST", "/v1/sessions", `{"modules":["sha256:`+strings.Repeat("ab", 32)+`"]}`).apiErr(t, http.StatusNotFound, "no_such_module")
	a.do("POST", "/v1/sessions", `{"modules":["hello"],"version":"abc"}`).apiErr(t, http.StatusNotFound, "no_such_version")
	a.do("POST", "/v1/sessions/"+id+"/restore", `{"version":"abc"}`).apiErr(t, http.StatusNotFound, "no_such_version")
	// fx reads a table its seed does not have: 400.
	a.do("POST", "/v1/sessions", `{"modules":["fx"]}`).apiErr(t, http.StatusBadRequest, "bad_request")

	// Unknown routes and methods: 404 JSON.
	for _, rq := range []struct{ method, path string }{
		{"GET", "/v1/nothing"}, {"GET", "/v1/"}, {"PUT", "/v1/sessions"}, {"PATCH", "/v1/sessions/" + id},
		{"GET", "/v1/sessions/" + id + "/calls"}, {"POST", "/v1/sessions/" + id + "/nothing"}, {"GET", "/v1/versions"},
	} {
		e := a.do(rq.method, rq.path, nil).apiErr(t, http.StatusNotFound, "not_found")
		if e.Error.Message != "no route "+rq.method+" "+rq.path {
			t.Fatalf("message %q", e.Error.Message)
		}
	}
	if got := a.session(id); !reflect.DeepEqual(got, before) || len(s.Sessions()) != 1 {
		t.Fatalf("failed requests changed something: %+v -> %+v, %d sessions", before, got, len(s.Sessions()))
	}

	// /healthz needs no token.
	resp, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(b) != "ok\n" {
		t.Fatalf("healthz = %d %q", resp.StatusCode, b)
	}
}

// A tool failure (trap) over the admin API is an error response, recorded
// in the ledger, that changes nothing.
func TestAdminToolFailure(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	_, vid := fxTask(t, s)
	info := a.create(map[string]any{"modules": []string{"fx"}, "version": vid})
	a.call(info.ID, "put", map[string]any{"id": "a", "n": 1})
	before := a.session(info.ID)
	r := a.do("POST", "/v1/sessions/"+info.ID+"/calls", `{"tool":"put_then_panic","arguments":{"id":"b","n":2}}`)
	r.apiErr(t, http.StatusBadGateway, "trap")
	after := a.session(info.ID)
	if after.Hash != before.Hash || after.Ledger != before.Ledger+1 || after.Calls != before.Calls+1 {
		t.Fatalf("trap: %+v -> %+v", before, after)
	}
	recs, _ := a.ledger(info.ID, "?from="+itoa(before.Ledger))
	if len(recs) != 1 || recs[0].Tool != "put_then_panic" || recs[0].Error == nil || recs[0].Error.Kind != "trap" || recs[0].Result != nil {
		t.Fatalf("trap record %+v", recs)
	}
}

func TestAdminMetrics(t *testing.T) {
	met := NewMetrics()
	s, ts := newHTTPServerMetrics(t, met, HTTPOptions{Metrics: promhttp.HandlerFor(met.Registry, promhttp.HandlerOpts{})})
	met.RegisterPools(s)
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"hello"}})
	a.call(info.ID, "add_note", map[string]string{"text": "x"})
	a.call(info.ID, "add_note", map[string]string{"text": " "})
	a.call(info.ID, "add_note", map[string]string{"txt": "x"})
	a.do("POST", "/v1/sessions/"+info.ID+"/calls", `{"tool":"now"}`, GenerationHeader, "5").apiErr(t, 409, "stale_generation")

	// /metrics needs the token.
	(&api{t: t, base: ts.URL}).do("GET", "/metrics", nil).apiErr(t, http.StatusUnauthorized, "unauthorized")
	r := a.do("GET", "/metrics", nil)
	if r.status != 200 {
		t.Fatalf("metrics: %d %s", r.status, r.body)
	}
	lines := map[string]bool{}
	for _, l := range strings.Split(string(r.body), "\n") {
		lines[l] = true
	}
	for _, want := range []string{
		"weft_sessions 1",
		"weft_sessions_created_total 1",
		"weft_session_create_seconds_count 1",
		`weft_tool_calls_total{result="ok"} 1`,
		`weft_tool_calls_total{result="tool_error"} 1`,
		`weft_tool_calls_total{result="invalid_arguments"} 1`,
		"weft_tool_call_seconds_count 3",
		`weft_errors_total{kind="tool_error"} 1`,
		`weft_errors_total{kind="invalid_arguments"} 1`,
		"weft_fenced_total 1",
		"weft_checkpoints_total 0",
		`weft_module_idle_instances{digest="` + info.Digests[0] + `",module="hello"} 1`,
	} {
		if !lines[want] {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", r.body)
	}
}
