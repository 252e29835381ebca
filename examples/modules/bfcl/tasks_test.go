package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
)

// The BFCL tasks file (examples/data/bfcl-multiturn/tasks.weft.json) is
// generated from the oracle tasks file: each case converted by
// task.FromBFCL, with its initial_config loaded into bfcl_class as its
// initial_state, and the turns that change the state found by replaying
// the ground truth on the module. TestTasksFile checks the committed file
// is what the generator writes; -update rewrites it.

var update = flag.Bool("update", false, "rewrite examples/data/bfcl-multiturn/tasks.weft.json")

const tasksFile = dataDir + "/tasks.weft.json"

// bfclTasks converts every case of the oracle tasks file.
func bfclTasks(t *testing.T) []*task.Task {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dataDir, "oracle", "tasks-public.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []task.BFCLCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m := nativeModule(t)
	store := state.NewStore()
	var out []*task.Task
	for _, c := range f.Cases {
		var cfg map[string]json.RawMessage
		if err := json.Unmarshal(c.InitialConfig, &cfg); err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		ver, err := seedVersion(ctx, store, c.InvolvedClasses, cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		var doc bytes.Buffer
		if err := ver.Export(&doc); err != nil {
			t.Fatal(err)
		}
		changes := replayCalls(t, m, ver, &c)
		tk, err := task.FromBFCL(&c, task.BFCLOptions{Modules: []string{"bfcl"}, InitialState: doc.Bytes(),
			ChangesState: func(k int) bool { return changes[k] }, ClassTools: classTools})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tk)
	}
	return out
}

// replayCalls runs the ground truth in order on a fork of ver and reports
// which calls change the state (its hash).
func replayCalls(t *testing.T, m *module.Module, ver *state.Version, c *task.BFCLCase) []bool {
	t.Helper()
	ctx := context.Background()
	sess := &module.Session{Workspace: ver.Store().Fork(ver)}
	changes := make([]bool, len(c.Calls))
	for i, call := range c.Calls {
		before := sess.Workspace.Hash()
		res, err := m.Call(ctx, sess, call.Name, call.Arguments)
		if err != nil || res.IsError {
			t.Fatalf("%s call %d: %s: %v %+v", c.ID, i, call.Name, err, res)
		}
		changes[i] = sess.Workspace.Hash() != before
	}
	return changes
}

func TestTasksFile(t *testing.T) {
	tasks := bfclTasks(t)
	if len(tasks) != 100 {
		t.Fatalf("%d tasks, want 100", len(tasks))
	}
	var buf bytes.Buffer
	if err := task.Save(&buf, tasks); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(tasksFile, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(tasksFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, buf.Bytes()) {
		t.Fatalf("%s is not what the generator writes: go test -run TestTasksFile -update ./examples/modules/bfcl", tasksFile)
	}
	// Shape of the first task (multi_turn_base_0): 4 turns.
	t0 := tasks[0]
	if t0.ID != "multi_turn_base_0" || len(t0.Atomic) != 4 || t0.Checks[0].Kind != task.CheckStateEqual {
		t.Errorf("task 0: %s, %d atomic, checks %+v", t0.ID, len(t0.Atomic), t0.Checks)
	}
}
