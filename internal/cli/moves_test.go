package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
