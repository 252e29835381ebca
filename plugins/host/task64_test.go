package host_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
)

// TestTask64AttributedToPolicy: tau2-retail task 64's gold solution first
// tries an exchange the benchmark's code refuses (the order is pending),
// then modifies the items. Converted as tau2 scores it (the exchange's
// atomic task dropped) and converted without the replay (the exchange an
// atomic task of its own), an agent that stops early or pays with a wrong
// payment method fails through its own doing: every failed checkpoint is
// attributed to the policy, never to the task; an agent that skips the
// failing exchange scores R = 1.
func TestTask64AttributedToPolicy(t *testing.T) {
	var dropped *task.Task
	for _, tk := range retailWeftTasks(t) {
		if tk.ID == "64" {
			dropped = tk
		}
	}
	raw, _ := retailTasks(t)
	var kept *task.Task
	for _, rt := range raw {
		if rt.ID == "64" {
			var err error
			if kept, err = task.FromTau2(rt, task.Tau2Options{Modules: []string{"retail"}, Tools: retailTools(t)}); err != nil {
				t.Fatal(err)
			}
			kept.ID = "64-kept"
		}
	}
	if dropped == nil || kept == nil || len(dropped.Atomic) != 1 || len(kept.Atomic) != 2 {
		t.Fatalf("task 64: %v / %v", dropped, kept)
	}
	const exchange, modify = 6, 7 // script steps (agentic: the gold calls, then the closing message)
	type edit func(s scripted.Script) scripted.Script
	cases := []struct {
		name        string
		edit        edit
		wantDropped []string // failed checkpoints
		wantKept    []string
	}{
		{"as the gold solution", func(s scripted.Script) scripted.Script { return s }, nil, nil},
		{"failing exchange skipped", func(s scripted.Script) scripted.Script {
			return scripted.Script{Steps: slices.Delete(slices.Clone(s.Steps), exchange, exchange+1)}
		}, nil, nil},
		{"early stop after the failed exchange", func(s scripted.Script) scripted.Script {
			return scripted.Script{Steps: append(slices.Clone(s.Steps[:modify]), scripted.Step{Say: "That is all I can do."})}
		}, []string{"a1", "overall"}, []string{"a2", "overall"}},
		{"wrong payment id", func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			var args map[string]any
			json.Unmarshal(out[modify].Arguments, &args)
			args["payment_method_id"] = "credit_card_0000000"
			out[modify].Arguments, _ = json.Marshal(args)
			return scripted.Script{Steps: out}
		}, []string{"a1", "overall"}, []string{"a2", "overall"}},
	}
	var mu sync.Mutex
	edits := map[string]edit{}
	ex := scriptedExecutor(t, func(job rollout.Job, s scripted.Script) scripted.Script {
		mu.Lock()
		defer mu.Unlock()
		return edits[job.Policy](s)
	})
	var jobs []rollout.Job
	for _, c := range cases {
		edits[c.name] = c.edit
		for _, tk := range []*task.Task{dropped, kept} {
			jobs = append(jobs, rollout.Job{Task: tk, View: task.ViewAgentic, Harness: "native", Policy: c.name, Seed: 1})
		}
	}
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		c := cases[i/2]
		want := c.wantDropped
		if i%2 == 1 {
			want = c.wantKept
		}
		if o.Infra != nil {
			t.Errorf("%s / %s: infra %v", c.name, o.TaskID, o.Infra)
			continue
		}
		if d := cmp.Diff(want, failed(o)); d != "" {
			t.Errorf("%s / %s: failed checkpoints (-want +got):\n%s", c.name, o.TaskID, d)
		}
		atts := attributions(t, o)
		if len(atts) != len(want) {
			t.Errorf("%s / %s: %d attributions for %d failed checkpoints", c.name, o.TaskID, len(atts), len(want))
		}
		for _, a := range atts {
			if a.Class != attribute.ClassPolicy {
				t.Errorf("%s / %s: checkpoint %s attributed to %s (%s), want policy", c.name, o.TaskID, a.Checkpoint, a.Class, a.Evidence)
			}
		}
	}
}
