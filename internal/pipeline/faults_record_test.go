package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
)

// TestRolloutRecordsExecutorFaults: each episode's recorded faults are the
// ones of the plan the executor built for it (the scripted policy of the
// task, view and job seed), and the plan is built once per attempt: the
// pipeline no longer makes it again to learn its faults.
func TestRolloutRecordsExecutorFaults(t *testing.T) {
	tasks := retailTasks(t, "16", "30", "5")
	spec := testSpec(t, tasks)
	spec.Stages = []string{StageImport, StageRollout}
	var built atomic.Int64
	inner := spec.Policies["scripted"]
	inner.Episode = func(tk *task.Task, view string, seed uint64) (model.Policy, error) {
		built.Add(1)
		sc, err := scripted.ScriptForView(tk, view)
		if err != nil {
			return nil, err
		}
		return scripted.New(sc, testFaults, seed)
	}
	spec.Policies = map[string]Policy{"scripted": inner}
	dir := t.TempDir()
	if _, err := Run(context.Background(), spec, Options{Dir: dir, GeneratedAt: "test"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*task.Task{}
	for _, tk := range tasks {
		byID[tk.ID] = tk
	}
	var eps, attempts, withFaults, faults int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ep report.Episode
		if err := json.Unmarshal([]byte(line), &ep); err != nil {
			t.Fatal(err)
		}
		eps++
		attempts += ep.Attempts
		sc, err := scripted.ScriptForView(byID[ep.Task], ep.View)
		if err != nil {
			t.Fatal(err)
		}
		p, err := scripted.New(sc, testFaults, seedOf(spec.Rollout.Seed, ep.Key))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(p.Faults(), ep.Faults); diff != "" {
			t.Errorf("%s: recorded faults differ from the episode's plan (-plan +recorded):\n%s", ep.Key, diff)
		}
		if len(ep.Faults) > 0 {
			withFaults++
			faults += len(ep.Faults)
		}
	}
	if eps != 12 {
		t.Fatalf("%d episodes, want 12", eps)
	}
	// At these rates most of the 12 episodes carry a fault; a run whose
	// faults were dropped would record none.
	if withFaults == 0 || faults < withFaults {
		t.Errorf("%d episodes with %d faults; want some", withFaults, faults)
	}
	if got := built.Load(); got != int64(attempts) {
		t.Errorf("policy built %d times for %d attempts; want once per attempt", got, attempts)
	}
}
