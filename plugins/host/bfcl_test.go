package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

var (
	bfclOnce   sync.Once
	bfclSrv    *megamcp.Server
	bfclTasks  map[string]*task.Task
	bfclErr    error
	bfclCloser []func()
)

// bfclFixture builds the BFCL module (examples/modules/bfcl) to wasm, opens
// a server over it and loads the BFCL tasks file, each task's
// initial_state imported as its initial version (as weft run does).
func bfclFixture(t *testing.T) (*megamcp.Server, map[string]*task.Task) {
	t.Helper()
	bfclOnce.Do(func() {
		ctx := context.Background()
		dir, err := os.MkdirTemp("", "weft-bfcl-test-")
		if err != nil {
			bfclErr = err
			return
		}
		bfclCloser = append(bfclCloser, func() { os.RemoveAll(dir) })
		reg, err := module.OpenRegistry(dir)
		if err != nil {
			bfclErr = err
			return
		}
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: megamcptest.CacheDir()})
		if err != nil {
			bfclErr = err
			return
		}
		bfclCloser = append(bfclCloser, func() { rt.Close(ctx) })
		b, err := module.Build(ctx, rt, filepath.Join(megamcptest.Root(), "examples/modules/bfcl"), module.BuildOptions{})
		if err != nil {
			bfclErr = err
			return
		}
		d, err := reg.Put(b)
		if err != nil {
			bfclErr = err
			return
		}
		if bfclErr = reg.Tag("bfcl", "latest", d); bfclErr != nil {
			return
		}
		if bfclSrv, bfclErr = megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: reg, CheckpointInterval: -1}); bfclErr != nil {
			return
		}
		bfclCloser = append(bfclCloser, func() { bfclSrv.Close() })
		ts, err := task.LoadFile(filepath.Join(megamcptest.Root(), "examples/data/bfcl-multiturn/tasks.weft.json"))
		if err != nil {
			bfclErr = err
			return
		}
		bfclTasks = map[string]*task.Task{}
		for _, tk := range ts {
			if tk.InitialVersion, bfclErr = bfclSrv.ImportVersion(ctx, tk.InitialState); bfclErr != nil {
				return
			}
			bfclTasks[tk.ID] = tk
		}
	})
	if bfclErr != nil {
		t.Fatal(bfclErr)
	}
	return bfclSrv, bfclTasks
}

// TestBFCLPlantedFaults: BFCL task multi_turn_base_0 (4 turns: cd, mkdir,
// mv | cd, grep | sort | cd .., mv, cd, diff) replayed by the scripted
// policy from its ground truth, with faults planted by editing the
// script: the ground truth scores R = 1 in both views; a skipped read
// (grep) fails only its turn (BFCL's response check); a wrong argument
// to the last turn's mv fails that turn and the overall state check; a
// skipped mkdir fails the first turn and, the file system diverging,
// every later turn that changes it and the overall check.
func TestBFCLPlantedFaults(t *testing.T) {
	skipVolumeUnderRace(t)
	srv, tasks := bfclFixture(t)
	tk := tasks["multi_turn_base_0"]
	if tk == nil || len(tk.Atomic) != 4 {
		t.Fatalf("multi_turn_base_0: %+v", tk)
	}
	type edit func(s scripted.Script) scripted.Script
	find := func(s scripted.Script, tool, arg string) int {
		for i, st := range s.Steps {
			if st.Tool == tool && (arg == "" || json.Valid(st.Arguments) && contains(st.Arguments, arg)) {
				return i
			}
		}
		t.Fatalf("no step %s(%s) in %+v", tool, arg, s.Steps)
		return -1
	}
	cases := []struct {
		name string
		edit edit
		want []string
	}{
		{"ground truth", func(s scripted.Script) scripted.Script { return s }, nil},
		{"grep skipped", func(s scripted.Script) scripted.Script {
			i := find(s, "grep", "")
			return scripted.Script{Steps: slices.Delete(slices.Clone(s.Steps), i, i+1)}
		}, []string{"turn-1"}},
		{"last mv to a wrong directory", func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			i := find(s, "mv", "previous_report.pdf")
			out[i].Arguments = json.RawMessage(`{"source": "previous_report.pdf", "destination": "previous_copy.pdf"}`)
			return scripted.Script{Steps: out}
		}, []string{"turn-0", "turn-1", "turn-3", "overall"}},
		{"mkdir skipped", func(s scripted.Script) scripted.Script {
			i := find(s, "mkdir", "")
			return scripted.Script{Steps: slices.Delete(slices.Clone(s.Steps), i, i+1)}
		}, []string{"turn-0", "turn-1", "turn-2", "turn-3", "overall"}},
	}
	var mu sync.Mutex
	edits := map[string]edit{}
	ex := &host.Executor{
		Server:   srv,
		Launcher: newLauncher(t),
		Policy: func(job rollout.Job) (model.Policy, error) {
			s, err := scripted.ScriptForView(job.Task, job.View)
			if err != nil {
				return nil, err
			}
			mu.Lock()
			s = edits[job.Policy](s)
			mu.Unlock()
			return scripted.New(s, scripted.Faults{}, job.Seed)
		},
		SystemPrompt: func(*task.Task) string { return "" },
		Limits:       &plugin.Limits{MaxTurns: 100, MaxToolCalls: 100},
	}
	var jobs []rollout.Job
	for _, c := range cases {
		edits[c.name] = c.edit
		jobs = append(jobs, rollout.Job{Task: tk, View: task.ViewAgentic, Harness: "native", Policy: c.name, Seed: 1})
	}
	// The ground truth in the simuser view too, on the other harnesses.
	jobs = append(jobs, rollout.Job{Task: tk, View: task.ViewSimUser, Harness: "react", Policy: "ground truth", Seed: 1},
		rollout.Job{Task: tk, View: task.ViewSimUser, Harness: "hermes", Policy: "ground truth", Seed: 1})
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		want := []string(nil)
		name := "ground truth (" + jobs[i].View + ", " + jobs[i].Harness + ")"
		if i < len(cases) {
			want, name = cases[i].want, cases[i].name
		}
		if o.Infra != nil {
			t.Errorf("%s: infra %v", name, o.Infra)
			continue
		}
		if d := cmp.Diff(want, failed(o)); d != "" {
			t.Errorf("%s: failed checkpoints (-want +got):\n%s", name, d)
		}
	}
}

func contains(raw json.RawMessage, s string) bool {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return false
	}
	for _, v := range m {
		if v == s {
			return true
		}
	}
	return false
}
