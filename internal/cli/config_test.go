package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
)

func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}

func TestValidateOK(t *testing.T) {
	file := repoFile("configs", "tau2-retail.hcl")
	code, stdout, stderr := run(t, Build{}, "validate", file)
	if code != ExitOK {
		t.Fatalf("exit %d; stdout %s; stderr %s", code, stdout, stderr)
	}
	if stdout != file+": ok\n" {
		t.Errorf("stdout = %q", stdout)
	}
}

// writeConfig writes a config with a mix naming an undeclared harness
// (line 17) and a GRPO group of 1 (line 26) next to a module dir.
func writeConfig(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "mod"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "mod", "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tasks.json"), []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := `module "m" {
  path = "mod"
}
tasks "t" {
  tau2 = "tasks.json"
}
policy "p" {
  scripted {}
}
harness "react" {}
view "agentic" {}
variable "g" {
  default = 4
}
mix {
  entry {
    view = "agentic"
    harness = "hermes"
  }
}
rollout {
  policy = "p"
}
grpo {
  group_size = var.g
}
pipeline {
  stages = ["import", "rollout", "grpo"]
}
`
	file := filepath.Join(dir, "bad.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestValidateErrors(t *testing.T) {
	file := writeConfig(t)
	code, stdout, _ := run(t, Build{}, "validate", file, "--var", "g=1")
	if code != ExitError {
		t.Fatalf("exit %d, want %d; stdout %s", code, ExitError, stdout)
	}
	want := file + `:18:15: error: Undeclared harness; Mix entry names harness "hermes", but there is no harness "hermes" block (declared: "react").
` + file + `:25:16: error: Group too small; group_size (G) must be at least 2: a group-normalised advantage compares each candidate with the others; got 1.
` + file + ": 2 errors\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}

func TestValidateJSON(t *testing.T) {
	file := writeConfig(t)
	code, stdout, _ := run(t, Build{}, "validate", file, "--json", "--var", "g=1")
	if code != ExitError {
		t.Fatalf("exit %d", code)
	}
	got := decodeOneObject(t, stdout)
	want := map[string]any{
		"file":  file,
		"valid": false,
		"diagnostics": []any{
			map[string]any{"severity": "error", "summary": "Undeclared harness",
				"detail":   `Mix entry names harness "hermes", but there is no harness "hermes" block (declared: "react").`,
				"filename": file, "line": 18.0, "column": 15.0, "end_line": 18.0, "end_column": 23.0},
			map[string]any{"severity": "error", "summary": "Group too small",
				"detail":   "group_size (G) must be at least 2: a group-normalised advantage compares each candidate with the others; got 1.",
				"filename": file, "line": 25.0, "column": 16.0, "end_line": 25.0, "end_column": 21.0},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("--json (-want +got):\n%s", diff)
	}

	// Valid: the resolved config is included.
	code, stdout, stderr := run(t, Build{}, "validate", repoFile("configs", "tau2-retail-vllm.hcl"), "--json",
		"--var", "model=my-model")
	if code != ExitOK {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	got = decodeOneObject(t, stdout)
	if got["valid"] != true || len(got["diagnostics"].([]any)) != 0 {
		t.Fatalf("got %v", got)
	}
	pol := got["config"].(map[string]any)["policies"].([]any)[0].(map[string]any)
	if m := pol["endpoint"].(map[string]any)["model"]; m != "my-model" {
		t.Errorf("model = %v", m)
	}
}

func TestValidateUsage(t *testing.T) {
	if code, _, stderr := run(t, Build{}, "validate"); code != ExitUsage || !strings.Contains(stderr, "takes exactly one config file") {
		t.Errorf("no file: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := run(t, Build{}, "validate", "x.hcl", "--var", "novalue"); code != ExitUsage || !strings.Contains(stderr, `--var "novalue": want NAME=VALUE`) {
		t.Errorf("bad --var: exit %d, stderr %q", code, stderr)
	}
	code, stdout, _ := run(t, Build{}, "validate", filepath.Join(t.TempDir(), "none.hcl"))
	if code != ExitError || !strings.HasPrefix(stdout, "error: Cannot read config file; open ") {
		t.Errorf("missing file: exit %d, stdout %q", code, stdout)
	}
}

func TestConfigDocs(t *testing.T) {
	code, stdout, stderr := run(t, Build{}, "config", "docs")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != config.Docs() {
		t.Error("config docs output is not config.Docs()")
	}
	file, err := os.ReadFile(repoFile("docs", "config.md"))
	if err != nil {
		t.Fatal(err)
	}
	if stdout != string(file) {
		t.Error("config docs output differs from docs/config.md")
	}
	code, stdout, _ = run(t, Build{}, "config", "docs", "--json")
	if code != ExitOK || decodeOneObject(t, stdout)["markdown"] != config.Docs() {
		t.Errorf("--json: exit %d", code)
	}
}

// weft validate also runs the checks that need the files and plugins the
// config names: harness settings against the harness's settings_schema
// and task ids, each at its attribute.
func TestValidatePostDecode(t *testing.T) {
	dir := t.TempDir()
	abs := func(p ...string) string {
		a, err := filepath.Abs(repoFile(p...))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	tasks := abs("examples", "data", "tau2-retail", "tasks.weft.json")
	src := `module "m" {
  path = "` + abs("examples", "modules", "hello") + `"
}
tasks "t" {
  weft = ["` + tasks + `"]
  ids  = ["0", "nope"]
}
policy "p" {
  scripted {}
}
harness "native" {
  settings = { bogus = 1 }
}
view "agentic" {}
rollout {
  policy = "p"
}
pipeline {
  stages = ["import", "rollout"]
}
`
	file := filepath.Join(dir, "post.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := run(t, Build{}, "validate", file)
	if code != ExitError {
		t.Fatalf("exit %d, want %d; stdout %s", code, ExitError, stdout)
	}
	want := file + `:5:11: error: Unknown task module; Task "0" of ` + tasks + ` names module "retail", which no module block declares (modules: m).
` + file + `:6:16: error: Unknown task id; Task set "t" has no task "nope" (its files hold 114 tasks).
` + file + `:12:14: error: Invalid harness settings; The settings of harness "native" do not match its settings_schema: at the top level: additional properties 'bogus' not allowed.
` + file + ": 3 errors\n"
	if diff := cmp.Diff(want, stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
}
