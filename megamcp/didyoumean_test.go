package megamcp

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAdminDidYouMean: a misspelt module in POST /v1/sessions and a
// misspelt tool in a call name the close known name (the registry's
// modules, the session's tools); a name close to nothing gets none. The
// refused call is still an isError result in the ledger, state untouched.
func TestAdminDidYouMean(t *testing.T) {
	_, ts := newHTTPServer(t, HTTPOptions{})
	a := newAPI(t, ts)

	e := a.do("POST", "/v1/sessions", `{"modules":["helo"]}`).apiErr(t, http.StatusNotFound, "no_such_module")
	if diff := cmp.Diff(`no such module: helo: module not found: helo (did you mean "hello"?)`, e.Error.Message); diff != "" {
		t.Errorf("module (-want +got):\n%s", diff)
	}
	e = a.do("POST", "/v1/sessions", `{"modules":["zzzzzzzz"]}`).apiErr(t, http.StatusNotFound, "no_such_module")
	if diff := cmp.Diff(`no such module: zzzzzzzz: module not found: zzzzzzzz`, e.Error.Message); diff != "" {
		t.Errorf("far module (-want +got):\n%s", diff)
	}

	var info sessionJSON
	a.do("POST", "/v1/sessions", `{"modules":["hello"],"seed":7}`).json(t, http.StatusCreated, &info)
	h := a.session(info.ID).Hash
	c := a.call(info.ID, "add_nte", map[string]string{"text": "x"})
	if !c.Result.IsError || len(c.Result.Content) != 1 {
		t.Fatalf("unknown tool = %+v", c)
	}
	if diff := cmp.Diff(`unknown tool: "add_nte" (did you mean "add_note"?)`, c.Result.Content[0].Text); diff != "" {
		t.Errorf("tool (-want +got):\n%s", diff)
	}
	c = a.call(info.ID, "qqqqqqqqqq", nil)
	if diff := cmp.Diff(`unknown tool: "qqqqqqqqqq"`, c.Result.Content[0].Text); diff != "" {
		t.Errorf("far tool (-want +got):\n%s", diff)
	}
	if got := a.session(info.ID); got.Hash != h || got.Calls != 2 || got.Ledger != 2 {
		t.Errorf("after refused calls: %+v", got)
	}
}

// TestMCPUnknownToolDidYouMean: tools/call of a misspelt tool over MCP is
// the SDK's invalid-params error with the close tool named; a name close
// to nothing keeps the SDK's message.
func TestMCPUnknownToolDidYouMean(t *testing.T) {
	_, ts := newHTTPServer(t, HTTPOptions{DefaultModules: []string{"hello"}})
	cs := mcpConnect(t, ts.URL+"/mcp", nil)
	for name, want := range map[string]string{
		"add_nte":    `unknown tool "add_nte" (did you mean "add_note"?)`,
		"qqqqqqqqqq": `unknown tool "qqqqqqqqqq"`,
	} {
		_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams {
			t.Fatalf("%s: err = %v, want a JSON-RPC invalid-params error", name, err)
		}
		if diff := cmp.Diff(want, je.Message); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if res := callTool(t, cs, "add_note", map[string]string{"text": "x"}); res.IsError {
		t.Errorf("add_note after the refusals: %+v", res)
	}
}
