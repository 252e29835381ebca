package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRunRefusesBusyFolderAtOnce: a folder another weft run holds is
// refused before the preflight and the module build (docs/run.md: "exits 1
// at once"), and the folder is left as it was; before, the refusal came
// only after "modules ready".
func TestRunRefusesBusyFolderAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(file, []byte(baseConfig(megamcptest.Root())), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// This process holds the folder as another weft run would: flock locks
	// belong to an open file, so the run's own lock attempt fails.
	held, err := pipeline.ClaimFolder(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	before := folderState(t, out)
	start := time.Now()
	code, stdout, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out)
	took := time.Since(start)
	if code != ExitError {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
	}
	want := fmt.Sprintf("weft: the run folder is in use: %s is being written by another weft run (pid %d); wait for it to finish, or use another --out\n", out, os.Getpid())
	if diff := cmp.Diff(want, stderr); diff != "" {
		t.Errorf("stderr (-want +got), want the refusal alone (no preflight, no \"modules ready\"):\n%s", diff)
	}
	if stdout != "" {
		t.Errorf("stdout = %q", stdout)
	}
	if diff := cmp.Diff(before, folderState(t, out)); diff != "" {
		t.Errorf("the held folder changed (-before +after):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "reg")); !os.IsNotExist(err) {
		t.Errorf("the registry was written before the refusal (stat: %v)", err)
	}
	t.Logf("refused in %s", took)
	held.Release()

	// A folder of another experiment: refused at once too, untouched.
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "config.json"), []byte(`{"rollout": {"seed": 99}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before = folderState(t, other)
	code, stdout, stderr = weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", other)
	if code != ExitError {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
	}
	want = fmt.Sprintf("weft: the run folder belongs to another experiment: %s holds a run whose config differs in rollout.episode_timeout, rollout.episodes_per_task, rollout.max_tool_calls, rollout.max_turns, rollout.policy, rollout.seed, rollout.turn_timeout, which the results depend on; use a new --out, or remove the folder to start over\n", other)
	if diff := cmp.Diff(want, stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, folderState(t, other)); diff != "" {
		t.Errorf("the other experiment's folder changed (-before +after):\n%s", diff)
	}
}

// TestRunRefusesBusyNewFolderAtOnce: the same for a folder that did not
// exist when the first run started (trial F1: the first run's claim did
// not create or lock it, so the second was refused only after "modules
// ready"). Once the holder gives up without running (a failed preflight),
// the new folder is gone again.
func TestRunRefusesBusyNewFolderAtOnce(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "run.hcl")
	if err := os.WriteFile(file, []byte(baseConfig(megamcptest.Root())), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "runs", "new")
	held, err := pipeline.ClaimFolder(out, nil)
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out)
	want := fmt.Sprintf("weft: the run folder is in use: %s is being written by another weft run (pid %d); wait for it to finish, or use another --out\n", out, os.Getpid())
	if code != ExitError || stderr != want || stdout != "" {
		t.Fatalf("exit %d, stdout %q\nstderr %q\nwant %d and %q", code, stdout, stderr, ExitError, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "reg")); !os.IsNotExist(err) {
		t.Errorf("the registry was written before the refusal (stat: %v)", err)
	}
	held.Release()
	if _, err := os.Stat(filepath.Join(dir, "runs")); !os.IsNotExist(err) {
		t.Errorf("released claim left %s/runs (stat: %v)", dir, err)
	}
}

// weft module list on a registry directory that does not exist (a
// mistyped --registry or $WEFT_REGISTRY) says so, exit 1, and creates
// nothing (trial F13: it made the tree and listed no modules).
func TestModuleListMissingRegistry(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "typo", "reg")
	code, stdout, stderr := run(t, stamped, "module", "list", "--registry", dir)
	want := "weft: no module registry at " + dir + ": nothing has been built or pulled into it (check --registry and $WEFT_REGISTRY)\n"
	if code != ExitError || stderr != want || stdout != "" {
		t.Fatalf("exit %d, stdout %q\nstderr %q\nwant %d, %q", code, stdout, stderr, ExitError, want)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("module list created %v", entries)
	}
}
