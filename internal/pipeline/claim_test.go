//go:build unix

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/host"
)

// TestClaimMissingFolder: ClaimFolder creates and locks a folder that does
// not exist yet, so a second claim (a second weft run on the same new
// --out) is refused at once with ErrFolderBusy naming the pid; before, a
// missing folder was neither created nor locked and the second run was
// refused only after its preflight and module build (trial F1). Released
// without a Run (a preflight that failed), the folder and the parents the
// claim made are gone again; given to a Run, the folder stays.
func TestClaimMissingFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "run")
	c, err := ClaimFolder(dir, []byte(`{"rollout":{"seed":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, FileLock)); err != nil || string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Fatalf("lock file: %q, %v; want this pid", b, err)
	}
	_, err = ClaimFolder(dir, nil)
	want := fmt.Sprintf("the run folder is in use: %s is being written by another weft run (pid %d); wait for it to finish, or use another --out", dir, os.Getpid())
	if !errors.Is(err, ErrFolderBusy) || err.Error() != want {
		t.Fatalf("second claim: %v\nwant %s", err, want)
	}
	// The refused claim removed nothing of the holder's.
	if _, err := os.Stat(filepath.Join(dir, FileLock)); err != nil {
		t.Fatalf("holder's lock gone after the refused claim: %v", err)
	}
	c.Release()
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("released claim left %v in %s, want nothing", entries, root)
	}
	c.Release() // a second call does nothing

	// A folder something was written to while claimed stays, without the lock.
	c, err = ClaimFolder(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "note"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.Release()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "note" {
		t.Fatalf("folder after release: %v, want only note", entries)
	}
	if err := os.RemoveAll(filepath.Join(root, "a")); err != nil {
		t.Fatal(err)
	}

	// Given to a Run, the created folder is the run's: it stays.
	c, err = ClaimFolder(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := &Spec{Name: "claim", Server: &megamcp.Server{}, Launcher: &host.Launcher{}}
	if _, err := Run(context.Background(), spec, Options{Dir: dir, Claim: c}); err != nil {
		t.Fatal(err)
	}
	c.Release()
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("run folder after the run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileLock)); !os.IsNotExist(err) {
		t.Fatalf("lock left after the run: %v", err)
	}
}
