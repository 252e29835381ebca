package synth

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkLoaded is the loaders' invariant: every tool has a name and an
// input schema that is a JSON object of "type" "object" with "properties",
// and normalizing it again changes nothing.
func checkLoaded(t *testing.T, ds []Docs) {
	t.Helper()
	for _, d := range ds {
		if len(d.Tools) == 0 {
			t.Fatalf("%s: accepted without tools", d.Name)
		}
		for _, tl := range d.Tools {
			if tl.Name == "" {
				t.Fatalf("%s: a nameless tool accepted", d.Name)
			}
			var m map[string]any
			if err := json.Unmarshal(tl.InputSchema, &m); err != nil {
				t.Fatalf("%s/%s: input schema not an object: %v", d.Name, tl.Name, err)
			}
			if m["type"] != "object" {
				t.Fatalf("%s/%s: input schema type %v", d.Name, tl.Name, m["type"])
			}
			if _, ok := m["properties"].(map[string]any); !ok {
				t.Fatalf("%s/%s: no properties object", d.Name, tl.Name)
			}
			again, err := normalizeSchema(tl.InputSchema, false)
			if err != nil {
				t.Fatalf("%s/%s: normalized schema refused on a second pass: %v", d.Name, tl.Name, err.msg)
			}
			if !bytes.Equal(again, tl.InputSchema) {
				t.Fatalf("%s/%s: normalizing is not idempotent:\n%s\n%s", d.Name, tl.Name, tl.InputSchema, again)
			}
		}
	}
}

func FuzzParseTau2Tools(f *testing.F) {
	f.Add([]byte(`[{"name": "get_user", "description": "Get a user", "parameters": {"type": "object", "properties": {"user_id": {"type": "string"}}, "required": ["user_id"]}}]`))
	f.Add([]byte(`[{"name": "t", "parameters": {"$defs": {"X": {"type": "object"}}, "properties": {"x": {"$ref": "#/$defs/X"}}, "type": "object"}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseTau2Tools(data, "fuzz", "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "docs fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkLoaded(t, []Docs{*d})
	})
}

func FuzzParseBFCL(f *testing.F) {
	f.Add([]byte(`{"name": "cd", "description": "Change directory", "parameters": {"type": "dict", "properties": {"folder": {"type": "string"}}, "required": ["folder"]}, "response": {"type": "dict", "properties": {"current_working_directory": {"type": "string"}}}}`))
	f.Add([]byte("{\"name\": \"a\", \"parameters\": {\"type\": \"dict\", \"properties\": {\"x\": {\"type\": \"float\"}, \"y\": {\"type\": \"array\", \"items\": {\"type\": \"tuple\"}}}}}\n\n{\"name\": \"b\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ParseBFCL(data, "fuzz", "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "docs fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		checkLoaded(t, []Docs{*d})
		for _, tl := range d.Tools {
			for _, bad := range []string{`"type":"dict"`, `"type":"float"`, `"type":"tuple"`} {
				if strings.Contains(string(tl.InputSchema), bad) || strings.Contains(string(tl.OutputSchema), bad) {
					t.Fatalf("%s keeps %s", tl.Name, bad)
				}
			}
		}
	})
}

func FuzzParseToucan(f *testing.F) {
	f.Add([]byte(`{"id": "s", "name": "S", "tools": [{"name": "list-items", "description": "List", "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}, "annotations": {"readOnlyHint": true}}]}`))
	f.Add([]byte("{\"id\": \"a\", \"tools\": [{\"name\": \"x\"}]}\nnot json\n{\"id\": \"b\", \"tools\": [{\"name\": \"y\", \"inputSchema\": null}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := ParseToucan(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil && !strings.HasPrefix(err.Error(), "docs fuzz.jsonl") {
			t.Fatalf("error does not name the file: %v", err)
		}
		checkLoaded(t, ds)
		// Whatever loads also synthesizes into a spec that validates.
		for i := range ds {
			p, err := (&Deterministic{Rows: 1}).Plan(&ds[i])
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			srv, err := p.Server()
			if err != nil {
				t.Fatalf("server: %v", err)
			}
			if err := srv.Validate(); err != nil {
				t.Fatalf("synthesized spec invalid: %v", err)
			}
		}
	})
}
