package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModuleCommands builds the hello example module and drives build,
// list, inspect, call and test end to end through a private registry.
func TestModuleCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a wasm module")
	}
	dir := t.TempDir()
	reg := filepath.Join(dir, "registry")
	flags := []string{"--registry", reg, "--cache-dir", filepath.Join(dir, "cache")}
	mod := func(args ...string) (int, string, string) {
		return run(t, stamped, append(append([]string{"module"}, args...), flags...)...)
	}

	code, out, errOut := mod("build", "../../examples/modules/hello")
	if code != ExitOK {
		t.Fatalf("build: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	digest := lines[len(lines)-1]
	if !strings.HasPrefix(digest, "sha256:") || len(digest) != 71 {
		t.Fatalf("last line of build output is not a digest: %q", out)
	}
	// Building the same source again gives the same digest (reproducible).
	if _, out2, _ := mod("build", "../../examples/modules/hello"); !strings.HasSuffix(strings.TrimSpace(out2), digest) {
		t.Fatalf("rebuild changed the digest: %q vs %q", out2, digest)
	}

	code, out, _ = mod("list", "--json")
	var listed struct {
		Modules []struct{ Name, Tag, Digest string } `json:"modules"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &listed) != nil || len(listed.Modules) != 2 || listed.Modules[0].Name != "hello" || listed.Modules[0].Digest != digest {
		t.Fatalf("list: %d %q", code, out)
	}

	for _, ref := range []string{digest, "hello", "hello:latest"} {
		code, out, errOut = mod("inspect", ref, "--json")
		var in struct {
			Digest   string `json:"digest"`
			Manifest struct {
				Name  string `json:"name"`
				Tools []struct {
					Name string `json:"name"`
				} `json:"tools"`
			} `json:"manifest"`
		}
		if code != ExitOK || json.Unmarshal([]byte(out), &in) != nil || in.Digest != digest || in.Manifest.Name != "hello" || len(in.Manifest.Tools) != 4 {
			t.Fatalf("inspect %s: %d %q %s", ref, code, out, errOut)
		}
	}

	code, out, errOut = mod("call", "hello", "add_note", `{"text": "first"}`, "--json")
	if code != ExitOK || strings.TrimSpace(out) != `{"content":[{"type":"text","text":"{\"id\":1}"}],"structuredContent":{"id":1}}` {
		t.Fatalf("call: %d %q %s", code, out, errOut)
	}
	// Schema violations are refused before the module runs, naming the field.
	code, _, errOut = mod("call", "hello", "add_note", `{"text": 5}`)
	if code != ExitError || !strings.Contains(errOut, "invalid arguments at /text") {
		t.Fatalf("bad arguments: %d %q", code, errOut)
	}
	code, _, errOut = mod("call", "hello", "nope")
	if code != ExitError || !strings.Contains(errOut, "unknown tool") {
		t.Fatalf("unknown tool: %d %q", code, errOut)
	}
	code, _, errOut = mod("call", "nosuchmodule", "x")
	if code != ExitError || !strings.Contains(errOut, "module not found") {
		t.Fatalf("unknown module: %d %q", code, errOut)
	}

	cases := filepath.Join(dir, "cases.json")
	os.WriteFile(cases, []byte(`{"cases": [
	  {"id": "ok", "calls": [
	    {"name": "add_note", "arguments": {"text": "a"}, "error": false, "output": {"id": 1}},
	    {"name": "add_note", "arguments": {"text": "b"}, "error": false, "output": {"id": 2.0}},
	    {"name": "list_notes", "arguments": {}, "error": false, "output": {"notes": [{"id": 1, "text": "a"}, {"id": 2, "text": "b"}]}},
	    {"name": "add_note", "arguments": {"text": "  "}, "error": true, "output": "Error: empty"}],
	   "final_changes": {"notes": {"1": {"id": 1, "text": "a"}, "2": {"id": 2, "text": "b"}}}},
	  {"id": "bad", "calls": [
	    {"name": "add_note", "arguments": {"text": "a"}, "error": false, "output": {"id": 7}}],
	   "final_changes": {"notes": {"1": {"id": 1, "text": "a"}}}},
	  {"id": "unlisted", "calls": [
	    {"name": "add_note", "arguments": {"text": "a"}, "error": false, "output": {"id": 1}}]}
	]}`), 0o644)
	code, out, _ = mod("test", "hello", "--cases", cases)
	if code != ExitError || !strings.HasSuffix(strings.TrimSpace(out), "1 passed, 2 failed") || !strings.Contains(out, "bad: call 0 (add_note): output differs") ||
		!strings.Contains(out, "unlisted: final state: final_changes differs\n    want: notes[1] unchanged") {
		t.Fatalf("test: %d %q", code, out)
	}
	code, _, errOut = mod("test", "hello")
	if code != ExitUsage || !strings.Contains(errOut, "--cases") {
		t.Fatalf("test without cases: %d %q", code, errOut)
	}
}
