package megamcp

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRecoveryReplayMismatchIsReported is issue 15 item 4's recovery half:
// a replayed call whose result differs from the acknowledged one (here the
// ledger's recorded result is altered, as a nondeterministic module would
// produce) must not pass silently: recovery logs it at error level, counts
// it in weft_replay_mismatches_total and marks the session
// (SessionInfo.ReplayMismatches); /replay says equal false with the count.
func TestRecoveryReplayMismatchIsReported(t *testing.T) {
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	s1 := newServer(t, dir, reg)
	a, err := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		call(t, s1, a.ID, 0, "add_note", `{"text":"note"}`)
	}
	want := mustInfo(t, s1, a.ID)
	s1.Close()

	// Drop the checkpoint written at close, so recovery replays every
	// call, and rewrite the ledger with the second call's recorded result
	// altered.
	if err := os.Remove(filepath.Join(dir, "sessions", a.ID, "checkpoint.json")); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "sessions", a.ID, "ledger.wal")
	w, recs, _, _, err := openWAL(path, FsyncNever, false)
	if err != nil {
		t.Fatal(err)
	}
	w.close()
	os.Remove(path)
	w, _, _, _, err = openWAL(path, FsyncNever, true)
	if err != nil {
		t.Fatal(err)
	}
	altered := 0
	for i := range recs {
		if recs[i].committed() && altered == 0 && i > 0 {
			recs[i].Result = module.ErrorResult("what the first run said")
			recs[i].Result.IsError = false
			altered++
		}
		if err := w.append(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.close()
	if altered != 1 {
		t.Fatalf("altered %d records", altered)
	}

	var logs bytes.Buffer
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 300 * time.Millisecond, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	met := NewMetrics()
	s2, err := Open(ctx, Config{Runtime: rt, Registry: reg, DataDir: dir, CheckpointInterval: -1, Fsync: FsyncNever,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), Metrics: met})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := mustInfo(t, s2, a.ID)
	if got.ReplayMismatches != 1 || got.Hash != want.Hash {
		t.Fatalf("recovered session: mismatches %d hash %s, want 1 and %s", got.ReplayMismatches, got.Hash, want.Hash)
	}
	n := -1.0
	mfs, err := met.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "weft_replay_mismatches_total" {
			n = mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	if n != 1 {
		t.Fatalf("weft_replay_mismatches_total = %v", n)
	}
	if l := logs.String(); !strings.Contains(l, "level=ERROR") || !strings.Contains(l, "replay mismatch") || !strings.Contains(l, a.ID) {
		t.Fatalf("no error log naming the session:\n%s", l)
	}
	rr, err := s2.Replay(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rr.Equal || rr.MismatchedCalls != 1 || rr.ReplayHash != rr.Hash {
		t.Fatalf("replay = %+v", rr)
	}
}
