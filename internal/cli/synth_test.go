package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/abi"
)

const (
	libraryDocs   = "../../core/synth/testdata/library.docs.json"
	libraryScript = "../../core/synth/testdata/library.script.json"
)

// synthRegistry is a private registry holding a stand-in interpreter
// bundle (server bundles name its digest; nothing here runs it).
func synthRegistry(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "registry")
	reg, err := module.OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	b := &module.Bundle{Manifest: module.Manifest{ABI: abi.Version, Name: module.InterpreterName, Version: "test", Tables: abi.Tables{Owns: []string{}}},
		Wasm: []byte("\x00asm\x01\x00\x00\x00")}
	if _, err := reg.Put(b); err != nil {
		t.Fatal(err)
	}
	return dir
}

// registryFiles lists every file under dir with its size, to show that a
// refused synthesis left the registry as it was.
func registryFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			b, _ := os.ReadFile(p)
			out = append(out, strings.TrimPrefix(p, dir)+" "+string(b[:min(len(b), 80)]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// docsNamed writes the library docs under another name (the scripted
// synthesizer's key).
func docsNamed(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(libraryDocs)
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	d["name"] = name
	b, _ = json.Marshal(d)
	p := filepath.Join(t.TempDir(), name+".json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSynthEnvScriptedRegistersAndValidates(t *testing.T) {
	reg := synthRegistry(t)
	out := filepath.Join(t.TempDir(), "library")
	code, stdout, stderr := run(t, stamped, "synth", "env", "--docs", libraryDocs, "--synthesizer", "scripted", "--script", libraryScript,
		"--out", out, "--registry", reg)
	if code != ExitOK {
		t.Fatalf("synth env: %d\n%s\n%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	digest := lines[len(lines)-1]
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != 71 || !strings.Contains(stdout, "synthesized library 1.0.0 with the scripted synthesizer in 1 round(s): passed") {
		t.Fatalf("stdout:\n%s", stdout)
	}
	if !strings.Contains(stderr, "round=0 passed=true") {
		t.Errorf("no progress on stderr:\n%s", stderr)
	}
	rep, err := synth.ReadReport(out)
	if err != nil || !rep.Passed || len(rep.Rounds) != 1 || rep.Server != "library" {
		t.Fatalf("report %+v, %v", rep, err)
	}
	for _, f := range []string{"server.json", "program.star", "schema.sql", "seed.json", synth.ReportFile} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("spec dir: %v", err)
		}
	}
	// The registered bundle and the written directory validate alike.
	for _, ref := range []string{out, digest, "library:1.0.0"} {
		code, stdout, stderr = run(t, stamped, "synth", "validate", ref, "--json", "--registry", reg)
		var got synth.Report
		if code != ExitOK || json.Unmarshal([]byte(stdout), &got) != nil {
			t.Fatalf("validate %s: %d %s %s", ref, code, stdout, stderr)
		}
		if diff := cmp.Diff(rep.Stages, got.Stages); diff != "" || !got.Passed {
			t.Errorf("validate %s: stages differ from the written report (-want +got):\n%s", ref, diff)
		}
	}
	code, stdout, _ = run(t, stamped, "synth", "validate", out)
	if code != ExitOK || !strings.Contains(stdout, "server library 1.0.0: passed") || !strings.Contains(stdout, "readback  passed") {
		t.Errorf("human report: %d\n%s", code, stdout)
	}
}

// TestSynthEnvRevisesWithJSON: a planted fault is fixed in round 1; with
// --json stdout is one object.
func TestSynthEnvRevisesWithJSON(t *testing.T) {
	reg := synthRegistry(t)
	code, stdout, stderr := run(t, stamped, "synth", "env", "--docs", docsNamed(t, "library-wrong-column"), "--synthesizer", "scripted",
		"--script", libraryScript, "--out", filepath.Join(t.TempDir(), "x"), "--registry", reg, "--json")
	var res synthResult
	if code != ExitOK || json.Unmarshal([]byte(stdout), &res) != nil {
		t.Fatalf("%d %s %s", code, stdout, stderr)
	}
	if !res.Passed || res.Rounds != 1 || res.Synthesizer != "scripted" || !strings.HasPrefix(res.Digest, "sha256:") || res.Findings != 0 {
		t.Errorf("result %+v", res)
	}
	if !strings.Contains(stderr, "first_failed=normal") {
		t.Errorf("round 0 progress missing:\n%s", stderr)
	}
}

// TestSynthEnvBadInput is issue 17's must-show 7 at the command line: each
// bad input gives a clear error naming server, tool and field, and the
// registry is unchanged.
func TestSynthEnvBadInput(t *testing.T) {
	file := func(text string) string {
		p := filepath.Join(t.TempDir(), "docs.json")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		docs string
		want []string // in stdout or stderr
		det  bool     // synthesize deterministically (else the scripted answers)
	}{
		{"malformed docs: truncated", file(`{"name": "library", "tools": [{"name": "get`), []string{"docs", "unexpected end of JSON input"}, false},
		{"malformed docs: nameless tool", file(`{"name": "library", "tools": [{"name": "", "description": "x", "inputSchema": {"type": "object"}}]}`), []string{`server "library", field tools.name: missing`}, false},
		{"malformed docs: schema", file(`{"name": "library", "tools": [{"name": "get_member", "description": "x", "inputSchema": {"type": "object", "properties": 7}}]}`),
			[]string{`spec_invalid: server "library", tool "get_member", field input_schema: "properties" is not an object`}, true},
		{"invalid spec", docsNamed(t, "library-bad-spec"), []string{"spec_invalid", `server "library", tool "return_book", field writes`, `table "fines" is not created by the schema`}, false},
		{"undeclared table", docsNamed(t, "library-unknown-table"), []string{"table_unknown", `server "library", tool "list_loans", field program`, `table "loan_history"`}, false},
		{"seed violates the schema", docsNamed(t, "library-seed"), []string{"seed_invalid", `server "library", field seed`, "'two' is not a valid value for 'int' (table books)"}, false},
		{"looping implementation", docsNamed(t, "library-loop"), []string{"normal/budget", `tool "list_loans"`, "is not registered", "nothing registered"}, false},
		{"allocating implementation", docsNamed(t, "library-alloc"), []string{"normal/budget", `tool "get_book"`, "memory: the call allocated more than"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := synthRegistry(t)
			before := registryFiles(t, reg)
			args := []string{"synth", "env", "--docs", tt.docs, "--synthesizer", "scripted", "--script", badScript(t),
				"--rounds", "0", "--out", filepath.Join(t.TempDir(), "out"), "--registry", reg}
			if tt.det {
				args[5], args[7] = "deterministic", ""
			}
			code, stdout, stderr := run(t, stamped, args...)
			if code == ExitOK {
				t.Fatalf("exit 0:\n%s", stdout)
			}
			all := stdout + stderr
			for _, w := range tt.want {
				if !strings.Contains(all, w) {
					t.Errorf("output lacks %q:\n%s", w, all)
				}
			}
			if diff := cmp.Diff(before, registryFiles(t, reg)); diff != "" {
				t.Errorf("registry changed (-before +after):\n%s", diff)
			}
		})
	}
}

// badScript is the library script plus answers planting bad specs.
func badScript(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(libraryScript)
	if err != nil {
		t.Fatal(err)
	}
	var sc synth.Script
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	lib, _ := filepath.Abs("../../core/synth/testdata/library")
	for i := range sc.Answers {
		if sc.Answers[i].File != "" {
			sc.Answers[i].File = lib
		}
	}
	sc.Answers = append(sc.Answers,
		synth.ScriptAnswer{Docs: "library-bad-spec", File: lib, Edits: []synth.Edit{{Field: "server",
			Old: `"writes":["books","loans"],"errors":["loan_not_found"`, New: `"writes":["books","loans","fines"],"errors":["loan_not_found"`}}},
		synth.ScriptAnswer{Docs: "library-unknown-table", File: lib, Edits: []synth.Edit{{Field: "program",
			Old: `rows = query("SELECT id, book_id, status FROM loans WHERE`, New: `rows = query("SELECT id, book_id, status FROM loan_history WHERE`}}},
	)
	out, _ := json.Marshal(sc)
	p := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSynthUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"synth", "env"}, "needs --docs FILE"},
		{[]string{"synth", "env", "--docs", libraryDocs, "--synthesizer", "oracle"}, `--synthesizer "oracle"`},
		{[]string{"synth", "env", "--docs", libraryDocs, "--synthesizer", "scripted"}, "needs --script FILE"},
		{[]string{"synth", "env", "--docs", libraryDocs, "--synthesizer", "endpoint"}, "needs --base-url and --model"},
		{[]string{"synth", "env", "--docs", libraryDocs, "--rounds", "4", "--synthesizer", "scripted", "--script", libraryScript}, "--rounds 4"},
	} {
		code, _, stderr := run(t, stamped, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stderr %q; want usage error with %q", tt.args, code, stderr, tt.want)
		}
	}
}
