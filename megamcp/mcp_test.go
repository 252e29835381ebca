package megamcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// genTransport sets the Weft-Generation header on every request while gen
// is non-empty.
type genTransport struct {
	mu  sync.Mutex
	gen string
}

func (g *genTransport) set(gen string) {
	g.mu.Lock()
	g.gen = gen
	g.mu.Unlock()
}

func (g *genTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	g.mu.Lock()
	gen := g.gen
	g.mu.Unlock()
	if gen != "" {
		r = r.Clone(r.Context())
		r.Header.Set(GenerationHeader, gen)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects an MCP client to endpoint (hc nil: the default HTTP
// client); the session is closed at the end of the test if still open.
func mcpConnect(t *testing.T, endpoint string, hc *http.Client) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "weft-test", Version: "1.0.0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connecting to %s: %v", endpoint, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func structured(t *testing.T, r *mcp.CallToolResult) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(r.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rpcError returns the JSON-RPC error of a failed call with its data.
func rpcError(t *testing.T, err error) (*jsonrpc.Error, map[string]any) {
	t.Helper()
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T) is not a JSON-RPC error", err, err)
	}
	var data map[string]any
	if err := json.Unmarshal(we.Data, &data); err != nil {
		t.Fatalf("error data %s: %v", we.Data, err)
	}
	return we, data
}

// eventually polls cond for up to 10 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestMCPDefaultModules(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	a := newAPI(t, ts)
	cs := mcpConnect(t, ts.URL+"/mcp", nil)
	if ir := cs.InitializeResult(); ir == nil || ir.ServerInfo.Name != "weft" || ir.Instructions != "weft tool environment: hello" {
		t.Fatalf("initialize result %+v", ir)
	}

	// tools/list: hello's tools with the manifest's schemas
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g, err := s.group(context.Background(), []string{"hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != 4 {
		t.Fatalf("%d tools", len(lt.Tools))
	}
	for i, tool := range lt.Tools {
		want := g.tools[i].Tool
		if tool.Name != want.Name || tool.Description != want.Description || tool.Description == "" {
			t.Fatalf("tool %d = %s %q, want %s %q", i, tool.Name, tool.Description, want.Name, want.Description)
		}
		b, _ := json.Marshal(tool.InputSchema)
		jsonEq(t, b, string(want.InputSchema))
		ro := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
		if ro != (tool.Name != "add_note") {
			t.Fatalf("%s: readOnlyHint %v", tool.Name, ro)
		}
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	b, _ := json.Marshal(lt.Tools[0].InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil || schema.Type != "object" || schema.Properties["text"].Type != "string" ||
		!reflect.DeepEqual(schema.Required, []string{"text"}) {
		t.Fatalf("add_note schema %s", b)
	}

	// tools/call: add_note, then list_notes shows it
	res := callTool(t, cs, "add_note", map[string]any{"text": "over MCP"})
	if res.IsError {
		t.Fatalf("add_note: %s", resultText(res))
	}
	jsonEq(t, structured(t, res), `{"id":1}`)
	if res.Meta["weft/seq"] != 0.0 || res.Meta["weft/index"] != 0.0 || res.Meta["weft/generation"] != 1.0 {
		t.Fatalf("_meta %v", res.Meta)
	}
	res = callTool(t, cs, "list_notes", map[string]any{})
	jsonEq(t, structured(t, res), `{"notes":[{"id":1,"text":"over MCP"}]}`)
	if resultText(res) != `{"notes":[{"id":1,"text":"over MCP"}]}` {
		t.Fatalf("list_notes text %q", resultText(res))
	}

	// The MCP session id is the weft session id.
	id := cs.ID()
	if !validID(id) {
		t.Fatalf("MCP session id %q", id)
	}
	info := a.session(id)
	if info.Calls != 2 || info.Ledger != 2 || info.ID != id || info.Tools[0] != "add_note" {
		t.Fatalf("session over MCP: %+v", info)
	}
	recs, _ := a.ledger(id, "")
	if len(recs) != 2 || recs[0].Tool != "add_note" || recs[1].Tool != "list_notes" {
		t.Fatalf("ledger %+v", recs)
	}
	jsonEq(t, recs[0].Arguments, `{"text":"over MCP"}`)

	// Invalid arguments: an isError result (recorded).
	res = callTool(t, cs, "add_note", map[string]any{"txt": 1})
	if !res.IsError || !strings.Contains(resultText(res), "invalid arguments") {
		t.Fatalf("invalid arguments: %+v", res)
	}
	if got := a.session(id); got.Calls != 3 || got.Hash != info.Hash {
		t.Fatalf("after invalid arguments: %+v", got)
	}

	// Closing the MCP session deletes its weft session.
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the ephemeral session to be deleted", func() bool {
		_, err := s.Session(id)
		return errors.Is(err, ErrNoSuchSession)
	})
	a.do("GET", "/v1/sessions/"+id, nil).apiErr(t, 404, "no_such_session")
}

func TestMCPSessionsAreSeparate(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	c1 := mcpConnect(t, ts.URL+"/mcp", nil)
	c2 := mcpConnect(t, ts.URL+"/mcp", nil)
	if c1.ID() == c2.ID() {
		t.Fatal("two MCP clients share a session id")
	}
	callTool(t, c1, "add_note", map[string]any{"text": "from one"})
	callTool(t, c2, "add_note", map[string]any{"text": "from two"})
	callTool(t, c2, "add_note", map[string]any{"text": "from two again"})
	jsonEq(t, structured(t, callTool(t, c1, "list_notes", nil)), `{"notes":[{"id":1,"text":"from one"}]}`)
	jsonEq(t, structured(t, callTool(t, c2, "list_notes", nil)), `{"notes":[{"id":1,"text":"from two"},{"id":2,"text":"from two again"}]}`)
	ids := s.Sessions()
	if len(ids) != 2 || !(ids[0] == c1.ID() && ids[1] == c2.ID() || ids[0] == c2.ID() && ids[1] == c1.ID()) {
		t.Fatalf("sessions %v, MCP ids %s %s", ids, c1.ID(), c2.ID())
	}
	// A client cannot pick another session with the Weft-Session header.
	c3 := mcpConnect(t, ts.URL+"/mcp", &http.Client{Transport: headerTransport{SessionHeader, c1.ID()}})
	jsonEq(t, structured(t, callTool(t, c3, "list_notes", nil)), `{"notes":[]}`)
	if c3.ID() == c1.ID() || mustInfo(t, s, c1.ID()).Calls != 2 {
		t.Fatalf("Weft-Session header honoured on /mcp")
	}
}

// headerTransport sets one header on every request.
type headerTransport struct{ key, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.key, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCPAdminSession(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"hello"}, "seed": 5})
	id := info.ID
	gt := &genTransport{}
	cs := mcpConnect(t, ts.URL+info.MCP, &http.Client{Transport: gt})
	if cs.ID() == id {
		t.Fatal("the MCP session of /mcp/sessions/{id} reuses the weft id")
	}
	lt, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(lt.Tools) != 4 {
		t.Fatalf("tools/list: %v %v", lt, err)
	}

	// Calls over MCP are the session's calls, in its ledger.
	res := callTool(t, cs, "add_note", map[string]any{"text": "via MCP"})
	jsonEq(t, structured(t, res), `{"id":1}`)
	a.call(id, "add_note", map[string]string{"text": "via admin"})
	jsonEq(t, structured(t, callTool(t, cs, "list_notes", nil)), `{"notes":[{"id":1,"text":"via MCP"},{"id":2,"text":"via admin"}]}`)
	recs, _ := a.ledger(id, "")
	if len(recs) != 3 || recs[0].Tool != "add_note" || recs[1].Tool != "add_note" || recs[2].Tool != "list_notes" {
		t.Fatalf("ledger %+v", recs)
	}

	// Invalid arguments: an isError result.
	res = callTool(t, cs, "add_note", map[string]any{"text": 42})
	if !res.IsError || !strings.Contains(resultText(res), "invalid arguments") {
		t.Fatalf("invalid arguments: %+v", res)
	}

	// Two restores: generation 3. A request carrying generation 1 (the
	// first), in the
	// Weft-Generation header or in _meta, fails with CodeStaleGeneration
	// and changes nothing.
	var snap struct {
		Version string `json:"version"`
	}
	a.do("POST", "/v1/sessions/"+id+"/snapshot", nil).json(t, 200, &snap)
	for range 2 {
		a.do("POST", "/v1/sessions/"+id+"/restore", map[string]string{"version": snap.Version}).json(t, 200, nil)
	}
	before := a.session(id)
	if before.Generation != 3 {
		t.Fatalf("generation %d", before.Generation)
	}
	gt.set("1")
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": "stale"}})
	we, data := rpcError(t, err)
	if we.Code != CodeStaleGeneration || data["kind"] != "stale_generation" || data["current_generation"] != 3.0 ||
		!strings.Contains(we.Message, "stale generation 1 (current 3)") {
		t.Fatalf("stale call: %+v %v", we, data)
	}
	gt.set("")
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": "stale"},
		Meta: mcp.Meta{MetaGeneration: 1}})
	if we, data := rpcError(t, err); we.Code != CodeStaleGeneration || data["kind"] != "stale_generation" {
		t.Fatalf("stale call (_meta): %+v %v", we, data)
	}
	// A malformed generation is invalid params.
	gt.set("two")
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_notes"})
	if we, data := rpcError(t, err); we.Code != jsonrpc.CodeInvalidParams || data["kind"] != "bad_request" {
		t.Fatalf("bad generation: %+v %v", we, data)
	}
	if got := a.session(id); !reflect.DeepEqual(got, before) {
		t.Fatalf("fenced calls changed the session: %+v -> %+v", before, got)
	}
	// The current generation, in the header and in _meta, passes.
	gt.set("3")
	res = callTool(t, cs, "add_note", map[string]any{"text": "current"})
	if res.IsError || res.Meta["weft/generation"] != 3.0 {
		t.Fatalf("call with the current generation: %+v", res)
	}
	gt.set("")
	res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_notes", Meta: mcp.Meta{MetaGeneration: "3"}})
	if err != nil || res.IsError {
		t.Fatalf("_meta generation \"3\": %v %+v", err, res)
	}
	jsonEq(t, structured(t, res), `{"notes":[{"id":1,"text":"via MCP"},{"id":2,"text":"via admin"},{"id":3,"text":"current"}]}`)
	if got := a.session(id); got.Calls != before.Calls+2 || got.Generation != 3 {
		t.Fatalf("after current-generation calls: %+v", got)
	}

	// Once the session is deleted, its endpoint is gone.
	a.do("DELETE", "/v1/sessions/"+id, nil)
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_notes"})
	if err == nil {
		t.Fatal("call on a deleted session succeeded")
	}
	if _, err := s.Session(id); !errors.Is(err, ErrNoSuchSession) {
		t.Fatal(err)
	}
}

func TestMCPToolFailure(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)
	_, vid := fxTask(t, s)
	info := a.create(map[string]any{"modules": []string{"fx"}, "version": vid})
	cs := mcpConnect(t, ts.URL+info.MCP, nil)
	res := callTool(t, cs, "put", map[string]any{"id": "a", "n": 1})
	if res.IsError {
		t.Fatalf("put: %s", resultText(res))
	}
	before := a.session(info.ID)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "put_then_panic", Arguments: map[string]any{"id": "b", "n": 2}})
	we, data := rpcError(t, err)
	if we.Code != CodeToolFailure || data["kind"] != "trap" {
		t.Fatalf("trap: %+v %v", we, data)
	}
	after := a.session(info.ID)
	if after.Hash != before.Hash || after.Calls != before.Calls+1 {
		t.Fatalf("trap: %+v -> %+v", before, after)
	}
	recs, _ := a.ledger(info.ID, "?from="+itoa(before.Ledger))
	if len(recs) != 1 || recs[0].Error == nil || recs[0].Error.Kind != "trap" {
		t.Fatalf("trap record %+v", recs)
	}
	// The session still works.
	res = callTool(t, cs, "get", map[string]any{"id": "a"})
	if res.IsError {
		t.Fatalf("get after trap: %s", resultText(res))
	}
}

func TestMCPEndpoints(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	a := newAPI(t, ts)
	info := a.create(map[string]any{"modules": []string{"hello"}})
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	post := func(path, host string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("POST", ts.URL+path, strings.NewReader(initialize))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			del, _ := http.NewRequest("DELETE", ts.URL+path, nil)
			del.Header.Set("Mcp-Session-Id", id)
			if r, err := http.DefaultClient.Do(del); err == nil {
				r.Body.Close()
			}
		}
		return resp.StatusCode, string(b)
	}
	// Unknown session: 404 with the admin API's error body.
	code, body := post("/mcp/sessions/"+strings.Repeat("a", 26), "")
	if code != 404 || !strings.Contains(body, `"code":"no_such_session"`) {
		t.Fatalf("unknown session: %d %s", code, body)
	}
	// DNS rebinding: a loopback listener reached with a foreign Host.
	for _, path := range []string{"/mcp", info.MCP} {
		if code, body := post(path, "evil.example"); code != http.StatusForbidden {
			t.Fatalf("%s with Host evil.example: %d %s", path, code, body)
		}
		if code, body := post(path, "localhost"); code != http.StatusOK {
			t.Fatalf("%s with Host localhost: %d %s", path, code, body)
		}
	}
	if n := len(s.Sessions()); n != 1 {
		t.Fatalf("%d sessions after initialize-only MCP sessions", n)
	}

	// A server without default modules has no /mcp.
	_, ts2 := newHTTPServer(t, HTTPOptions{})
	resp, err := http.Post(ts2.URL+"/mcp", "application/json", strings.NewReader(initialize))
	if err != nil {
		t.Fatal(err)
	}
	var e apiError
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != 404 || resp.Header.Get("Content-Type") != "application/json" ||
		e.Error.Code != "no_such_session" || !strings.Contains(e.Error.Message, "/mcp/sessions/{id}") {
		t.Fatalf("/mcp without default modules: %d %s", resp.StatusCode, b)
	}
}

// TestMCPGolden replays the raw JSON-RPC exchange of
// testdata/mcp_hello.txtar ("client") against /mcp and compares what the
// server answered with its "server" file (-update rewrites it).
func TestMCPGolden(t *testing.T) {
	const path = "testdata/mcp_hello.txtar"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	arch := txtar.Parse(raw)
	var client, want []byte
	for _, f := range arch.Files {
		switch f.Name {
		case "client":
			client = f.Data
		case "server":
			want = f.Data
		default:
			t.Fatalf("%s: unexpected file %q", path, f.Name)
		}
	}
	if len(client) == 0 {
		t.Fatalf("%s: no client messages", path)
	}

	s, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	var out bytes.Buffer
	sid := ""
	dec := json.NewDecoder(bytes.NewReader(client))
	for {
		var msg json.RawMessage
		if err := dec.Decode(&msg); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: client: %v", path, err)
		}
		var head struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		if err := json.Unmarshal(msg, &head); err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest("POST", ts.URL+"/mcp", bytes.NewReader(msg))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		fmt.Fprintf(&out, "# POST %s", head.Method)
		if head.ID != nil {
			fmt.Fprintf(&out, " (id %v)", head.ID)
		}
		fmt.Fprintf(&out, ": %d", resp.StatusCode)
		if mt != "" {
			fmt.Fprintf(&out, " %s", mt)
		}
		out.WriteString("\n")
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" && sid == "" {
			sid = id
			fmt.Fprintf(&out, "# Mcp-Session-Id: %s\n", id)
		}
		for _, m := range responseMessages(t, mt, body) {
			out.Write(indentJSON(t, m))
		}
	}
	if sid == "" {
		t.Fatal("no Mcp-Session-Id")
	}
	// The exchange ran on the weft session of the same id.
	if info := mustInfo(t, s, sid); info.Calls != 4 || info.Ledger != 4 {
		t.Fatalf("session %s: %d calls, %d records", sid, info.Calls, info.Ledger)
	}
	req, _ := http.NewRequest("DELETE", ts.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	fmt.Fprintf(&out, "# DELETE: %d\n", resp.StatusCode)
	eventually(t, "the ephemeral session to be deleted", func() bool {
		_, err := s.Session(sid)
		return errors.Is(err, ErrNoSuchSession)
	})

	got := bytes.ReplaceAll(out.Bytes(), []byte(sid), []byte("<session>"))
	if *update {
		arch.Files = []txtar.File{{Name: "client", Data: client}, {Name: "server", Data: got}}
		if err := os.WriteFile(path, txtar.Format(arch), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if d := cmp.Diff(string(want), string(got)); d != "" {
		t.Errorf("%s: server output differs (-want +got; -update rewrites it):\n%s", path, d)
	}
}

// responseMessages returns the JSON-RPC messages of an HTTP response body:
// the data of each SSE event, or a JSON body.
func responseMessages(t *testing.T, mediaType string, body []byte) [][]byte {
	t.Helper()
	switch mediaType {
	case "application/json":
		return [][]byte{body}
	case "text/event-stream":
		var msgs [][]byte
		var data []byte
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if rest, ok := strings.CutPrefix(line, "data:"); ok {
				data = append(data, strings.TrimPrefix(rest, " ")...)
			} else if line == "" && len(data) > 0 {
				msgs = append(msgs, data)
				data = nil
			}
		}
		if len(data) > 0 {
			msgs = append(msgs, data)
		}
		return msgs
	}
	if len(bytes.TrimSpace(body)) > 0 {
		t.Fatalf("unexpected %s body %q", mediaType, body)
	}
	return nil
}

// indentJSON re-encodes a message with sorted keys and tab indentation.
func indentJSON(t *testing.T, msg []byte) []byte {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(msg))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("response message %q: %v", msg, err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "\t")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
