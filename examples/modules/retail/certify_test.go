package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// Certification of the tau2 retail tasks against the hand-written Go module
// run natively (core/synth/tasks, docs/certification.md), converted with
// the module's read-only tools and gold replay: the same verdicts as on the
// synthesized retail server. A slice by default; all 114 tasks with
// WEFT_CERTIFY_FULL=1 (make certify).
func TestCertifyTau2Retail(t *testing.T) {
	if raceEnabled {
		t.Skip("certification volume test: run without -race")
	}
	ctx := context.Background()
	st, v0 := baseState(t)
	env, err := tasks.NewEnv(st, v0, nativeModule(t))
	if err != nil {
		t.Fatal(err)
	}
	all, err := env.ConvertTau2(ctx, filepath.Join(dataDir, "tasks.json"), []string{"retail"}, "tau2-retail")
	if err != nil {
		t.Fatal(err)
	}
	full := os.Getenv("WEFT_CERTIFY_FULL") != ""
	ts := all
	if !full {
		keep := map[string]bool{"0": true, "1": true, "2": true, "24": true, "64": true, "105": true, "110": true}
		ts = nil
		for _, x := range all {
			if keep[x.ID] {
				ts = append(ts, x)
			}
		}
	}
	rep, certified, err := tasks.Certify(ctx, ts, func([]string) (*tasks.Env, error) { return env, nil }, tasks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	type rk struct {
		Task, Atomic string
		Reason       tasks.Reason
		Call         string
	}
	var got []rk
	for _, r := range rep.Rejections() {
		c := ""
		if r.Call != nil {
			c = fmt.Sprintf("%s@%d: %s", r.Call.Tool, r.Call.TaskIndex, r.Call.Error)
		}
		got = append(got, rk{r.Task, r.Atomic, r.Reason, c})
	}
	want := []rk{
		{"24", "", tasks.ReasonNoAtomic, ""},
		{"57", "", tasks.ReasonNoAtomic, ""},
		{"64", "a1", tasks.ReasonReferenceFailed, "exchange_delivered_order_items@6: Non-delivered order cannot be exchanged"},
		{"105", "", tasks.ReasonNoAtomic, ""},
		{"110", "a2", tasks.ReasonPassesOnInitial, ""},
		{"110", "a2", tasks.ReasonReadOnlyUnverifiable, ""},
	}
	if !full {
		want = append(want[:1], want[2:]...) // no task 57 in the slice
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("rejections (-want +got):\n%s", d)
	}
	wantTasks, wantCert, wantAtomic, wantAtomicCert := 7, 3, len(atomicOf(ts)), len(atomicOf(ts))-2
	if full {
		wantTasks, wantCert = 114, 109
	}
	if rep.Tasks != wantTasks || rep.TasksCertified != wantCert || len(certified) != wantCert || rep.Atomic != wantAtomic || rep.AtomicCertified != wantAtomicCert {
		t.Errorf("tasks %d/%d, atomic %d/%d", rep.TasksCertified, rep.Tasks, rep.AtomicCertified, rep.Atomic)
	}
	t.Logf("%d of %d tasks certified, %d of %d atomic (%d read-only), %d warnings", rep.TasksCertified, rep.Tasks, rep.AtomicCertified, rep.Atomic, rep.ReadOnlyAtomic, rep.Warnings)
}

func atomicOf(ts []*task.Task) []task.Atomic {
	var out []task.Atomic
	for _, t := range ts {
		out = append(out, t.Atomic...)
	}
	return out
}
