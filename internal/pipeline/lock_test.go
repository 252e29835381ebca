//go:build unix

package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/plugins/host"
)

// TestRunFolderLock: a second weft run on a folder another run holds is
// refused with ErrFolderBusy naming the holder's pid, and writes nothing;
// once the holder is done the folder is free again and no lock file is
// left behind (issue 15 item 22: two runs on one folder both ran
// everything).
func TestRunFolderLock(t *testing.T) {
	dir := t.TempDir()
	release, err := lockFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, FileLock)); string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Fatalf("lock file holds %q, want this pid", b)
	}
	spec := &Spec{Name: "lock", Server: &megamcp.Server{}, Launcher: &host.Launcher{}}
	_, err = Run(context.Background(), spec, Options{Dir: dir})
	want := fmt.Sprintf("the run folder is in use: %s is being written by another weft run (pid %d); wait for it to finish, or use another --out", dir, os.Getpid())
	if !errors.Is(err, ErrFolderBusy) || err.Error() != want {
		t.Fatalf("second run: err = %v\nwant %s", err, want)
	}
	if _, err := lockFolder(dir); !errors.Is(err, ErrFolderBusy) {
		t.Fatalf("second lock: err = %v, want ErrFolderBusy", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != FileLock {
		t.Fatalf("the refused run wrote to the folder: %v", entries)
	}

	release()
	if _, err := os.Stat(filepath.Join(dir, FileLock)); !os.IsNotExist(err) {
		t.Fatalf("lock file left after release: %v", err)
	}
	res, err := Run(context.Background(), spec, Options{Dir: dir})
	if err != nil || res.Dir != dir {
		t.Fatalf("run after release: %v", err)
	}
	if entries, _ := os.ReadDir(dir); strings.Contains(fmt.Sprint(entries), FileLock) {
		t.Errorf("lock file left after the run: %v", entries)
	}
}
