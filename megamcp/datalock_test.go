package megamcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestDataDirLocked: a second server on a data directory in use is refused
// at once, naming the directory and the holder's pid, before it recovers
// or writes anything: the first server's session and ledger go on as they
// were, and once the first server closes, a new one recovers everything.
func TestDataDirLocked(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	s1 := newServer(t, dir, reg)
	info, err := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	call(t, s1, info.ID, 0, "add_note", `{"text":"one"}`)
	if b, _ := os.ReadFile(filepath.Join(dir, FileDataLock)); string(b) != fmt.Sprintf("%d\n", os.Getpid()) {
		t.Fatalf("lock file holds %q, want this pid", b)
	}
	wal := filepath.Join(dir, "sessions", info.ID, "ledger.wal")
	walBefore, err := os.ReadFile(wal)
	if err != nil {
		t.Fatal(err)
	}

	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	s2, err := Open(ctx, Config{Runtime: rt, Registry: reg, DataDir: dir, CheckpointInterval: -1, Fsync: FsyncNever})
	want := fmt.Sprintf("data directory in use: %s is used by another weft serve (pid %d); stop it first, or use another --data", dir, os.Getpid())
	if !errors.Is(err, ErrDataDirBusy) || err.Error() != want {
		t.Fatalf("second Open: %v, want %q", err, want)
	}
	if s2 != nil {
		t.Fatal("second Open returned a server")
	}
	if walAfter, _ := os.ReadFile(wal); string(walAfter) != string(walBefore) {
		t.Fatal("the refused Open changed the ledger")
	}
	// The first server is unharmed: it still takes calls at the next index.
	call(t, s1, info.ID, 0, "add_note", `{"text":"two"}`)
	want1 := mustInfo(t, s1, info.ID)
	if want1.Calls != 2 {
		t.Fatalf("first server after the refusal: %d calls, want 2", want1.Calls)
	}
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, FileDataLock)); !os.IsNotExist(err) {
		t.Fatalf("lock file after Close: %v", err)
	}
	s3 := newServer(t, dir, reg)
	defer s3.Close()
	got := mustInfo(t, s3, info.ID)
	if got.Calls != 2 || got.Hash != want1.Hash || got.Ledger != want1.Ledger {
		t.Fatalf("recovered %+v, want %+v", got, want1)
	}
}
