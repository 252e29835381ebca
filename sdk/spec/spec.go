package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/weft-dev/weft/sdk/abi"
)

// Format is the "format" value of a weft.server/v1 spec.
const Format = "weft.server/v1"

// Server is one synthesized MCP server (JSON shape of server.json).
//
// Schema is MySQL-dialect DDL (CREATE TABLE statements separated by ";").
// Seed is optional initial rows: {"table": [{column: value}, ...]} or a
// weft.state/v1 export. Errors is the closed set of tool error codes the
// program may raise with tool_error(code, message). Program is the Starlark
// source: helper definitions and one top-level function per tool, named as
// the tool, whose parameters are the tool's arguments (docs/synthesis.md,
// "Program"). Export, when true, says the program defines export(), which
// returns the whole state in the domain's own JSON shape (the module export
// hook, abi.ExportTool). ExportChanged, when true (with Export), says it
// also defines export_changed(changed), which returns only the export's
// records the given rows belong to (abi.ExportChangedTool, docs/abi.md
// "Export of changed records").
type Server struct {
	Format      string          `json:"format"`
	Name        string          `json:"name"`
	Version     string          `json:"version"`
	Description string          `json:"description,omitempty"`
	Schema      string          `json:"schema,omitempty"`
	Seed        json.RawMessage `json:"seed,omitempty"`
	Errors      []ErrorCode     `json:"errors"`
	Program     string          `json:"program,omitempty"`
	Tools       []Tool          `json:"tools"`
	Export      bool            `json:"export,omitempty"`
	// ExportChanged: the program defines export_changed(changed).
	ExportChanged bool `json:"export_changed,omitempty"`

	// Directory form: files relative to server.json that hold Program,
	// Schema and Seed instead of the inline members (Load reads them in).
	ProgramFile string `json:"program_file,omitempty"`
	SchemaFile  string `json:"schema_file,omitempty"`
	SeedFile    string `json:"seed_file,omitempty"`

	// Source says where the server came from (documentation file,
	// synthesizer, revision round); informational.
	Source *Source `json:"source,omitempty"`
}

// Source is the provenance of a synthesized server.
type Source struct {
	Docs        string `json:"docs,omitempty"`        // the documentation it was synthesized from
	Synthesizer string `json:"synthesizer,omitempty"` // deterministic, scripted, endpoint, or "hand" for a hand-written spec
	Rounds      int    `json:"rounds,omitempty"`      // revision rounds run
}

// ErrorCode is one member of a server's closed set of tool error codes.
type ErrorCode struct {
	Code        string `json:"code"` // [a-z][a-z0-9_]*
	Description string `json:"description,omitempty"`
}

// Tool is one tool of a server. InputSchema is a JSON Schema object of the
// arguments (draft 2020-12; "type": "object"); OutputSchema, when present,
// the schema of the object the tool returns. Reads and Writes are the
// tables the tool's SQL may touch (a written table may also be read); a
// read-only tool has no Writes. Errors lists the codes (of Server.Errors)
// the tool may raise.
type Tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	ReadOnly     bool            `json:"read_only"`
	Reads        []string        `json:"reads,omitempty"`
	Writes       []string        `json:"writes,omitempty"`
	Errors       []string        `json:"errors,omitempty"`
}

// Error is one problem with a spec: the server, the tool (empty for a
// server-level field) and the field (a JSON member name, e.g. "writes",
// "input_schema.properties.id").
type Error struct {
	Server string
	Tool   string
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("server ")
	b.WriteString(quoteOr(e.Server))
	if e.Tool != "" {
		b.WriteString(", tool ")
		b.WriteString(quoteOr(e.Tool))
	}
	if e.Field != "" {
		b.WriteString(", field ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func quoteOr(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", s)
}

// Errors is every problem Validate found, in spec order.
type Errors []*Error

func (es Errors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// MaxSpecBytes bounds a spec file Load reads (64 MiB, seed included).
const MaxSpecBytes = 64 << 20

// Parse decodes an inline spec (one JSON object, unknown members refused).
func Parse(data []byte) (*Server, error) {
	if len(data) > MaxSpecBytes {
		return nil, fmt.Errorf("spec: %d bytes exceeds the %d-byte limit", len(data), MaxSpecBytes)
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	var s Server
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("spec: not a weft.server/v1 JSON object: %w", err)
	}
	if dec.More() {
		return nil, errors.New("spec: trailing data after the JSON object")
	}
	return &s, nil
}

// Load reads a spec from path: a JSON file, or a directory holding
// server.json; ProgramFile, SchemaFile and SeedFile are read relative to
// the file's directory (they may not leave it) and cleared.
func Load(path string) (*Server, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	file := path
	if fi.IsDir() {
		file = filepath.Join(path, "server.json")
	}
	data, err := readBounded(file)
	if err != nil {
		return nil, err
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	dir := filepath.Dir(file)
	for _, f := range []struct {
		name   string
		member *string
		into   func([]byte)
	}{
		{"program_file", &s.ProgramFile, func(b []byte) { s.Program = string(b) }},
		{"schema_file", &s.SchemaFile, func(b []byte) { s.Schema = string(b) }},
		{"seed_file", &s.SeedFile, func(b []byte) { s.Seed = json.RawMessage(b) }},
	} {
		if *f.member == "" {
			continue
		}
		rel := filepath.Clean(*f.member)
		if filepath.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, &Error{Server: s.Name, Field: f.name, Msg: fmt.Sprintf("%q leaves the spec's directory", *f.member)}
		}
		b, err := readBounded(filepath.Join(dir, rel))
		if err != nil {
			return nil, &Error{Server: s.Name, Field: f.name, Msg: err.Error()}
		}
		f.into(b)
		*f.member = ""
	}
	return s, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	if fi.Size() > MaxSpecBytes {
		return nil, fmt.Errorf("spec: %s: %d bytes exceeds the %d-byte limit", path, fi.Size(), MaxSpecBytes)
	}
	b := make([]byte, fi.Size())
	if _, err := f.ReadAt(b, 0); err != nil && fi.Size() > 0 {
		return nil, fmt.Errorf("spec: %s: %w", path, err)
	}
	return b, nil
}

var (
	nameRE  = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_.-]{0,127}$`)
	toolRE  = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,127}$`) // a Starlark identifier
	codeRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	tableRE = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]{0,63}$`)
	// CREATE TABLE [IF NOT EXISTS] `name` / name
	createRE = regexp.MustCompile("(?is)\\bcreate\\s+table\\s+(?:if\\s+not\\s+exists\\s+)?`?([a-zA-Z_][a-zA-Z0-9_]*)`?")
)

// Tables returns the table names the schema DDL creates, lower-cased, in
// DDL order.
func (s *Server) Tables() []string {
	var out []string
	for _, m := range createRE.FindAllStringSubmatch(s.Schema, -1) {
		t := strings.ToLower(m[1])
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Tool returns the tool named name, or nil.
func (s *Server) Tool(name string) *Tool {
	for i := range s.Tools {
		if s.Tools[i].Name == name {
			return &s.Tools[i]
		}
	}
	return nil
}

// ErrorCodes returns the codes of s.Errors in spec order.
func (s *Server) ErrorCodes() []string {
	out := make([]string, len(s.Errors))
	for i, e := range s.Errors {
		out[i] = e.Code
	}
	return out
}

// Validate checks the spec without running it: format, names, unique
// tools, input schemas that are JSON objects of "type": "object", error
// codes (well formed, unique, each tool's codes declared), declared tables
// (well formed, created by the DDL, read-only tools writing nothing) and a
// non-empty program. It returns nil or Errors. Whether the program defines
// each tool, with parameters matching its schema, is checked by running it
// (core/synth validation, stage "interface").
func (s *Server) Validate() error {
	var es Errors
	add := func(tool, field, format string, a ...any) {
		es = append(es, &Error{Server: s.Name, Tool: tool, Field: field, Msg: fmt.Sprintf(format, a...)})
	}
	if s.Format != Format {
		add("", "format", "is %q, want %q", s.Format, Format)
	}
	if !nameRE.MatchString(s.Name) {
		add("", "name", "%q is not a server name (a letter, then letters, digits, _ . -; at most 128)", s.Name)
	}
	if s.Version == "" {
		add("", "version", "is empty")
	}
	if strings.TrimSpace(s.Program) == "" {
		add("", "program", "is empty")
	}
	if s.ProgramFile != "" || s.SchemaFile != "" || s.SeedFile != "" {
		add("", "program_file", "file references are resolved by Load; Validate a loaded spec")
	}
	codes := map[string]bool{}
	for i, e := range s.Errors {
		f := fmt.Sprintf("errors[%d].code", i)
		switch {
		case !codeRE.MatchString(e.Code):
			add("", f, "%q is not an error code (lower case letters, digits, _)", e.Code)
		case codes[e.Code]:
			add("", f, "%q declared twice", e.Code)
		}
		codes[e.Code] = true
	}
	tables := map[string]bool{}
	for _, t := range s.Tables() {
		tables[t] = true
	}
	if len(s.Seed) > 0 && !json.Valid(s.Seed) {
		add("", "seed", "is not JSON")
	}
	if len(s.Tools) == 0 {
		add("", "tools", "no tools")
	}
	if s.ExportChanged && !s.Export {
		add("", "export_changed", "set without export")
	}
	seen := map[string]bool{}
	for i, t := range s.Tools {
		name := t.Name
		if !toolRE.MatchString(name) {
			add(name, fmt.Sprintf("tools[%d].name", i), "%q is not a tool name (a Starlark identifier: letters, digits, _)", name)
		} else if seen[name] {
			add(name, "name", "tool declared twice")
		}
		seen[name] = true
		if strings.HasPrefix(name, abi.ReservedPrefix) || name == "export" || name == "export_changed" {
			add(name, "name", "reserved name")
		}
		if strings.TrimSpace(t.Description) == "" {
			add(name, "description", "is empty")
		}
		checkObjectSchema(t.InputSchema, func(msg string) { add(name, "input_schema", "%s", msg) }, true)
		if len(t.OutputSchema) > 0 {
			checkObjectSchema(t.OutputSchema, func(msg string) { add(name, "output_schema", "%s", msg) }, false)
		}
		if t.ReadOnly && len(t.Writes) > 0 {
			add(name, "writes", "a read-only tool writes %v", t.Writes)
		}
		for _, f := range []struct {
			field string
			list  []string
		}{{"reads", t.Reads}, {"writes", t.Writes}} {
			for _, tab := range f.list {
				switch {
				case !tableRE.MatchString(tab):
					add(name, f.field, "%q is not a table name", tab)
				case !tables[strings.ToLower(tab)]:
					add(name, f.field, "table %q is not created by the schema (tables: %s)", tab, strings.Join(s.Tables(), ", "))
				}
			}
		}
		for _, c := range t.Errors {
			if !codes[c] {
				add(name, "errors", "code %q is not among the server's errors", c)
			}
		}
	}
	if len(es) == 0 {
		return nil
	}
	return es
}

// checkObjectSchema reports a schema that is not a JSON object, or (when
// mustObject) whose "type" is not "object".
func checkObjectSchema(raw json.RawMessage, bad func(string), mustObject bool) {
	if len(raw) == 0 {
		bad("is missing")
		return
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		bad("is not a JSON object: " + err.Error())
		return
	}
	if mustObject {
		if typ, _ := m["type"].(string); typ != "object" {
			bad(fmt.Sprintf(`"type" is %v, want "object"`, m["type"]))
		}
	}
	if props, ok := m["properties"]; ok {
		if _, isObj := props.(map[string]any); !isObj {
			bad(`"properties" is not an object`)
		}
	}
}

// Program is what the interpreter runs for this server: the Starlark
// source and the error codes, content-addressed (abi.Program).
func (s *Server) ProgramRef() abi.Program {
	p := abi.Program{Source: s.Program, Errors: s.ErrorCodes()}
	p.Digest = ProgramDigest(p.Source, p.Errors)
	return p
}

// ProgramDigest is "sha256:<hex>" over the program source and its error
// codes (each followed by a NUL byte), the key an interpreter caches a
// compiled program under.
func ProgramDigest(source string, codes []string) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	for _, c := range codes {
		h.Write([]byte(c))
		h.Write([]byte{0})
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// Manifest is the module manifest a server is served under: its tools
// (inputSchema, outputSchema, readOnlyHint), the tables of its DDL as
// owned, the host libraries the interpreter uses, and Export.
func (s *Server) Manifest() abi.Manifest {
	m := abi.Manifest{
		ABI: abi.Version, Name: s.Name, Version: s.Version, Description: s.Description,
		Tools:  make([]abi.Tool, 0, len(s.Tools)),
		Tables: abi.Tables{Owns: s.Tables()},
		Hosts:  map[string]string{"sql": "v1", "clock": "v1", "rand": "v1", "log": "v1"},
		Export: s.Export, ExportChanged: s.ExportChanged,
	}
	if m.Tables.Owns == nil {
		m.Tables.Owns = []string{}
	}
	for _, t := range s.Tools {
		at := abi.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, OutputSchema: t.OutputSchema}
		if t.ReadOnly {
			at.Annotations = &abi.Annotations{ReadOnlyHint: true}
		}
		m.Tools = append(m.Tools, at)
	}
	return m
}
