package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// weft module build and test on a spec directory: the server runs on the
// registry's interpreter through wasm; without the interpreter the error
// says to run make build.
func TestModuleSpecDir(t *testing.T) {
	dir := filepath.Join(megamcptest.Root(), "core/module/testdata/servers/bank")
	cases := filepath.Join(dir, "cases.json")
	empty := t.TempDir()
	code, _, stderr := run(t, stamped, "module", "test", dir, "--cases", cases, "--registry", empty, "--cache-dir", megamcptest.CacheDir())
	if code != ExitError || !strings.Contains(stderr, "interpreter module not in the registry: run make build") {
		t.Fatalf("without the interpreter: exit %d, stderr %s", code, stderr)
	}
	regDir := t.TempDir()
	reg, err := module.OpenRegistry(regDir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := reg.PutTar(megamcptest.Interpreter(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Tag(module.InterpreterName, "latest", id); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--registry", regDir, "--cache-dir", megamcptest.CacheDir()}
	code, stdout, stderr := run(t, stamped, append([]string{"module", "test", dir, "--cases", cases}, flags...)...)
	if code != ExitOK || stdout != "2 passed, 0 failed\n" {
		t.Fatalf("module test DIR: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	code, stdout, stderr = run(t, stamped, append([]string{"module", "build", dir}, flags...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	ref := lines[len(lines)-1]
	if code != ExitOK || !strings.HasPrefix(lines[0], "built server bank 1.0.0: 5 tools on interpreter "+id) || !strings.HasPrefix(ref, "sha256:") {
		t.Fatalf("module build DIR: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if got, err := reg.Resolve("bank"); err != nil || got != ref {
		t.Fatalf("bank:latest = %s, %v; want %s", got, err, ref)
	}
	code, stdout, stderr = run(t, stamped, append([]string{"module", "test", "bank", "--cases", cases}, flags...)...)
	if code != ExitOK || stdout != "2 passed, 0 failed\n" {
		t.Fatalf("module test REF: exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	// A wrong expectation fails with exit 1.
	data, err := os.ReadFile(cases)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(data), `"balance": 50}},`, `"balance": 51}},`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ = run(t, stamped, append([]string{"module", "test", dir, "--cases", bad}, flags...)...)
	if code != ExitError || !strings.HasSuffix(stdout, "1 passed, 1 failed\n") {
		t.Fatalf("wrong expectation: exit %d, stdout %q", code, stdout)
	}
}
