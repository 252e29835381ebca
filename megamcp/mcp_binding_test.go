package megamcp

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSessionBinding: an MCP session is bound to the weft session of its
// first request. Its Mcp-Session-Id replayed against another
// /mcp/sessions/{id} is refused, and an ephemeral /mcp session deleted
// through the admin API is not recreated blank.
func TestMCPSessionBinding(t *testing.T) {
	s, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	ctx := context.Background()
	a, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	cs := mcpConnect(t, ts.URL+"/mcp/sessions/"+a.ID, nil)
	callTool(t, cs, "add_note", map[string]any{"text": "in a"})

	body := `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"add_note","arguments":{"text":"smuggled"}}}`
	req, _ := http.NewRequest("POST", ts.URL+"/mcp/sessions/"+b.ID, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(out), `"code":-32002`) || !strings.Contains(string(out), "belongs to another weft session") {
		t.Fatalf("replayed MCP session id on another session: %d %s", resp.StatusCode, out)
	}
	if got := mustInfo(t, s, b.ID); got.Calls != 0 {
		t.Fatalf("session b got %d calls", got.Calls)
	}
	// The bound client keeps working on its own session.
	callTool(t, cs, "add_note", map[string]any{"text": "still a"})
	if got := mustInfo(t, s, a.ID); got.Calls != 2 {
		t.Fatalf("session a calls = %d", got.Calls)
	}

	// An ephemeral session deleted by an operator stays deleted.
	eph := mcpConnect(t, ts.URL+"/mcp", nil)
	callTool(t, eph, "add_note", map[string]any{"text": "ephemeral"})
	if err := s.Delete(ctx, eph.ID(), 0); err != nil {
		t.Fatal(err)
	}
	_, err = eph.CallTool(ctx, &mcp.CallToolParams{Name: "list_notes"})
	if we, data := rpcError(t, err); we.Code != CodeNoSuchSession || data["kind"] != "no_such_session" {
		t.Fatalf("call on a deleted ephemeral session: %+v %v", we, data)
	}
	if _, err := s.Session(eph.ID()); err == nil {
		t.Fatal("deleted ephemeral session was recreated")
	}
}
