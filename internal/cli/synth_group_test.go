package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/task"
)

const airlineGroupServer = "../../examples/servers/tau2-airline"

// weft synth tasks and weft synth certify open a group whose servers own
// tables of the same name (retail and airline both own users) under table
// namespaces, as weft synth compose does: tasks generated for the group
// re-certify on it.
func TestSynthGroupClashingTables(t *testing.T) {
	dir := t.TempDir()
	gen := filepath.Join(dir, "group.weft.json")
	code, _, stderr := run(t, stamped, "synth", "tasks", "--server", retailServer, "--server", airlineGroupServer,
		"--rounds", "1", "--per-tool", "1", "--out", gen)
	if code != ExitOK {
		t.Fatalf("synth tasks: exit %d: %s", code, stderr)
	}
	f, err := os.Open(gen)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := task.Load(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// One task that reads a retail users row, one that reads an airline one.
	var pick []*task.Task
	for _, tk := range ts {
		if tk.ID == "tau2-retail__get_user_details.1" || tk.ID == "airline__get_user_details.1" {
			pick = append(pick, tk)
		}
	}
	if len(pick) != 2 {
		t.Fatalf("want both get_user_details tasks among %d, got %d", len(ts), len(pick))
	}
	if got := strings.Join(pick[0].Modules, ","); got != "tau2-retail,airline" {
		t.Fatalf("modules %q, want tau2-retail,airline", got)
	}
	slice := filepath.Join(dir, "slice.weft.json")
	sf, err := os.Create(slice)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Save(sf, pick); err != nil {
		t.Fatal(err)
	}
	sf.Close()
	out := filepath.Join(dir, "certified.weft.json")
	code, stdout, stderr := run(t, stamped, "synth", "certify", slice, "--server", retailServer, "--server", airlineGroupServer, "--out", out)
	if code != ExitOK {
		t.Fatalf("synth certify: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "2 of 2 tasks certified") {
		t.Fatalf("stdout %q, want 2 of 2 tasks certified", stdout)
	}
}

// The same server given twice is a clear error naming the module, and
// nothing is written.
func TestSynthGroupServerTwice(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.weft.json")
	code, _, stderr := run(t, stamped, "synth", "tasks", "--server", airlineGroupServer, "--server", airlineGroupServer, "--out", out)
	if code != ExitError {
		t.Fatalf("exit %d, want %d: %s", code, ExitError, stderr)
	}
	if !strings.Contains(stderr, `module "airline" given twice`) {
		t.Fatalf("stderr %q, want module \"airline\" given twice", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("%s written on error (stat: %v)", out, err)
	}
}
