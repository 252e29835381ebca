package megamcp

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
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
