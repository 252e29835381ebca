package synth

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// DocsError is one problem with a documentation file: the file, the
// server (a Toucan record's id, or the docs' name), the tool and the field
// (a JSON member path such as "parameters.properties.x.type"); empty parts
// are left out of the message.
type DocsError struct {
	File   string
	Line   int // 1-based line of a JSON-lines file; 0 when not line-based
	Server string
	Tool   string
	Field  string
	Msg    string
}

func (e *DocsError) Error() string {
	var b strings.Builder
	b.WriteString("docs")
	if e.File != "" {
		b.WriteString(" ")
		b.WriteString(e.File)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
		}
	}
	if e.Server != "" {
		fmt.Fprintf(&b, ", server %q", e.Server)
	}
	if e.Tool != "" {
		fmt.Fprintf(&b, ", tool %q", e.Tool)
	}
	if e.Field != "" {
		b.WriteString(", field ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

// MaxDocsBytes bounds one documentation file the loaders read (64 MiB).
const MaxDocsBytes = 64 << 20

// LoadDocs reads documentation from path, telling the format by its
// content: a JSON array is tau2 tools.json (ParseTau2Tools), JSON lines
// whose first object has "tools" are Toucan servers.jsonl (ParseToucan,
// one Docs per line), other JSON lines are BFCL function docs
// (ParseBFCL). A JSON object with "tools" is one Docs as core/synth
// writes it (the Docs JSON shape). The docs' name is the file's base name
// without extension (tools.json: its directory's name).
func LoadDocs(path string) ([]Docs, error) {
	data, err := readDocs(path)
	if err != nil {
		return nil, err
	}
	name := docsName(path)
	trim := bytes.TrimSpace(data)
	switch {
	case len(trim) == 0:
		return nil, &DocsError{File: path, Msg: "empty file"}
	case trim[0] == '[':
		d, err := ParseTau2Tools(data, name, path)
		if err != nil {
			return nil, err
		}
		return []Docs{*d}, nil
	}
	first, _, _ := bytes.Cut(trim, []byte("\n"))
	var probe map[string]json.RawMessage
	if json.Unmarshal(first, &probe) == nil {
		if _, ok := probe["tools"]; ok {
			if _, isDocs := probe["name"]; isDocs && !bytes.Contains(trim, []byte("\n{")) {
				if _, hasID := probe["id"]; !hasID {
					var d Docs
					if err := strictDecode(trim, &d); err != nil {
						return nil, &DocsError{File: path, Msg: "not a Docs JSON object: " + err.Error()}
					}
					if err := checkDocs(&d, path); err != nil {
						return nil, err
					}
					return []Docs{d}, nil
				}
			}
			return ParseToucan(bytes.NewReader(data), path)
		}
	}
	d, err := ParseBFCL(data, name, path)
	if err != nil {
		return nil, err
	}
	return []Docs{*d}, nil
}

func readDocs(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &DocsError{File: path, Msg: err.Error()}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxDocsBytes+1))
	if err != nil {
		return nil, &DocsError{File: path, Msg: err.Error()}
	}
	if len(data) > MaxDocsBytes {
		return nil, &DocsError{File: path, Msg: fmt.Sprintf("larger than the %d-byte limit", MaxDocsBytes)}
	}
	return data, nil
}

func docsName(path string) string {
	base := filepath.Base(path)
	if base == "tools.json" {
		return filepath.Base(filepath.Dir(path))
	}
	return strings.TrimSuffix(base, filepath.Ext(base))
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// tau2Tool is one entry of tau2-bench's tools.json (tau2's openai_schema
// of a Tool plus its read_only flag and tool_type).
type tau2Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	ReadOnly    *bool           `json:"read_only"`
	ToolType    string          `json:"tool_type"`
}

// ParseTau2Tools parses tau2-bench tools.json: a JSON array of {"name",
// "description", "parameters" (JSON Schema, "$defs" allowed), "read_only",
// "tool_type"}. The read_only flag is tau2's own declaration and is NOT
// carried into ReadOnlyHint (tau2's documentation shown to an agent has
// no annotations), so classification from these docs is by the lexicon.
// name names the Docs, source is the file for messages.
func ParseTau2Tools(data []byte, name, source string) (*Docs, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &DocsError{File: source, Server: name, Msg: "not a JSON array of tool definitions: " + err.Error()}
	}
	d := &Docs{Name: name, Source: source}
	for i, r := range raw {
		var t tau2Tool
		if err := json.Unmarshal(r, &t); err != nil {
			return nil, &DocsError{File: source, Server: name, Field: fmt.Sprintf("[%d]", i), Msg: "not a tool definition object: " + err.Error()}
		}
		if t.Name == "" {
			return nil, &DocsError{File: source, Server: name, Field: fmt.Sprintf("[%d].name", i), Msg: "missing"}
		}
		schema, err := normalizeSchema(t.Parameters, false)
		if err != nil {
			return nil, &DocsError{File: source, Server: name, Tool: t.Name, Field: "parameters" + err.field, Msg: err.msg}
		}
		d.Tools = append(d.Tools, DocTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if err := checkDocs(d, source); err != nil {
		return nil, err
	}
	return d, nil
}

// bfclDoc is one line of a BFCL func_docs file.
type bfclDoc struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	Response    json.RawMessage `json:"response"`
}

// ParseBFCL parses a BFCL multi-turn func_docs file: one JSON object per
// line, {"name", "description", "parameters", "response"}, in BFCL's
// schema dialect, converted to JSON Schema: "dict" -> "object", "float" ->
// "number", "tuple" -> "array", "any" -> no type constraint; "integer",
// "array", "boolean", "string" kept. "response" becomes the OutputSchema.
// Blank lines are skipped.
func ParseBFCL(data []byte, name, source string) (*Docs, error) {
	d := &Docs{Name: name, Source: source}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), MaxDocsBytes)
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		var f bfclDoc
		if err := json.Unmarshal(text, &f); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				// Not JSON at all (a truncated copy, say): say so, not "not BFCL".
				return nil, &DocsError{File: source, Line: line, Server: name, Msg: fmt.Sprintf("invalid JSON at byte %d of the line: %v", se.Offset, err)}
			}
			return nil, &DocsError{File: source, Line: line, Server: name, Msg: "not a BFCL function doc object: " + err.Error()}
		}
		if f.Name == "" {
			return nil, &DocsError{File: source, Line: line, Server: name, Field: "name", Msg: "missing"}
		}
		in, err := normalizeSchema(f.Parameters, true)
		if err != nil {
			return nil, &DocsError{File: source, Line: line, Server: name, Tool: f.Name, Field: "parameters" + err.field, Msg: err.msg}
		}
		t := DocTool{Name: f.Name, Description: f.Description, InputSchema: in}
		if len(bytes.TrimSpace(f.Response)) > 0 && string(bytes.TrimSpace(f.Response)) != "null" {
			out, err := normalizeSchema(f.Response, true)
			if err != nil {
				return nil, &DocsError{File: source, Line: line, Server: name, Tool: f.Name, Field: "response" + err.field, Msg: err.msg}
			}
			t.OutputSchema = out
		}
		d.Tools = append(d.Tools, t)
	}
	if err := sc.Err(); err != nil {
		return nil, &DocsError{File: source, Line: line + 1, Server: name, Msg: err.Error()}
	}
	if err := checkDocs(d, source); err != nil {
		return nil, err
	}
	return d, nil
}

// toucanServer is one line of Toucan servers.jsonl.
type toucanServer struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Description   string          `json:"description"`
	License       string          `json:"license"`
	Author        string          `json:"author"`
	RepositoryURL string          `json:"repository_url"`
	PrimaryLabel  string          `json:"primary_label"`
	ToolsSource   string          `json:"tools_source"`
	Tools         json.RawMessage `json:"tools"`
}

type toucanTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations *struct {
		ReadOnlyHint *bool `json:"readOnlyHint"`
	} `json:"annotations"`
}

// ParseToucan parses Toucan servers.jsonl: one server per line ({"id",
// "name", "description", "license", "tools": [MCP tools/list entries with
// "inputSchema" and, where the server sets them, "annotations"]}). Docs.Name
// is the record's id; a tool's annotations.readOnlyHint becomes
// ReadOnlyHint. A malformed line does not stop the others: ParseToucan
// returns the servers that parse and, when some did not, an error joining
// one *DocsError per bad line (errors.Join).
func ParseToucan(r io.Reader, source string) ([]Docs, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), MaxDocsBytes)
	var out []Docs
	var errs []error
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		d, err := parseToucanLine(text, source, line)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, *d)
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, &DocsError{File: source, Line: line + 1, Msg: err.Error()})
	}
	return out, errors.Join(errs...)
}

func parseToucanLine(text []byte, source string, line int) (*Docs, error) {
	var s toucanServer
	if err := json.Unmarshal(text, &s); err != nil {
		return nil, &DocsError{File: source, Line: line, Msg: "not a Toucan server object: " + err.Error()}
	}
	if s.ID == "" {
		return nil, &DocsError{File: source, Line: line, Server: s.Name, Field: "id", Msg: "missing"}
	}
	var tools []json.RawMessage
	if err := json.Unmarshal(s.Tools, &tools); err != nil || tools == nil {
		msg := "missing"
		if err != nil {
			msg = "not an array of tools: " + err.Error()
		}
		return nil, &DocsError{File: source, Line: line, Server: s.ID, Field: "tools", Msg: msg}
	}
	d := &Docs{Name: s.ID, Description: s.Description, Source: source, License: s.License}
	if s.Description == "" {
		d.Description = s.Name
	}
	for i, raw := range tools {
		var t toucanTool
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, &DocsError{File: source, Line: line, Server: s.ID, Field: fmt.Sprintf("tools[%d]", i), Msg: "not a tool object: " + err.Error()}
		}
		if t.Name == "" {
			return nil, &DocsError{File: source, Line: line, Server: s.ID, Field: fmt.Sprintf("tools[%d].name", i), Msg: "missing"}
		}
		schema, err := normalizeSchema(t.InputSchema, false)
		if err != nil {
			return nil, &DocsError{File: source, Line: line, Server: s.ID, Tool: t.Name, Field: "inputSchema" + err.field, Msg: err.msg}
		}
		dt := DocTool{Name: t.Name, Description: t.Description, InputSchema: schema}
		if t.Annotations != nil {
			dt.ReadOnlyHint = t.Annotations.ReadOnlyHint
		}
		d.Tools = append(d.Tools, dt)
	}
	if err := checkDocs(d, source); err != nil {
		var de *DocsError
		if errors.As(err, &de) {
			de.Line = line
		}
		return nil, err
	}
	return d, nil
}

// checkDocs refuses docs without tools or with two tools of one name.
func checkDocs(d *Docs, source string) error {
	if len(d.Tools) == 0 {
		return &DocsError{File: source, Server: d.Name, Field: "tools", Msg: "no tools documented"}
	}
	seen := map[string]bool{}
	for _, t := range d.Tools {
		if t.Name == "" {
			return &DocsError{File: source, Server: d.Name, Field: "tools.name", Msg: "missing"}
		}
		if seen[t.Name] {
			return &DocsError{File: source, Server: d.Name, Tool: t.Name, Field: "name", Msg: "documented twice"}
		}
		seen[t.Name] = true
		if len(t.InputSchema) == 0 {
			return &DocsError{File: source, Server: d.Name, Tool: t.Name, Field: "inputSchema", Msg: "missing"}
		}
	}
	return nil
}

type schemaErr struct{ field, msg string }

// maxSchemaDepth bounds the nesting of a documented schema.
const maxSchemaDepth = 64

// normalizeSchema checks a documented input or output schema and returns
// it as JSON Schema: absent or null is an object without properties; the
// top level must be an object schema ("type" "object", or no type with
// "properties"); with bfcl, BFCL's type names are translated. Member
// order is kept.
func normalizeSchema(raw json.RawMessage, bfcl bool) (json.RawMessage, *schemaErr) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	v, err := decodeOrdered(t)
	if err != nil {
		return nil, &schemaErr{"", "not JSON: " + err.Error()}
	}
	obj, ok := v.(*omap)
	if !ok {
		return nil, &schemaErr{"", fmt.Sprintf("is a JSON %s, not a schema object", jsonKind(v))}
	}
	if e := walkSchema(obj, "", bfcl, 0); e != nil {
		return nil, e
	}
	typ, has := obj.get("type")
	switch {
	case !has:
		obj.set("type", "object")
	case typ != "object":
		return nil, &schemaErr{".type", fmt.Sprintf("is %s, want \"object\" (a tool's arguments are an object)", docJSONText(typ))}
	}
	if p, ok := obj.get("properties"); !ok || p == nil {
		obj.set("properties", &omap{})
	}
	b, _ := json.Marshal(obj)
	return b, nil
}

var bfclTypes = map[string]string{"dict": "object", "float": "number", "tuple": "array", "int": "integer", "bool": "boolean", "str": "string", "list": "array"}

var jsonTypes = map[string]bool{"object": true, "array": true, "string": true, "number": true, "integer": true, "boolean": true, "null": true}

// walkSchema checks one schema node: "type" a known type name (or a list
// of them), "properties" an object of schemas, "items" a schema (or list),
// "required" a list of strings, "enum" a list.
func walkSchema(s *omap, path string, bfcl bool, depth int) *schemaErr {
	if depth > maxSchemaDepth {
		return &schemaErr{path, fmt.Sprintf("nested deeper than %d", maxSchemaDepth)}
	}
	if typ, ok := s.get("type"); ok {
		switch x := typ.(type) {
		case string:
			if bfcl {
				if x == "any" {
					s.del("type")
					break
				}
				if m, ok := bfclTypes[x]; ok {
					x = m
					s.set("type", x)
				}
			}
			if !jsonTypes[x] {
				return &schemaErr{path + ".type", fmt.Sprintf("%q is not a JSON Schema type", x)}
			}
		case []any:
			for i, e := range x {
				str, ok := e.(string)
				if bfcl {
					if m, ok2 := bfclTypes[str]; ok2 {
						x[i], str = m, m
					}
				}
				if !ok || !jsonTypes[str] {
					return &schemaErr{fmt.Sprintf("%s.type[%d]", path, i), fmt.Sprintf("%s is not a JSON Schema type", docJSONText(e))}
				}
			}
		case nil:
			s.del("type")
		default:
			return &schemaErr{path + ".type", fmt.Sprintf("is a JSON %s, not a type name", jsonKind(typ))}
		}
	}
	if p, ok := s.get("properties"); ok && p != nil {
		props, ok := p.(*omap)
		if !ok {
			return &schemaErr{path + ".properties", fmt.Sprintf("is a JSON %s, not an object of schemas", jsonKind(p))}
		}
		for _, k := range props.keys {
			sub, ok := props.vals[k].(*omap)
			if !ok {
				if props.vals[k] == nil || props.vals[k] == true {
					props.vals[k] = &omap{}
					continue
				}
				return &schemaErr{path + ".properties." + k, fmt.Sprintf("is a JSON %s, not a schema", jsonKind(props.vals[k]))}
			}
			if e := walkSchema(sub, path+".properties."+k, bfcl, depth+1); e != nil {
				return e
			}
		}
	}
	if it, ok := s.get("items"); ok && it != nil {
		switch x := it.(type) {
		case *omap:
			if e := walkSchema(x, path+".items", bfcl, depth+1); e != nil {
				return e
			}
		case []any:
			for i, e := range x {
				if sub, ok := e.(*omap); ok {
					if err := walkSchema(sub, fmt.Sprintf("%s.items[%d]", path, i), bfcl, depth+1); err != nil {
						return err
					}
				}
			}
		case bool:
		default:
			return &schemaErr{path + ".items", fmt.Sprintf("is a JSON %s, not a schema", jsonKind(it))}
		}
	}
	if r, ok := s.get("required"); ok && r != nil {
		list, ok := r.([]any)
		if !ok {
			if _, isBool := r.(bool); isBool { // draft-3 style "required": true on a property
				s.del("required")
				return nil
			}
			return &schemaErr{path + ".required", fmt.Sprintf("is a JSON %s, not a list of names", jsonKind(r))}
		}
		for i, e := range list {
			if _, ok := e.(string); !ok {
				return &schemaErr{fmt.Sprintf("%s.required[%d]", path, i), fmt.Sprintf("%s is not a property name", docJSONText(e))}
			}
		}
	}
	if en, ok := s.get("enum"); ok && en != nil {
		if _, ok := en.([]any); !ok {
			return &schemaErr{path + ".enum", fmt.Sprintf("is a JSON %s, not a list", jsonKind(en))}
		}
	}
	for _, k := range []string{"$defs", "definitions"} {
		if dv, ok := s.get(k); ok {
			defs, ok := dv.(*omap)
			if !ok {
				return &schemaErr{path + "." + k, fmt.Sprintf("is a JSON %s, not an object of schemas", jsonKind(dv))}
			}
			for _, name := range defs.keys {
				if sub, ok := defs.vals[name].(*omap); ok {
					if e := walkSchema(sub, path+"."+k+"."+name, bfcl, depth+1); e != nil {
						return e
					}
				}
			}
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *omap:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func docJSONText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 60 {
		b = append(b[:57], "..."...)
	}
	return string(b)
}

// omap is a JSON object that keeps member order.
type omap struct {
	keys []string
	vals map[string]any
}

func (m *omap) get(k string) (any, bool) {
	if m.vals == nil {
		return nil, false
	}
	v, ok := m.vals[k]
	return v, ok
}

func (m *omap) set(k string, v any) {
	if m.vals == nil {
		m.vals = map[string]any{}
	}
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

func (m *omap) del(k string) {
	if _, ok := m.vals[k]; !ok {
		return
	}
	delete(m.vals, k)
	for i, x := range m.keys {
		if x == k {
			m.keys = append(m.keys[:i], m.keys[i+1:]...)
			break
		}
	}
}

func (m *omap) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// decodeOrdered decodes JSON with objects as *omap (member order kept; a
// repeated member keeps its last value) and numbers as json.Number.
func decodeOrdered(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeOrderedValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeOrderedValue(dec *json.Decoder, depth int) (any, error) {
	if depth > 4*maxSchemaDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", 4*maxSchemaDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := &omap{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeOrderedValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				m.set(k, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return m, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeOrderedValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}
