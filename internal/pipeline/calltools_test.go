package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestCheckCallToolsAtLoad: loading a task of the retail + airline group
// whose required_call names the shared get_user_details bare is refused
// with both namespaced names; named as airline__get_user_details it loads.
func TestCheckCallToolsAtLoad(t *testing.T) {
	ctx := context.Background()
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	megamcptest.PutServer(t, reg, "examples/servers/tau2-retail")
	megamcptest.PutServer(t, reg, "examples/servers/tau2-airline")
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	srv, err := megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	mk := func(tool string) []*task.Task {
		return []*task.Task{{ID: "g1", Modules: []string{"tau2-retail", "airline"}, Atomic: []task.Atomic{{ID: "a1",
			Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: tool, Arguments: json.RawMessage(`{"user_id":"mia_li_3668"}`)}}}}}}
	}
	err = checkCallTools(ctx, srv, mk("get_user_details"))
	if !errors.Is(err, verify.ErrBadTask) || !strings.Contains(err.Error(), `tool "get_user_details" is exposed in this group only as airline__get_user_details and tau2-retail__get_user_details`) {
		t.Fatalf("err = %v", err)
	}
	if err := checkCallTools(ctx, srv, mk("airline__get_user_details")); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Sessions()); n != 0 {
		t.Errorf("%d sessions left open", n)
	}
}
