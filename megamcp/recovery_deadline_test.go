package megamcp_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRecoveryReplayDeadline: recovery re-runs committed ledger records
// with ReplayCallTimeout, not the runtime's per-call deadline, so a call
// acknowledged within the deadline is recovered even when the restarted
// server's deadline is one it could never meet (a slower or busier machine,
// a lower --call-timeout after an upgrade). The crash test found the bug
// this guards against with WEFT_CRASH_CALL_TIMEOUT=3ms kept on the restart.
func TestRecoveryReplayDeadline(t *testing.T) {
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
	megamcp.Abandon(s1)
	s2, err := open(time.Microsecond)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer s2.Close()
	if got := s2.Sessions(); len(got) != len(want) {
		t.Fatalf("recovered sessions %v, want %v", got, want)
	}
}
