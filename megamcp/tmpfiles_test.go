package megamcp_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRecoveryRemovesTempFiles: a crash in the middle of an atomic write
// (a version, meta.json, checkpoint.json) leaves its temporary file, named
// uniquely since concurrent writers must not share one; recovery removes
// them, so they do not pile up over crashes.
func TestRecoveryRemovesTempFiles(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	dir := t.TempDir()
	cfg := megamcp.Config{Runtime: rt, Registry: reg, DataDir: dir, CheckpointInterval: -1, Fsync: megamcp.FsyncNever}
	s1, err := megamcp.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s1.Create(ctx, megamcp.CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	s1.Close()
	leftovers := []string{
		filepath.Join(dir, "versions", info.Version+".json.123456.tmp"),
		filepath.Join(dir, "sessions", info.ID, "checkpoint.json.42.tmp"),
		filepath.Join(dir, "sessions", info.ID, "meta.json.7.tmp"),
	}
	for _, f := range leftovers {
		if err := os.WriteFile(f, []byte("{torn"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s2, err := megamcp.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if got := s2.Sessions(); len(got) != 1 || got[0] != info.ID {
		t.Fatalf("sessions after recovery: %v", got)
	}
	for _, f := range leftovers {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s survived recovery (%v)", f, err)
		}
	}
}
