package pipeline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
)

// faultTask: a1 looks order #W1 up and cancels it (changed_rows), a2 only
// looks #W2 up (required_call); the overall check is state_equal.
func faultTask() *task.Task {
	c := func(tool, args string) task.Call { return task.Call{Tool: tool, Arguments: json.RawMessage(args)} }
	return &task.Task{ID: "t1", Brief: "b", Atomic: []task.Atomic{
		{ID: "a1", Request: "r1", Reference: []task.Call{c("get_order_details", `{"order_id":"#W1"}`), c("cancel_pending_order", `{"order_id":"#W1"}`)},
			Checks: []task.Check{{Kind: task.CheckChangedRows}}},
		{ID: "a2", Request: "r2", Reference: []task.Call{c("get_order_details", `{"order_id":"#W2"}`)},
			Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: "get_order_details", Arguments: json.RawMessage(`{"order_id":"#W2"}`), Compare: []string{"order_id"}}}},
	}, Checks: []task.Check{{Kind: task.CheckStateEqual}}}
}

func faultEpisode(key string, failed []string, faults ...scripted.Fault) report.Episode {
	score := 1.0
	e := report.Episode{Key: key, Task: "t1", View: task.ViewAgentic, Score: &score, Faults: faults}
	bad := map[string]bool{}
	for _, f := range failed {
		bad[f] = true
		e.Attributions = append(e.Attributions, attribute.Attribution{Checkpoint: f, Class: attribute.ClassPolicy})
	}
	for _, n := range []string{"a1", "a2", "overall"} {
		s := 1.0
		if bad[n] {
			s = 0
		}
		e.Checkpoints = append(e.Checkpoints, report.CheckpointScore{Name: n, Score: s})
	}
	if len(failed) > 0 {
		score = 1 - float64(len(failed))/3
	}
	e.Pass = score == 1
	return e
}

// TestCheckFaults: episodes whose failed checkpoints are what their faults
// predict match (exact or within May); one failing a checkpoint no fault
// predicts, one passing a must-fail checkpoint, one not scored and one
// blamed on the environment are problems naming the episode; an episode
// of an unknown task is an error.
func TestCheckFaults(t *testing.T) {
	skipWrite := scripted.Fault{Kind: scripted.FaultSkipStep, Step: 1, Atomic: "a1", Tool: "cancel_pending_order", Arguments: json.RawMessage(`{"order_id":"#W1"}`)}
	skipRead := scripted.Fault{Kind: scripted.FaultSkipStep, Step: 2, Atomic: "a2", Tool: "get_order_details", Arguments: json.RawMessage(`{"order_id":"#W2"}`)}
	wrongWrite := scripted.Fault{Kind: scripted.FaultWrongArgument, Step: 1, Atomic: "a1", Tool: "cancel_pending_order", Arguments: json.RawMessage(`{"order_id":"#W9"}`), Want: json.RawMessage(`{"order_id":"#W1"}`)}
	envBlamed := faultEpisode("t1/agentic/native/scripted/4", []string{"a2"}, skipRead)
	envBlamed.Attributions[0].Class = attribute.ClassEnvironment
	eps := []report.Episode{
		faultEpisode("t1/agentic/native/scripted/0", nil),
		faultEpisode("t1/agentic/native/scripted/1", []string{"a1", "overall"}, skipWrite),
		faultEpisode("t1/agentic/native/scripted/2", []string{"a1", "a2", "overall"}, skipWrite, skipRead),
		faultEpisode("t1/agentic/native/scripted/3", []string{"a1", "overall"}, wrongWrite),
		envBlamed,
		faultEpisode("t1/agentic/native/scripted/5", []string{"a2"}, skipWrite),
		{Key: "t1/agentic/native/scripted/6", Task: "t1", View: task.ViewAgentic, Infra: &rollout.InfraError{Message: "deadline"}},
	}
	fc, err := CheckFaults([]*task.Task{faultTask()}, eps)
	if err != nil {
		t.Fatal(err)
	}
	if fc.Episodes != 7 || fc.Scored != 6 || fc.R1 != 1 || fc.WithFaults != 5 || fc.Faults != 6 || fc.Failed != 5 {
		t.Errorf("counts %+v", fc)
	}
	// 0, 1, 2 exact; 3 matched with its own task in May; 4 matched but
	// blamed on the environment; 5 mismatched.
	if fc.Matched != 5 || fc.Exact != 4 || fc.Mismatched != 1 || fc.MayFailed != 1 {
		t.Errorf("matched %d exact %d mismatched %d may failed %d", fc.Matched, fc.Exact, fc.Mismatched, fc.MayFailed)
	}
	if fc.ByClass[scripted.ClassLostWrite] != 3 || fc.ByClass[scripted.ClassChangedWrite] != 1 || fc.ByClass[scripted.ClassLostRequiredCall] != 2 {
		t.Errorf("by class %v", fc.ByClass)
	}
	got := strings.Join(fc.Problems, "\n")
	for _, want := range []string{
		"scripted/4: checkpoint a2 (failed: true) blamed on environment, want the policy",
		"scripted/5: checkpoint a1 passed, but skip_step of step 1 (a1 cancel_pending_order, lost_write) should fail it",
		"scripted/5: checkpoint a2 failed, but no planted fault predicts it",
		"scripted/6: not scored",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if len(fc.Problems) != 5 {
		t.Errorf("%d problems, want 5:\n%s", len(fc.Problems), got)
	}
	if _, err := CheckFaults(nil, eps[:1]); err == nil || !strings.Contains(err.Error(), `no task "t1"`) {
		t.Errorf("unknown task: %v", err)
	}
}

// TestCheckComposeRunsErrors: a folder without a task file is an error; a
// faults folder where nothing failed and no training data came out is
// reported as problems.
func TestCheckComposeRunsErrors(t *testing.T) {
	if _, err := CheckComposeRuns(t.TempDir(), t.TempDir()); err == nil {
		t.Error("empty folders: no error")
	}
	dir := t.TempDir()
	b, err := json.Marshal(task.File{Format: task.Format, Tasks: []*task.Task{faultTask()}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, FileTasks), b, 0o644); err != nil {
		t.Fatal(err)
	}
	line, _ := json.Marshal(faultEpisode("t1/agentic/native/scripted/0", nil))
	if err := os.WriteFile(filepath.Join(dir, FileEpisodes), append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := CheckComposeRuns(dir, dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(c.Problems, "\n")
	for _, want := range []string{"faults: no episode failed", "no accepted SFT record", "no GRPO group with a non-zero advantage"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if c.Gold.R1 != 1 || len(c.Problems) != 3 {
		t.Errorf("gold %+v, problems %v", c.Gold, c.Problems)
	}
}
