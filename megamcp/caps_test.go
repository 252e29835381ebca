package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestSessionCaps: session creation is refused at MaxSessions (admin API:
// 503, code at_capacity, Retry-After) and new MCP sessions on the
// unauthenticated /mcp at MaxEphemeralSessions, leaving the live sessions
// and their ledgers as they were; a slot freed is usable again.
func TestSessionCaps(t *testing.T) {
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 2 * time.Second, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	dir := t.TempDir()
	s, err := Open(ctx, Config{Runtime: rt, Registry: megamcptest.Registry(t), DataDir: dir, CheckpointInterval: -1, Fsync: FsyncNever,
		MaxSessions: 3, MaxEphemeralSessions: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Handler(ctx, HTTPOptions{DefaultModules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close) // after the MCP client's cleanup closes its stream

	// One MCP session on /mcp: its ephemeral weft session is made on its
	// first call; a second MCP session is refused at initialize.
	cs := mcpConnect(t, hs.URL+"/mcp", nil)
	callTool(t, cs, "add_note", map[string]any{"text": "one"})
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || !strings.Contains(string(body), `"code":"at_capacity"`) {
		t.Fatalf("second /mcp session: HTTP %d %s", resp.StatusCode, body)
	}

	// Admin creates up to MaxSessions (the ephemeral one counts).
	post := func() (int, string) {
		resp, err := http.Post(hs.URL+"/v1/sessions", "application/json", strings.NewReader(`{"modules":["hello"]}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var made []string
	for range 2 {
		st, b := post()
		if st != http.StatusCreated {
			t.Fatalf("create under the cap: %d %s", st, b)
		}
		var info SessionInfo
		json.Unmarshal([]byte(b), &info)
		made = append(made, info.ID)
	}
	before := map[string]int{}
	for _, id := range s.Sessions() {
		recs, _ := s.Ledger(ctx, id, 0, 0)
		before[id] = len(recs)
	}
	st, b := post()
	var e apiError
	json.Unmarshal([]byte(b), &e)
	if st != http.StatusServiceUnavailable || e.Error.Code != CodeAtCapacity || !strings.Contains(e.Error.Message, "3 live sessions") {
		t.Fatalf("create at the cap: %d %s", st, b)
	}
	if _, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}}); !errors.Is(err, ErrAtCapacity) {
		t.Fatalf("Create at the cap: %v", err)
	}
	after := map[string]int{}
	for _, id := range s.Sessions() {
		recs, _ := s.Ledger(ctx, id, 0, 0)
		after[id] = len(recs)
	}
	if d := cmp.Diff(before, after); d != "" {
		t.Fatalf("sessions changed by refused creations (-before +after):\n%s", d)
	}
	// A refused creation leaves no directory behind.
	if n := len(mustReadDir(t, dir+"/sessions")); n != 3 {
		t.Fatalf("%d session directories, want 3", n)
	}
	if err := s.Delete(ctx, made[0], 0); err != nil {
		t.Fatal(err)
	}
	if st, b := post(); st != http.StatusCreated {
		t.Fatalf("create after a delete: %d %s", st, b)
	}
}

// TestHealthz: /healthz is 200 "ok" while writes succeed and 503
// "unhealthy" (with the failed write) when the data directory stops taking
// them.
func TestHealthz(t *testing.T) {
	ctx := context.Background()
	f := newRecoveryFixture(t)
	var ro bool
	s, _, _, err := f.open(t, nil, func(op, p string) error {
		if ro && op == "write" {
			return errors.New("read-only file system")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := s.Handler(ctx, HTTPOptions{})
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	if st, b := get(); st != 200 || b != "ok\n" {
		t.Fatalf("healthy: %d %q", st, b)
	}
	ro = true
	s.Call(ctx, f.ids[0], CallRequest{Tool: "add_note", Arguments: json.RawMessage(`{"text":"x"}`)})
	if err := s.checkpointAll(false); err == nil {
		t.Fatal("checkpoint on a read-only dir succeeded")
	}
	st, b := get()
	var e apiError
	json.Unmarshal(bytes.TrimSpace([]byte(b)), &e)
	if st != http.StatusServiceUnavailable || e.Error.Code != "unhealthy" || !strings.Contains(e.Error.Message, "read-only file system") {
		t.Fatalf("unhealthy: %d %s", st, b)
	}
}

func mustReadDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}
