package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/plugins/host"
)

// TestMain lets the test binary stand in for weft when the launcher
// re-executes it as `weft plugin serve NAME` (host.DefaultCommand uses
// os.Executable).
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == serveNoResume {
		serveWithoutResume()
	}
	if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve" {
		if err := host.ServeBuiltin(os.Args[3]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestPluginListJSON(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "plugin", "list", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Harnesses []harnessInfo `json:"harnesses"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	var names, formats []string
	for _, h := range got.Harnesses {
		names = append(names, h.Name)
		formats = append(formats, h.Format)
	}
	if diff := cmp.Diff([]string{"hermes", "native", "react"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hermes", "native", "react"}, formats); diff != "" {
		t.Errorf("formats (-want +got):\n%s", diff)
	}
}

// TestPluginConformanceBuiltins runs the conformance harness against each
// built-in harness as its own process (the test binary re-executed as
// `weft plugin serve NAME`).
func TestPluginConformanceBuiltins(t *testing.T) {
	for _, name := range []string{"react", "hermes", "native"} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := run(t, stamped, "plugin", "conformance", "--builtin", name, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			var rep struct {
				Plugin string `json:"plugin"`
				Checks []struct {
					Name   string `json:"name"`
					Passed bool   `json:"passed"`
				} `json:"checks"`
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if rep.Plugin != name+" 1.0.0" || len(rep.Checks) < 12 {
				t.Fatalf("report plugin %q with %d checks: %s", rep.Plugin, len(rep.Checks), stdout)
			}
			for _, c := range rep.Checks {
				if !c.Passed {
					t.Errorf("check %s failed", c.Name)
				}
			}
		})
	}
}

func TestPluginConformanceErrors(t *testing.T) {
	code, _, stderr := run(t, stamped, "plugin", "conformance")
	if code != ExitUsage || !strings.Contains(stderr, "give a plugin BINARY or --builtin NAME") {
		t.Errorf("no argument: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = run(t, stamped, "plugin", "conformance", "--builtin", "nope")
	if code != ExitUsage || !strings.Contains(stderr, `no built-in harness "nope" (have hermes, native, react)`) {
		t.Errorf("unknown builtin: exit %d, stderr %q", code, stderr)
	}
	for _, d := range []string{"0", "-5s"} {
		code, _, stderr = run(t, stamped, "plugin", "conformance", "--builtin", "react", "--timeout", d)
		if code != ExitUsage || !strings.Contains(stderr, "--timeout must be positive") {
			t.Errorf("--timeout %s: exit %d, stderr %q", d, code, stderr)
		}
	}
	// A binary that is not a weft plugin fails to start, with a clear error.
	code, _, stderr = run(t, stamped, "plugin", "conformance", "/bin/true")
	if code != ExitError || !strings.Contains(stderr, "starting harness plugin binary:/bin/true") {
		t.Errorf("/bin/true: exit %d, stderr %q", code, stderr)
	}
}

// The text report ends with a summary line; a plugin that fails one check
// says so in the singular, and a plugin leaving a child that holds its
// stdout does not keep weft from exiting.
func TestPluginConformanceSummary(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "plugin", "conformance", "--builtin", "react")
	if code != ExitOK || !strings.HasSuffix(stdout, "\n13 passed, 0 failed, 0 skipped\n") {
		t.Errorf("react: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	script := filepath.Join(t.TempDir(), "fakehs.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"1|2|tcp|127.0.0.1:1|grpc\"\nsleep 1000\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, stdout, stderr = run(t, stamped, "plugin", "conformance", "--timeout", "5s", script)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("conformance of a plugin with an orphan took %v", d)
	}
	if code != ExitError || !strings.HasSuffix(stdout, "\n0 passed, 1 failed, 12 skipped\n") ||
		!strings.Contains(stderr, "the plugin failed 1 conformance check\n") {
		t.Errorf("fake handshake: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
}

func TestPluginListText(t *testing.T) {
	code, stdout, stderr := run(t, stamped, "plugin", "list")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, "[") || !strings.Contains(stdout, "format_feedback, parallel_calls, resume\n") {
		t.Errorf("capabilities not joined by commas:\n%s", stdout)
	}
}
