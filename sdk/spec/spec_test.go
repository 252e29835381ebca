package spec_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/spec"
)

func validServer() *spec.Server {
	return &spec.Server{
		Format: spec.Format, Name: "notes", Version: "1.0.0",
		Schema:  "CREATE TABLE notes (id INT PRIMARY KEY, text TEXT);\ncreate table IF NOT EXISTS `Tags` (id INT PRIMARY KEY)",
		Errors:  []spec.ErrorCode{{Code: "not_found", Description: "no such note"}},
		Program: "def get_note(id):\n    return query_one('SELECT * FROM notes WHERE id = ?', id)\n",
		Tools: []spec.Tool{{
			Name: "get_note", Description: "Returns a note.", ReadOnly: true,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`),
			Reads:       []string{"notes"}, Errors: []string{"not_found"},
		}},
	}
}

func TestValidateAcceptsValid(t *testing.T) {
	s := validServer()
	if err := s.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if diff := cmp.Diff([]string{"notes", "tags"}, s.Tables()); diff != "" {
		t.Errorf("Tables (-want +got):\n%s", diff)
	}
}

// Each broken spec gives exactly the errors that name its server, tool and
// field.
func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*spec.Server)
		want   []string
	}{
		{"format", func(s *spec.Server) { s.Format = "weft.server/v0" }, []string{`server "notes", field format: is "weft.server/v0", want "weft.server/v1"`}},
		{"name", func(s *spec.Server) { s.Name = "9 bad" }, []string{`server "9 bad", field name: "9 bad" is not a server name (a letter, then letters, digits, _ . -; at most 128)`}},
		{"empty program", func(s *spec.Server) { s.Program = "  " }, []string{`server "notes", field program: is empty`}},
		{"undeclared table", func(s *spec.Server) { s.Tools[0].Reads = []string{"secrets"} },
			[]string{`server "notes", tool "get_note", field reads: table "secrets" is not created by the schema (tables: notes, tags)`}},
		{"read-only writes", func(s *spec.Server) { s.Tools[0].Writes = []string{"notes"} },
			[]string{`server "notes", tool "get_note", field writes: a read-only tool writes [notes]`}},
		{"unknown code", func(s *spec.Server) { s.Tools[0].Errors = []string{"gone"} },
			[]string{`server "notes", tool "get_note", field errors: code "gone" is not among the server's errors`}},
		{"duplicate code", func(s *spec.Server) { s.Errors = append(s.Errors, spec.ErrorCode{Code: "not_found"}) },
			[]string{`server "notes", field errors[1].code: "not_found" declared twice`}},
		{"bad code", func(s *spec.Server) { s.Errors[0].Code = "Not-Found"; s.Tools[0].Errors = nil },
			[]string{`server "notes", field errors[0].code: "Not-Found" is not an error code (lower case letters, digits, _)`}},
		{"schema not object", func(s *spec.Server) { s.Tools[0].InputSchema = json.RawMessage(`{"type":"string"}`) },
			[]string{`server "notes", tool "get_note", field input_schema: "type" is string, want "object"`}},
		{"schema not JSON", func(s *spec.Server) { s.Tools[0].InputSchema = json.RawMessage(`{`) },
			[]string{`server "notes", tool "get_note", field input_schema: is not a JSON object: unexpected end of JSON input`}},
		{"tool name", func(s *spec.Server) { s.Tools[0].Name = "get-note" },
			[]string{`server "notes", tool "get-note", field tools[0].name: "get-note" is not a tool name (a Starlark identifier: letters, digits, _)`}},
		{"reserved", func(s *spec.Server) { s.Tools[0].Name = "export" }, []string{`server "notes", tool "export", field name: reserved name`}},
		{"reserved export_changed", func(s *spec.Server) { s.Tools[0].Name = "export_changed" }, []string{`server "notes", tool "export_changed", field name: reserved name`}},
		{"export_changed without export", func(s *spec.Server) { s.Export, s.ExportChanged = false, true }, []string{`server "notes", field export_changed: set without export`}},
		{"duplicate tool", func(s *spec.Server) { s.Tools = append(s.Tools, s.Tools[0]) }, []string{`server "notes", tool "get_note", field name: tool declared twice`}},
		{"no tools", func(s *spec.Server) { s.Tools = nil }, []string{`server "notes", field tools: no tools`}},
		{"seed", func(s *spec.Server) { s.Seed = json.RawMessage(`{"notes": [`) }, []string{`server "notes", field seed: is not JSON`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := validServer()
			tc.mutate(s)
			err := s.Validate()
			var es spec.Errors
			if !errors.As(err, &es) {
				t.Fatalf("Validate = %v, want spec.Errors", err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Error())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseRefusesUnknownMembers(t *testing.T) {
	_, err := spec.Parse([]byte(`{"format":"weft.server/v1","name":"x","tool":[]}`))
	if err == nil || !strings.Contains(err.Error(), `unknown field "tool"`) {
		t.Fatalf("Parse = %v, want an unknown-field error", err)
	}
	if _, err := spec.Parse([]byte(`{"format":"weft.server/v1"} {}`)); err == nil || !strings.Contains(err.Error(), "trailing data") {
		t.Fatalf("Parse with trailing data = %v", err)
	}
}

func TestLoadDirectory(t *testing.T) {
	dir := t.TempDir()
	s := validServer()
	prog, schema := s.Program, s.Schema
	s.Program, s.Schema, s.ProgramFile, s.SchemaFile, s.SeedFile = "", "", "program.star", "schema.sql", "seed.json"
	b, _ := json.Marshal(s)
	for name, data := range map[string]string{"server.json": string(b), "program.star": prog, "schema.sql": schema, "seed.json": `{"notes":[{"id":1,"text":"a"}]}`} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Program != prog || got.Schema != schema || string(got.Seed) != `{"notes":[{"id":1,"text":"a"}]}` {
		t.Fatalf("Load did not read the files: %+v", got)
	}
	if got.ProgramFile != "" || got.SchemaFile != "" || got.SeedFile != "" {
		t.Errorf("file references not cleared: %+v", got)
	}
	if err := got.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRefusesEscapingFiles(t *testing.T) {
	dir := t.TempDir()
	s := validServer()
	s.Program, s.ProgramFile = "", "../outside.star"
	b, _ := json.Marshal(s)
	if err := os.WriteFile(filepath.Join(dir, "server.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := spec.Load(dir)
	want := `server "notes", field program_file: "../outside.star" leaves the spec's directory`
	if err == nil || err.Error() != want {
		t.Fatalf("Load = %v, want %q", err, want)
	}
}

func TestManifestAndProgram(t *testing.T) {
	s := validServer()
	m := s.Manifest()
	if m.ABI != abi.Version || m.Name != "notes" || len(m.Tools) != 1 || m.Tools[0].Annotations == nil || !m.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("Manifest = %+v", m)
	}
	if diff := cmp.Diff([]string{"notes", "tags"}, m.Tables.Owns); diff != "" {
		t.Errorf("Owns (-want +got):\n%s", diff)
	}
	p := s.ProgramRef()
	if p.Digest != spec.ProgramDigest(s.Program, []string{"not_found"}) || p.Source != s.Program {
		t.Fatalf("ProgramRef = %+v", p)
	}
	// The digest covers the error codes: a program with other codes is
	// another program.
	if spec.ProgramDigest(s.Program, nil) == p.Digest {
		t.Error("digest ignores the error codes")
	}
	const want = "sha256:"
	if !strings.HasPrefix(p.Digest, want) || len(p.Digest) != len(want)+64 {
		t.Errorf("digest %q", p.Digest)
	}
}
