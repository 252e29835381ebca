package synth

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	airlineDir = "../../examples/data/tau2-airline"
	bfclDir    = "../../examples/data/bfcl-multiturn"
	toucanDir  = "../../examples/data/toucan-mcp"
)

func TestLoadTau2Tools(t *testing.T) {
	ds, err := LoadDocs(filepath.Join(airlineDir, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || ds[0].Name != "tau2-airline" {
		t.Fatalf("got %d docs named %q", len(ds), ds[0].Name)
	}
	var names []string
	for _, tl := range ds[0].Tools {
		names = append(names, tl.Name)
		if tl.ReadOnlyHint != nil {
			t.Errorf("%s: tau2's read_only must not become an annotation", tl.Name)
		}
	}
	want := []string{"book_reservation", "calculate", "cancel_reservation", "get_flight_status", "get_reservation_details",
		"get_user_details", "list_all_airports", "search_direct_flight", "search_onestop_flight", "send_certificate",
		"transfer_to_human_agents", "update_reservation_baggages", "update_reservation_flights", "update_reservation_passengers"}
	if d := cmp.Diff(want, names); d != "" {
		t.Fatalf("tools (-want +got):\n%s", d)
	}
	var cancel map[string]any
	if err := json.Unmarshal(ds[0].Tools[2].InputSchema, &cancel); err != nil {
		t.Fatal(err)
	}
	if cancel["type"] != "object" || cancel["required"].([]any)[0] != "reservation_id" {
		t.Fatalf("cancel_reservation schema: %v", cancel)
	}
}

func TestLoadBFCLConvertsTheDialect(t *testing.T) {
	ds, err := LoadDocs(filepath.Join(bfclDir, "func_docs", "ticket_api.json"))
	if err != nil {
		t.Fatal(err)
	}
	d := ds[0]
	if d.Name != "ticket_api" || len(d.Tools) != 9 {
		t.Fatalf("%q with %d tools, want ticket_api with 9", d.Name, len(d.Tools))
	}
	close := d.Tools[0]
	if close.Name != "close_ticket" {
		t.Fatalf("first tool %q", close.Name)
	}
	if got, want := string(close.InputSchema), `{"type":"object","properties":{"ticket_id":{"type":"integer","description":"ID of the ticket to be closed. "}},"required":["ticket_id"]}`; got != want {
		t.Errorf("input schema\n got %s\nwant %s", got, want)
	}
	if got, want := string(close.OutputSchema), `{"type":"object","properties":{"status":{"type":"string","description":"Status of the close operation."}}}`; got != want {
		t.Errorf("output schema\n got %s\nwant %s", got, want)
	}
	// "float" becomes "number" at any depth.
	ds, err = LoadDocs(filepath.Join(bfclDir, "func_docs", "trading_bot.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range ds[0].Tools {
		for _, raw := range []json.RawMessage{tl.InputSchema, tl.OutputSchema} {
			if strings.Contains(string(raw), `"float"`) || strings.Contains(string(raw), `"dict"`) {
				t.Errorf("%s keeps a BFCL type: %s", tl.Name, raw)
			}
		}
	}
	// All 8 classes load: 128 functions (README: 18+17+10+14+9+20+18+22).
	n := 0
	for _, f := range BFCLClassFiles {
		ds, err := LoadDocs(filepath.Join(bfclDir, "func_docs", f))
		if err != nil {
			t.Fatal(err)
		}
		n += len(ds[0].Tools)
	}
	if n != 128 {
		t.Errorf("%d functions in the 8 classes, want 128", n)
	}
}

func TestLoadToucanSlice(t *testing.T) {
	ds, err := LoadDocs(filepath.Join(toucanDir, "servers-slice.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 52 {
		t.Fatalf("%d servers, want 52", len(ds))
	}
	if ds[0].Name != "0001.exa_exa-search_labeled" || ds[0].License != "MIT" || len(ds[0].Tools) != 8 {
		t.Fatalf("first server %q (%s) with %d tools", ds[0].Name, ds[0].License, len(ds[0].Tools))
	}
	tools := 0
	for _, d := range ds {
		tools += len(d.Tools)
	}
	if tools != 366 {
		t.Errorf("%d tools, want 366", tools)
	}
}

func TestToucanAnnotations(t *testing.T) {
	in := `{"id": "s1", "name": "S", "description": "d", "license": "MIT", "tools": [` +
		`{"name": "list-items", "description": "List items", "inputSchema": {"type": "object", "properties": {}}, "annotations": {"readOnlyHint": true, "title": "x"}},` +
		`{"name": "drop", "description": "Drop", "inputSchema": {"type": "object"}, "annotations": {"destructiveHint": true}},` +
		`{"name": "plain", "description": "", "inputSchema": {"type": "object"}}]}`
	ds, err := ParseToucan(strings.NewReader(in), "mem")
	if err != nil {
		t.Fatal(err)
	}
	tl := ds[0].Tools
	if tl[0].ReadOnlyHint == nil || !*tl[0].ReadOnlyHint || tl[1].ReadOnlyHint != nil || tl[2].ReadOnlyHint != nil {
		t.Fatalf("hints: %v %v %v", tl[0].ReadOnlyHint, tl[1].ReadOnlyHint, tl[2].ReadOnlyHint)
	}
	if string(tl[1].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("schema without properties: %s", tl[1].InputSchema)
	}
}

// TestDocsErrors: malformed docs give one clear error naming file, line,
// server, tool and field.
func TestDocsErrors(t *testing.T) {
	for _, c := range []struct {
		name, format, in, want string
	}{
		{"tau2 not an array", "tau2", `{"name": "x"}`, `docs f.json, server "air": not a JSON array of tool definitions: json: cannot unmarshal object into Go value of type []json.RawMessage`},
		{"tau2 nameless", "tau2", `[{"description": "d", "parameters": {"type": "object"}}]`, `docs f.json, server "air", field [0].name: missing`},
		{"tau2 schema type", "tau2", `[{"name": "t", "parameters": {"type": "array"}}]`, `docs f.json, server "air", tool "t", field parameters.type: is "array", want "object" (a tool's arguments are an object)`},
		{"tau2 property not a schema", "tau2", `[{"name": "t", "parameters": {"type": "object", "properties": {"a": 3}}}]`, `docs f.json, server "air", tool "t", field parameters.properties.a: is a JSON number, not a schema`},
		{"tau2 duplicate", "tau2", `[{"name": "t"}, {"name": "t"}]`, `docs f.json, server "air", tool "t", field name: documented twice`},
		{"bfcl unknown type", "bfcl", "{\"name\": \"ok\", \"parameters\": {\"type\": \"dict\", \"properties\": {}}}\n{\"name\": \"cd\", \"parameters\": {\"type\": \"dict\", \"properties\": {\"folder\": {\"type\": \"path\"}}}}", `docs f.json:2, server "air", tool "cd", field parameters.properties.folder.type: "path" is not a JSON Schema type`},
		{"bfcl bad response", "bfcl", `{"name": "cd", "parameters": {"type": "dict"}, "response": {"type": "dict", "properties": []}}`, `docs f.json:1, server "air", tool "cd", field response.properties: is a JSON array, not an object of schemas`},
		// Trial F7: a truncated line is invalid JSON, not "not BFCL".
		{"bfcl not json", "bfcl", `{"name": "cd",`, `docs f.json:1, server "air": invalid JSON at byte 14 of the line: unexpected end of JSON input`},
		{"bfcl not an object", "bfcl", `[1]`, `docs f.json:1, server "air": not a BFCL function doc object: json: cannot unmarshal array into Go value of type synth.bfclDoc`},
		{"bfcl required", "bfcl", `{"name": "cd", "parameters": {"type": "dict", "required": [1]}}`, `docs f.json:1, server "air", tool "cd", field parameters.required[0]: 1 is not a property name`},
		{"toucan no id", "toucan", `{"name": "S", "tools": []}`, `docs f.json:1, server "S", field id: missing`},
		{"toucan tools", "toucan", `{"id": "s", "tools": {}}`, `docs f.json:1, server "s", field tools: not an array of tools: json: cannot unmarshal object into Go value of type []json.RawMessage`},
		{"toucan schema", "toucan", `{"id": "s", "tools": [{"name": "t", "inputSchema": "x"}]}`, `docs f.json:1, server "s", tool "t", field inputSchema: is a JSON string, not a schema object`},
		{"toucan empty", "toucan", `{"id": "s", "tools": []}`, `docs f.json:1, server "s", field tools: no tools documented`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			switch c.format {
			case "tau2":
				_, err = ParseTau2Tools([]byte(c.in), "air", "f.json")
			case "bfcl":
				_, err = ParseBFCL([]byte(c.in), "air", "f.json")
			case "toucan":
				_, err = ParseToucan(strings.NewReader(c.in), "f.json")
			}
			if err == nil {
				t.Fatal("accepted")
			}
			var de *DocsError
			if !errors.As(err, &de) {
				t.Fatalf("%T is not a *DocsError: %v", err, err)
			}
			if err.Error() != c.want {
				t.Errorf("error\n got %s\nwant %s", err, c.want)
			}
		})
	}
}

// TestToucanKeepsGoodLines: a bad line is reported and the other servers
// still load.
func TestToucanKeepsGoodLines(t *testing.T) {
	in := `{"id": "a", "tools": [{"name": "get_a", "inputSchema": {"type": "object"}}]}
not json
{"id": "b", "tools": [{"name": "x"}, {"name": "x"}]}
{"id": "c", "tools": [{"name": "get_c", "inputSchema": {"type": "object"}}]}
`
	ds, n, err := LoadToucanFile(strings.NewReader(in), "s.jsonl")
	if len(ds) != 2 || ds[0].Name != "a" || ds[1].Name != "c" || n != 2 {
		t.Fatalf("kept %d servers, %d refused", len(ds), n)
	}
	want := "docs s.jsonl:2: not a Toucan server object: invalid character 'o' in literal null (expecting 'u')\n" +
		`docs s.jsonl:3, server "b", tool "x", field name: documented twice`
	if err == nil || err.Error() != want {
		t.Fatalf("error\n got %v\nwant %s", err, want)
	}
}

func TestLoadDocsErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(" \n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDocs(empty); err == nil || err.Error() != "docs "+empty+": empty file" {
		t.Errorf("empty file: %v", err)
	}
	missing := filepath.Join(dir, "nope.json")
	if _, err := LoadDocs(missing); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	// A Docs JSON object (core/synth's own shape) round-trips.
	d := Docs{Name: "lib", Tools: []DocTool{{Name: "get_book", Description: "Get a book", InputSchema: json.RawMessage(`{"type":"object","properties":{"book_id":{"type":"string"}}}`)}}}
	b, _ := json.Marshal(d)
	p := filepath.Join(dir, "lib.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := LoadDocs(p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Docs{d}, got); diff != "" {
		t.Errorf("Docs JSON (-want +got):\n%s", diff)
	}
}
