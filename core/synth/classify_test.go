package synth

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"get_user_details":   {"get", "user", "details"},
		"getUserDetails":     {"get", "user", "details"},
		"list-collections":   {"list", "collections"},
		"HTTPServerStatus":   {"http", "server", "status"},
		"browser_tab_new":    {"browser", "tab", "new"},
		"tft-play-style.v2":  {"tft", "play", "style", "v2"},
		"":                   nil,
		"__":                 nil,
		"mcp__fs__read_file": {"mcp", "fs", "read", "file"},
	} {
		if d := cmp.Diff(want, Words(in)); d != "" {
			t.Errorf("Words(%q) (-want +got):\n%s", in, d)
		}
	}
}

func TestClassify(t *testing.T) {
	yes, no := true, false
	obj := json.RawMessage(`{"type":"object","properties":{}}`)
	withID := json.RawMessage(`{"type":"object","properties":{"ticket_id":{"type":"integer"}}}`)
	for _, c := range []struct {
		tool   DocTool
		hide   bool
		op     Op
		ro     bool
		verb   string
		status string
		reason string
	}{
		{DocTool{Name: "get_user_details", InputSchema: json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"string"}}}`)}, false, OpGet, true, "get", "", "name"},
		{DocTool{Name: "get_weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}, false, OpList, true, "get", "", "name"},
		{DocTool{Name: "book_reservation", InputSchema: obj}, false, OpCreate, false, "book", "", "name"},
		{DocTool{Name: "cancel_reservation", InputSchema: obj}, false, OpStatus, false, "cancel", "cancelled", "name"},
		{DocTool{Name: "close_ticket", InputSchema: withID}, false, OpStatus, false, "close", "closed", "name"},
		{DocTool{Name: "ticket_login", InputSchema: obj}, false, OpCreate, false, "login", "", "name"},
		{DocTool{Name: "rm", InputSchema: obj}, false, OpDelete, false, "rm", "", "name"},
		{DocTool{Name: "list-collections", InputSchema: obj}, false, OpList, true, "list", "", "name"},
		{DocTool{Name: "bgg-hot", Description: "Find the current board game hotness", InputSchema: obj}, false, OpList, true, "find", "", "description"},
		{DocTool{Name: "frobnicate", Description: "Creates a widget.", InputSchema: obj}, false, OpCreate, false, "create", "", "description"},
		{DocTool{Name: "frobnicate", Description: "The tool removes a widget.", InputSchema: obj}, false, OpCreate, false, "", "", "default"},
		{DocTool{Name: "frobnicate", Description: "Something.", InputSchema: obj}, false, OpList, true, "", "", "default"},
		// BFCL: the tool's own sentence follows "Tool description:".
		{DocTool{Name: "frob", Description: "This tool belongs to the X API, which lets you create things. Tool description: Get the status.", InputSchema: obj}, false, OpList, true, "get", "", "description"},
		// The annotation decides unless hidden.
		{DocTool{Name: "browser_close", InputSchema: obj, ReadOnlyHint: &yes}, false, OpList, true, "close", "", "annotation"},
		{DocTool{Name: "browser_close", InputSchema: obj, ReadOnlyHint: &yes}, true, OpStatus, false, "close", "closed", "name"},
		{DocTool{Name: "get_ticket", InputSchema: withID, ReadOnlyHint: &no}, false, OpUpdate, false, "get", "", "annotation"},
	} {
		op, cl := Classify(c.tool, ClassifyOptions{HideAnnotations: c.hide})
		got := []any{op, cl.ReadOnly, cl.Verb, cl.Status, cl.Reason}
		want := []any{c.op, c.ro, c.verb, c.status, c.reason}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (hide %v) (-want +got):\n%s", c.tool.Name, c.hide, d)
		}
	}
}

// TestEvalClassifyToucan pins the figure of docs/synthesis-figures.md:
// read/write accuracy on the 163 Toucan tools with readOnlyHint.
func TestEvalClassifyToucan(t *testing.T) {
	for _, c := range []struct {
		hide    bool
		correct int
		conf    Confusion
	}{
		{true, 128, Confusion{ReadRead: 95, ReadWrite: 19, WriteRead: 16, WriteWrite: 33}},
		{false, 163, Confusion{ReadRead: 114, WriteWrite: 49}},
	} {
		f, err := os.Open(filepath.Join(toucanDir, "readonly_eval.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		rep, err := EvalClassify(f, c.hide)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if rep.Tools != 163 || rep.Correct != c.correct || rep.Confusion != c.conf || len(rep.Misses) != 163-c.correct {
			t.Errorf("hide %v: %d/%d right, %+v, %d misses; want %d/163, %+v", c.hide, rep.Correct, rep.Tools, rep.Confusion, len(rep.Misses), c.correct, c.conf)
		}
		if len(rep.ByServer) != 13 {
			t.Errorf("%d servers, want 13", len(rep.ByServer))
		}
	}
}
