package host_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestBFCLPlantedFaults: BFCL tasks replayed by the scripted policy from
// their ground truth, with faults planted by editing the script; each
// fault must fail exactly the checkpoints listed: the turn it is planted
// in, the later turns that depend on it, the overall state check, never an
// earlier turn (the tree is workspace files and entry rows per path, and
// each turn's changed_rows leaves a value a later turn changes again to
// that turn).
//
// multi_turn_base_0 (4 turns: cd, mkdir, mv | cd, grep | sort | cd .., mv,
// cd, diff): the ground truth scores R = 1 in both views and all
// harnesses; a skipped read (grep, sort) fails only its turn (BFCL's
// response check); a wrong destination for turn 3's mv fails turn 3 and
// the overall check only (turn 0 moved the other file into the same
// directory); a skipped mkdir in turn 0 turns its mv into a rename, so the
// later turns' cd, grep, sort and mv fail too.
//
// multi_turn_base_2 (5 turns: cd, touch | echo | diff | cp, cd, mv | cat):
// a wrong content in turn 1's echo fails turn 1 and turn 3, whose copy
// carries it, and the overall check; not turn 0, which created the file
// (its content is turn 1's to check), nor the reads of turns 2 and 4.
//
// multi_turn_base_8 (4 turns: grep | diff | authenticate_twitter,
// post_tweet | comment): TwitterAPI's state is one row per attribute, so a
// wrong tweet in turn 2 fails turn 2 (tweets) and not turn 3, whose
// comment changes comments; a wrong comment in turn 3 fails turn 3 only.
func TestBFCLPlantedFaults(t *testing.T) {
	skipVolumeUnderRace(t)
	srv, tasks := bfclFixture(t)
	t0, t2, t8 := tasks["multi_turn_base_0"], tasks["multi_turn_base_2"], tasks["multi_turn_base_8"]
	if t0 == nil || len(t0.Atomic) != 4 || t2 == nil || len(t2.Atomic) != 5 || t8 == nil || len(t8.Atomic) != 4 {
		t.Fatalf("multi_turn_base_0: %+v, multi_turn_base_2: %+v, multi_turn_base_8: %+v", t0, t2, t8)
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
	skip := func(tool string) edit {
		return func(s scripted.Script) scripted.Script {
			i := find(s, tool, "")
			return scripted.Script{Steps: slices.Delete(slices.Clone(s.Steps), i, i+1)}
		}
	}
	cases := []struct {
		name string
		task *task.Task
		edit edit
		want []string
	}{
		{"ground truth", t0, func(s scripted.Script) scripted.Script { return s }, nil},
		{"grep skipped (turn 1)", t0, skip("grep"), []string{"turn-1"}},
		{"sort skipped (turn 2)", t0, skip("sort"), []string{"turn-2"}},
		{"turn 3 mv to a wrong name", t0, func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			i := find(s, "mv", "previous_report.pdf")
			out[i].Arguments = json.RawMessage(`{"source": "previous_report.pdf", "destination": "previous_copy.pdf"}`)
			return scripted.Script{Steps: out}
		}, []string{"turn-3", "overall"}},
		{"mkdir skipped (turn 0)", t0, skip("mkdir"), []string{"turn-0", "turn-1", "turn-2", "turn-3", "overall"}},
		{"turn 1 echo of a wrong content", t2, func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			i := find(s, "echo", "")
			out[i].Arguments = json.RawMessage(`{"content": "Collaboration leads to success.", "file_name": "TeamNotes.txt"}`)
			return scripted.Script{Steps: out}
		}, []string{"turn-1", "turn-3", "overall"}},
		{"ground truth", t2, func(s scripted.Script) scripted.Script { return s }, nil},
		{"turn 2 tweet of a wrong content", t8, func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			out[find(s, "post_tweet", "")].Arguments = json.RawMessage(`{"content": "No anomaly."}`)
			return scripted.Script{Steps: out}
		}, []string{"turn-2", "overall"}},
		{"turn 3 comment of a wrong content", t8, func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			out[find(s, "comment", "")].Arguments = json.RawMessage(`{"tweet_id": 1, "comment_content": "Boo!"}`)
			return scripted.Script{Steps: out}
		}, []string{"turn-3", "overall"}},
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
		edits[c.task.ID+" "+c.name] = c.edit
		jobs = append(jobs, rollout.Job{Task: c.task, View: task.ViewAgentic, Harness: "native", Policy: c.task.ID + " " + c.name, Seed: 1})
	}
	// The ground truth in the simuser view too, on the other harnesses.
	jobs = append(jobs, rollout.Job{Task: t0, View: task.ViewSimUser, Harness: "react", Policy: t0.ID + " ground truth", Seed: 1},
		rollout.Job{Task: t0, View: task.ViewSimUser, Harness: "hermes", Policy: t0.ID + " ground truth", Seed: 1})
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		want := []string(nil)
		name := "ground truth (" + jobs[i].View + ", " + jobs[i].Harness + ")"
		if i < len(cases) {
			want, name = cases[i].want, cases[i].task.ID+": "+cases[i].name
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

// TestBFCLToolsOfInvolvedClasses: a BFCL task offers only its involved
// classes' tools less excluded_function (multi_turn_base_0: TwitterAPI's 14
// and GorillaFileSystem's 18 less cp), and the Env of its episode lists
// exactly those and refuses the others as tool errors that never reach the
// session's ledger.
func TestBFCLToolsOfInvolvedClasses(t *testing.T) {
	srv, tasks := bfclFixture(t)
	tk := tasks["multi_turn_base_0"]
	if len(tk.Tools) != 31 || slices.Contains(tk.Tools, "cp") || !slices.Contains(tk.Tools, "mv") || !slices.Contains(tk.Tools, "post_tweet") || slices.Contains(tk.Tools, "add") {
		t.Fatalf("multi_turn_base_0 tools: %d %v", len(tk.Tools), tk.Tools)
	}
	for _, other := range tasks {
		if len(other.Tools) == 0 || len(other.Tools) >= 128 {
			t.Errorf("%s offers %d tools", other.ID, len(other.Tools))
		}
	}
	ctx := context.Background()
	info, err := srv.Create(ctx, megamcp.CreateOptions{Modules: tk.Modules, Version: tk.InitialVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Delete(ctx, info.ID, 0)
	env := &host.Env{Server: srv, Session: info.ID, Tools: tk.Tools}
	var lr plugin.ListToolsResponse
	if err := env.ListTools(ctx, &plugin.ListToolsRequest{}, &lr); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lr.Tools {
		names = append(names, tl.Name)
	}
	if d := cmp.Diff(slices.Sorted(slices.Values(tk.Tools)), slices.Sorted(slices.Values(names))); d != "" {
		t.Errorf("listed tools (-want +got):\n%s", d)
	}
	for _, name := range []string{"cp", "add"} {
		var cr plugin.CallToolResponse
		if err := env.CallTool(ctx, &plugin.CallToolRequest{Name: name, Arguments: `{}`}, &cr); err != nil {
			t.Fatal(err)
		}
		if !cr.IsError || !strings.Contains(cr.Content, "not offered") {
			t.Errorf("%s: %+v", name, &cr)
		}
	}
	var cr plugin.CallToolResponse
	if err := env.CallTool(ctx, &plugin.CallToolRequest{Name: "pwd", Arguments: `{}`}, &cr); err != nil || cr.IsError {
		t.Fatalf("pwd: %v %+v", err, &cr)
	}
	recs, err := srv.Ledger(ctx, info.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, r := range recs {
		if r.Kind == megamcp.KindCall {
			calls++
			if r.Tool != "pwd" {
				t.Errorf("ledger has a call of %s", r.Tool)
			}
		}
	}
	if calls != 1 {
		t.Errorf("%d calls in the ledger, want 1 (pwd)", calls)
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
