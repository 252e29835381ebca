package evolve

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// tau2 retail as shipped, a slice (tasks 0, 64 and 110; configs/
// evolve-tau2-retail.hcl runs all 114): certification and the rollouts find
// task 64's reference failing at call 6 (the exchange of a pending order)
// and task 110's second action changing nothing; the server is hand-written
// (no docs), so no tool is re-synthesized: after 16 rebindings that do not
// certify, 64 is dropped with its reason, and so is 110 (a no-op action has
// no effect to check). Task 0 certifies and is left alone; nothing regresses.
func TestEvolveTau2RetailSlice(t *testing.T) {
	ctx := context.Background()
	s, err := spec.Load("../../../examples/servers/tau2-retail")
	if err != nil {
		t.Fatal(err)
	}
	env, err := tasks.SpecEnv(ctx, moduleConfig, s)
	if err != nil {
		t.Fatal(err)
	}
	all, err := env.ConvertTau2(ctx, "../../../examples/data/tau2-retail/tasks.json", []string{s.Name}, "tau2-retail")
	env.Store.Close()
	if err != nil {
		t.Fatal(err)
	}
	var ts []*task.Task
	for _, x := range all {
		if x.ID == "0" || x.ID == "64" || x.ID == "110" {
			ts = append(ts, x)
		}
	}
	res, err := Run(ctx, &System{Servers: []*Server{{Spec: s}}, Tasks: ts}, Options{Rounds: 1, Faults: benchFaults, PolicySeed: 1})
	if err != nil {
		t.Fatal(err)
	}
	type rev struct{ Class, Component, Action, Status string }
	var got []rev
	for _, v := range res.Revisions {
		got = append(got, rev{string(v.Class), v.Component, v.Action, v.Status})
	}
	want := []rev{
		{"task", "task:64/atomic:a1", ActionDropped, StatusApplied},
		{"task", "task:110/atomic:a2", ActionDropped, StatusApplied},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("revisions (-want +got):\n%s", d)
	}
	if why := res.Dropped["64"]; !strings.Contains(why, "reference call 6 (exchange_delivered_order_items) failed: Non-delivered order cannot be exchanged") || !strings.Contains(why, "16 tried") {
		t.Errorf("64 dropped because %q", why)
	}
	if why := res.Dropped["110"]; !strings.Contains(why, "modify_user_address) of a state-changing tool succeeded and changed nothing") {
		t.Errorf("110 dropped because %q", why)
	}
	r1, after := res.Rounds[0], res.Rounds[1]
	if r1.Tasks != 3 || r1.Certified != 1 || after.Tasks != 1 || after.Certified != 1 || len(after.Regressed) != 0 || r1.Applied[attribute.ClassEnvironment] != 0 {
		t.Errorf("round 1 %+v\nafter %+v", r1, after)
	}
	if r1.NonPolicyToolErrors == 0 || after.NonPolicyToolErrors != 0 {
		t.Errorf("non-policy tool errors %d before, %d after", r1.NonPolicyToolErrors, after.NonPolicyToolErrors)
	}
	if len(res.System.Tasks) != 1 || res.System.Tasks[0].ID != "0" || res.System.Tasks[0].Version != 0 {
		t.Errorf("evolved tasks %v", res.System.Tasks)
	}
	for _, h := range res.History {
		if h.Version != 1 || h.Meta["dropped"] == nil {
			t.Errorf("history %s v%d meta %v", h.ID, h.Version, h.Meta["dropped"])
		}
	}
}
