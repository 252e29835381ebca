package megamcp_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRecoveryReplayDeadline: recovery re-runs committed ledger records
// with the runtime's per-call deadline (--call-timeout, default 2 s). A
// call acknowledged within the deadline can exceed it on replay (a slower
// or busier machine at restart, a lower --call-timeout after an upgrade);
// replay then fails and, because one session's failure aborts recovery,
// weft serve does not start at all. The crash test found it with
// WEFT_CRASH_CALL_TIMEOUT=3ms kept on the restart:
//
//	weft: recover session ...: record 3 (modify_user_address): replay failed:
//	tool modify_user_address: tool call deadline exceeded
//
// Known bug, skipped unless WEFT_KNOWN_BUGS=1 (see the crash test report).
func TestRecoveryReplayDeadline(t *testing.T) {
	if os.Getenv("WEFT_KNOWN_BUGS") == "" {
		t.Skip("known bug: replay during recovery uses the call deadline (set WEFT_KNOWN_BUGS=1 to run)")
	}
	reg := megamcptest.Registry(t)
	ctx := context.Background()
	dir := t.TempDir()
	open := func(timeout time.Duration) (*megamcp.Server, error) {
		rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: timeout})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rt.Close(ctx) })
		return megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, DataDir: dir, CheckpointInterval: -1, Fsync: megamcp.FsyncNever})
	}
	s1, err := open(2 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s1.Create(ctx, megamcp.CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s1.Call(ctx, info.ID, megamcp.CallRequest{Tool: "add_note", Arguments: json.RawMessage(`{"text":"acknowledged"}`)}); err != nil {
		t.Fatal(err)
	}
	want := s1.Sessions()
	// Crash (s1 abandoned, no final checkpoint); restart with a deadline the
	// replay cannot meet.
	s2, err := open(time.Microsecond)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s2.Close()
	if got := s2.Sessions(); len(got) != len(want) {
		t.Fatalf("recovered sessions %v, want %v", got, want)
	}
}
