package compose

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// TestRejectionDetails: a sample whose composite reference breaks (the
// first state-changing reference call of one atomic task loses its
// arguments) is rejected, and the report names it: the sample, the task
// id it would have had, the atomic task and its pool source, the reason
// and the failing call as certification saw it. The next sample takes the
// id over and the run still composes every task.
func TestRejectionDetails(t *testing.T) {
	ctx := context.Background()
	type broken struct {
		task, atomic, tool string
		index, taskIndex   int
	}
	var want *broken
	defer func(c func(context.Context, []*task.Task, tasks.Resolver, tasks.Options) (*tasks.Report, []*task.Task, error)) {
		certify = c
	}(certify)
	real := certify
	certify = func(ctx context.Context, ts []*task.Task, resolve tasks.Resolver, o tasks.Options) (*tasks.Report, []*task.Task, error) {
		if want == nil {
			env, err := resolve(ts[0].Modules)
			if err != nil {
				return nil, nil, err
			}
			tk := ts[0]
			n := 0
		find:
			for ai := range tk.Atomic {
				a := &tk.Atomic[ai]
				for ci := range a.Reference {
					if ro, _ := env.ReadOnly(a.Reference[ci].Tool); !ro {
						// A copy: the atomic task shares its reference with the pool.
						a.Reference = slices.Clone(a.Reference)
						a.Reference[ci].Arguments = json.RawMessage(`{}`)
						want = &broken{task: tk.ID, atomic: a.ID, tool: a.Reference[ci].Tool, index: ci, taskIndex: n + ci}
						break find
					}
				}
				n += len(a.Reference)
			}
			if want == nil {
				t.Fatal("the first sample has no state-changing reference call")
			}
		}
		return real(ctx, ts, resolve, o)
	}
	res, err := Run(ctx, loadServers(t), sliceOpts)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Composed != 3 || r.Attempts != 4 || len(r.Rejections) != 1 {
		t.Fatalf("composed %d of %d samples, rejections %+v; want 3 of 4 and one rejection", r.Composed, r.Attempts, r.Rejections)
	}
	got := r.Rejections[0]
	if got.Attempt != 1 || got.Task != want.task || got.Task != "compose-0001" || got.Atomic != want.atomic || got.Reason != string(tasks.ReasonReferenceFailed) {
		t.Errorf("rejection %+v; want sample 1, %s %s, %s", got, want.task, want.atomic, tasks.ReasonReferenceFailed)
	}
	if r.RejectedBy[got.Reason] != 1 {
		t.Errorf("rejected_by %v, want %s 1", r.RejectedBy, got.Reason)
	}
	if c := got.Call; c == nil || c.Tool != want.tool || c.Index != want.index || c.TaskIndex != want.taskIndex || string(c.Arguments) != `{}` || c.Error == "" {
		t.Errorf("failing call %+v; want %s at %d (composite %d) with {} and its error", c, want.tool, want.index, want.taskIndex)
	}
	if !strings.HasPrefix(got.Source, "tau2-retail:") && !strings.HasPrefix(got.Source, "airline:") {
		t.Errorf("source %q, want server:atomic-source", got.Source)
	}
	if res.Tasks[0].ID != "compose-0001" {
		t.Errorf("first composed task %s, want compose-0001 (the rejected sample's id taken over)", res.Tasks[0].ID)
	}
	line := got.String()
	for _, part := range []string{"sample 1 (compose-0001): reference_call_failed in " + want.atomic + " (" + got.Source + ")", want.tool + " {}", got.Call.Error} {
		if !strings.Contains(line, part) {
			t.Errorf("String() = %q, want it to hold %q", line, part)
		}
	}
}
