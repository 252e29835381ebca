package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// groupTools are a retail + airline group's exposed names: both have
// get_user_details (namespaced), only retail has cancel_pending_order.
var groupTools = []string{"tau2_retail__get_user_details", "cancel_pending_order", "airline__get_user_details", "book_reservation"}

// TestCheckCallToolsAmbiguous: a call check naming a tool two modules of
// the group share is refused with both candidates; the namespaced name is
// accepted and matches only its own module's calls.
func TestCheckCallToolsAmbiguous(t *testing.T) {
	bare := &task.Task{ID: "t1", Atomic: []task.Atomic{{ID: "a1", Checks: []task.Check{
		{Kind: task.CheckRequiredCall, Tool: "cancel_pending_order"},
		{Kind: task.CheckRequiredCall, Tool: "get_user_details", Arguments: json.RawMessage(`{"user_id":"u1"}`)},
	}}}}
	err := verify.CheckCallTools(bare, groupTools)
	want := `task t1, atomic a1 check 1 (required_call): tool "get_user_details" is exposed in this group only as airline__get_user_details and tau2_retail__get_user_details (modules share the name); name one`
	if !errors.Is(err, verify.ErrBadTask) || !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("err = %v; want ErrBadTask ending %q", err, want)
	}
	// Why it is refused: the ledger names calls as exposed, so the bare
	// check matches neither module's call.
	ledger := []verify.LedgerCall{{Index: 0, Tool: "cancel_pending_order", Arguments: json.RawMessage(`{}`)},
		{Index: 1, Tool: "airline__get_user_details", Arguments: json.RawMessage(`{"user_id":"u1"}`)}}
	if res, err := verify.Verify(context.Background(), verify.Input{Task: bare, Ledger: ledger}, verify.NewStateEvidence(nil)); err != nil || res.Checkpoints[0].Score != 0 {
		t.Fatalf("bare check on the namespaced ledger: %+v, %v; want a failed checkpoint", res, err)
	}

	named := &task.Task{ID: "t1", Atomic: []task.Atomic{{ID: "a1", Checks: []task.Check{
		{Kind: task.CheckRequiredCall, Tool: "cancel_pending_order"},
		{Kind: task.CheckRequiredCall, Tool: "airline__get_user_details", Arguments: json.RawMessage(`{"user_id":"u1"}`)},
	}}}}
	if err := verify.CheckCallTools(named, groupTools); err != nil {
		t.Fatal(err)
	}
	res, err := verify.Verify(context.Background(), verify.Input{Task: named, Ledger: ledger}, verify.NewStateEvidence(nil))
	if err != nil || res.Checkpoints[0].Score != 1 {
		t.Fatalf("namespaced check: %+v, %v; want the checkpoint passed", res, err)
	}
	// The other module's call of the same base name does not match.
	named.Atomic[0].Checks[1].Tool = "tau2_retail__get_user_details"
	if res, err := verify.Verify(context.Background(), verify.Input{Task: named, Ledger: ledger}, verify.NewStateEvidence(nil)); err != nil || res.Checkpoints[0].Score != 0 {
		t.Fatalf("retail's check on airline's call: %+v, %v; want a failed checkpoint", res, err)
	}
}

// TestCheckCallToolsOne: a bare name exposed once namespaced says the one
// name to use (an overall forbidden_call); unknown and exposed names pass.
func TestCheckCallToolsOne(t *testing.T) {
	tk := &task.Task{ID: "t2", Checks: []task.Check{{Kind: task.CheckForbiddenCall, Tool: "get_flight"}}}
	err := verify.CheckCallTools(tk, []string{"airline__get_flight", "retail__get_user"})
	if !errors.Is(err, verify.ErrBadTask) || !strings.HasSuffix(err.Error(), `task t2, overall check 0 (forbidden_call): tool "get_flight" is exposed in this group only as airline__get_flight (modules share the name); name it so`) {
		t.Fatalf("err = %v", err)
	}
	for _, tool := range []string{"airline__get_flight", "transfer_to_mars", "retail__get_user"} {
		tk.Checks[0].Tool = tool
		if err := verify.CheckCallTools(tk, []string{"airline__get_flight", "retail__get_user"}); err != nil {
			t.Errorf("tool %q: %v", tool, err)
		}
	}
}
