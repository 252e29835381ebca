package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/module"
)

// TestModuleTestRefusesMisspeltCases: a cases file whose case says "call"
// for "calls" is refused with a did-you-mean and exit code 1, before any
// module is loaded (it used to pass as "1 passed").
func TestModuleTestRefusesMisspeltCases(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.json")
	if err := os.WriteFile(path, []byte(`{"cases": [{"id": "t1", "call": [{"name": "add_note", "arguments": {}}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, stamped, "module", "test", "no-such-module", "--cases", path)
	if code != ExitError {
		t.Fatalf("exit code = %d, want %d; stderr: %s", code, ExitError, stderr)
	}
	if stdout != "" || !strings.Contains(stderr, `weft: moduletest: case 0 ("t1"): unknown key "call" (did you mean "calls"?)`) {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
}

// TestRootVersionFlag: weft --version prints what weft version prints,
// text and JSON (issue 15 item 22).
func TestRootVersionFlag(t *testing.T) {
	for _, args := range [][]string{nil, {"--json"}} {
		_, want, _ := run(t, stamped, append([]string{"version"}, args...)...)
		code, got, stderr := run(t, stamped, append([]string{"--version"}, args...)...)
		if code != ExitOK || got != want || want == "" {
			t.Errorf("weft --version %v: exit %d, stdout %q (want %q), stderr %q", args, code, got, want, stderr)
		}
	}
}

// TestDidYouMeanBelowRoot: a misspelt subcommand of a command group is an
// unknown command with a suggestion, not "takes no arguments".
func TestDidYouMeanBelowRoot(t *testing.T) {
	for _, c := range []struct{ args, want string }{
		{"module biuld", `weft: unknown command "biuld" for "weft module"; did you mean "build"? (see 'weft module --help')`},
		{"state qeury", `weft: unknown command "qeury" for "weft state"; did you mean "query"? (see 'weft state --help')`},
		{"module zzzzzz", `weft: unknown command "zzzzzz" for "weft module" (see 'weft module --help')`},
	} {
		code, _, stderr := run(t, stamped, strings.Fields(c.args)...)
		if code != ExitUsage || strings.TrimSpace(stderr) != c.want {
			t.Errorf("weft %s: exit %d, stderr %q\nwant %q", c.args, code, stderr, c.want)
		}
	}
}

// TestDidYouMeanToolsAndModules: unknown tools and module names get the
// closest known name.
func TestDidYouMeanToolsAndModules(t *testing.T) {
	m := module.Manifest{Tools: []module.Tool{{Name: "add_note"}, {Name: "get_note"}}}
	err := withToolSuggestion(fmt.Errorf("%w: ad_note", module.ErrUnknownTool), "ad_note", m)
	if !errors.Is(err, module.ErrUnknownTool) || !strings.HasSuffix(err.Error(), `; did you mean "add_note"?`) {
		t.Errorf("tool: %v", err)
	}
	if err := withToolSuggestion(fmt.Errorf("%w: zzz", module.ErrUnknownTool), "zzz", m); strings.Contains(err.Error(), "did you mean") {
		t.Errorf("far tool got a suggestion: %v", err)
	}
	dir := t.TempDir()
	reg, err := module.OpenRegistry(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = reg.Get("retial")
	if !errors.Is(err, module.ErrNotFound) {
		t.Fatalf("empty registry: %v", err)
	}
	if got := withModuleSuggestion(err, "retial", reg); got.Error() != err.Error() {
		t.Errorf("empty registry: %v", got)
	}
	// A registry holding retail (a tag is a file refs/NAME/TAG holding the digest).
	if err := os.MkdirAll(filepath.Join(dir, "refs", "retail"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "refs", "retail", "latest"), []byte("sha256:"+strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = reg.Get("retial:1.0")
	got := withModuleSuggestion(err, "retial:1.0", reg)
	if !errors.Is(got, module.ErrNotFound) || !strings.HasSuffix(got.Error(), `; did you mean "retail"?`) {
		t.Errorf("retial: %v", got)
	}
}

// TestMCPStateInFlag: weft mcp's state file flag is --state-in; the old
// --version still sets it and is marked deprecated.
func TestMCPStateInFlag(t *testing.T) {
	cmd := newMCPCmd(&app{env: Env{Stdout: io.Discard, Stderr: io.Discard}})
	if err := cmd.ParseFlags([]string{"--version", "old.json"}); err != nil {
		t.Fatal(err)
	}
	if got := cmd.Flags().Lookup("state-in").Value.String(); got != "old.json" {
		t.Errorf("--version did not set --state-in: %q", got)
	}
	if d := cmd.Flags().Lookup("version").Deprecated; !strings.Contains(d, "--state-in") {
		t.Errorf("--version deprecation = %q", d)
	}
}

// TestServeExposureWarning: a non-loopback listen address warns that /mcp
// is unauthenticated; loopback does not.
func TestServeExposureWarning(t *testing.T) {
	if w := exposureWarning(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7420}); w != "" {
		t.Errorf("loopback warned: %s", w)
	}
	if w := exposureWarning(&net.TCPAddr{IP: net.IPv6loopback, Port: 7420}); w != "" {
		t.Errorf("::1 warned: %s", w)
	}
	w := exposureWarning(&net.TCPAddr{IP: net.IPv4zero, Port: 7420})
	if !strings.HasPrefix(w, "listening on 0.0.0.0:7420, which is not loopback: /mcp is unauthenticated") {
		t.Errorf("0.0.0.0 warning = %q", w)
	}
}

// TestRegistryExamplesUseServePort: the registry examples point at weft
// serve's default port (7420), not 8080.
func TestRegistryExamplesUseServePort(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "registry.md"))
	if err != nil {
		t.Fatal(err)
	}
	var help strings.Builder
	for _, c := range []string{"push", "pull"} {
		_, out, _ := run(t, stamped, "module", c, "--help")
		help.WriteString(out)
	}
	for name, text := range map[string]string{"docs/registry.md": string(doc), "weft module push/pull --help": help.String()} {
		if strings.Contains(text, ":8080") || !strings.Contains(text, "localhost:7420") {
			t.Errorf("%s: registry examples do not use weft serve's port 7420", name)
		}
	}
}
