package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBinary builds the real binary with -ldflags stamps, as `make build`
// does, and checks the wiring: stamps reach `weft version`, and process exit
// codes match the CLI contract.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "weft")
	const version, commit = "v1.2.3-test", "0123456789abcdef0123456789abcdef01234567"
	build := exec.Command(goTool, "build", "-o", bin,
		"-ldflags", "-X main.version="+version+" -X main.commit="+commit, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	run := func(args ...string) (code int, stdout, stderr string) {
		var out, errOut bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		var exit *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &exit):
			code = exit.ExitCode()
		default:
			t.Fatalf("run %v: %v", args, err)
		}
		return code, out.String(), errOut.String()
	}

	code, stdout, stderr := run("version", "--json")
	if code != 0 {
		t.Fatalf("version --json: exit code %d, stderr: %s", code, stderr)
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("version --json: %v\n%s", err, stdout)
	}
	want := map[string]string{
		"version":    version,
		"commit":     commit,
		"go_version": runtime.Version(),
		"os":         runtime.GOOS,
		"arch":       runtime.GOARCH,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("version --json mismatch (-want +got):\n%s", diff)
	}

	code, stdout, stderr = run("nosuch")
	if code != 2 {
		t.Errorf("unknown command: exit code %d, want 2", code)
	}
	if stdout != "" || stderr != `weft: unknown command "nosuch" for "weft" (see 'weft --help')`+"\n" {
		t.Errorf("unknown command: stdout %q, stderr %q", stdout, stderr)
	}
}
