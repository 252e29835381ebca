package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

var (
	weftOnce  sync.Once
	weftTasks []*task.Task
	weftErr   error
)

// retailWeftTasks are the 114 tau2-retail tasks converted to weft tasks
// (examples/data/tau2-retail/tasks.weft.json).
func retailWeftTasks(t testing.TB) []*task.Task {
	t.Helper()
	weftOnce.Do(func() {
		weftTasks, weftErr = task.LoadFile(filepath.Join(megamcptest.Root(), "examples/data/tau2-retail/tasks.weft.json"))
	})
	if weftErr != nil {
		t.Fatal(weftErr)
	}
	return weftTasks
}

// scriptedExecutor runs jobs with the scripted policy following each
// task's reference solution for the job's view; script, when set, rewrites
// the script (planted faults).
func scriptedExecutor(t testing.TB, script func(job rollout.Job, s scripted.Script) scripted.Script) *host.Executor {
	_, policy := retailTasks(t)
	return &host.Executor{
		Server:   newServer(t),
		Launcher: newLauncher(t),
		Policy: func(job rollout.Job) (model.Policy, error) {
			s, err := scripted.ScriptForView(job.Task, job.View)
			if err != nil {
				return nil, err
			}
			if script != nil {
				s = script(job, s)
			}
			return scripted.New(s, scripted.Faults{}, job.Seed)
		},
		SystemPrompt: func(*task.Task) string { return policy },
		Limits:       &plugin.Limits{MaxTurns: 100, MaxToolCalls: 100},
	}
}

// skipVolumeUnderRace skips a volume test under -race: make test runs the
// volume tests without the race detector in a step of their own
// (VOLUME_TESTS in the Makefile).
func skipVolumeUnderRace(t *testing.T) {
	if raceEnabled {
		t.Skip("volume test: `make test` runs it without -race (VOLUME_TESTS)")
	}
}

func jobsFor(tasks []*task.Task, views, harnesses []string) []rollout.Job {
	var jobs []rollout.Job
	for _, tk := range tasks {
		for _, v := range views {
			for _, h := range harnesses {
				jobs = append(jobs, rollout.Job{Task: tk, View: v, Harness: h, Policy: "scripted", Seed: 1})
			}
		}
	}
	return jobs
}

func attributions(t testing.TB, o *rollout.Outcome) []attribute.Attribution {
	t.Helper()
	if len(o.Attributions) == 0 {
		return nil
	}
	var out []attribute.Attribution
	if err := json.Unmarshal(o.Attributions, &out); err != nil {
		t.Fatalf("%s: attributions: %v", o.Key, err)
	}
	return out
}

func failed(o *rollout.Outcome) []string {
	var out []string
	for _, c := range o.Checkpoints {
		if c.Score < 1 {
			out = append(out, c.Name)
		}
	}
	return out
}

// TestRolloutAllTasksBothViews: all 114 tau2-retail tasks, both views, all
// three harnesses (each its own process), the scripted policy without
// faults: every one of the 684 episodes is verified server-side with R = 1
// and no infrastructure failure.
func TestRolloutAllTasksBothViews(t *testing.T) {
	skipVolumeUnderRace(t)
	tasks := retailWeftTasks(t)
	if len(tasks) != 114 {
		t.Fatalf("%d tasks", len(tasks))
	}
	ex := scriptedExecutor(t, nil)
	jobs := jobsFor(tasks, []string{task.ViewAgentic, task.ViewSimUser}, builtin.Names())
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 684 {
		t.Fatalf("%d outcomes, want 684", len(outs))
	}
	k := 0
	for _, o := range outs {
		switch {
		case o.Infra != nil:
			t.Errorf("%s: infra failure %s: %s", o.Key, o.Infra.Code(), o.Infra.Message)
		case o.Score == nil || *o.Score != 1:
			t.Errorf("%s: score %v, failed checkpoints %v, attributions %s", o.Key, o.Score, failed(o), o.Attributions)
		}
		k += len(o.Checkpoints)
	}
	// K = atomic tasks + 1 per episode: 184 atomic tasks + 114 overall,
	// times 2 views x 3 harnesses.
	if k != (184+114)*6 {
		t.Errorf("%d checkpoints scored, want %d", k, (184+114)*6)
	}
}

// task30 is a task of three atomic tasks (return, cancel, return) with a
// communicate check: the fault table's subject.
func task30(t testing.TB) *task.Task {
	for _, tk := range retailWeftTasks(t) {
		if tk.ID == "30" {
			return tk
		}
	}
	t.Fatal("no task 30")
	return nil
}

// actionIndex is the index in the agentic script of atomic task k's
// state-changing action (its last reference call).
func actionIndex(tk *task.Task, k int) int {
	n := 0
	for i := 0; i <= k; i++ {
		n += len(tk.Atomic[i].Reference)
	}
	return n - 1
}

// TestPlantedPolicyFaults: with a policy fault planted in the script,
// exactly the checkpoints the fault hits fail (and are attributed to the
// policy); faults that do not change the outcome (an extra read, a
// hallucinated tool, a malformed call the harness reports back) leave R = 1.
func TestPlantedPolicyFaults(t *testing.T) {
	tk := task30(t)
	type edit func(s scripted.Script) scripted.Script
	at := func(i int, f func(st scripted.Step) []scripted.Step) edit {
		return func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps[:i])
			out = append(out, f(s.Steps[i])...)
			out = append(out, s.Steps[i+1:]...)
			return scripted.Script{Steps: out}
		}
	}
	wrongArg := func(st scripted.Step) []scripted.Step {
		var args map[string]any
		json.Unmarshal(st.Arguments, &args)
		args["order_id"] = "#W0000000"
		b, _ := json.Marshal(args)
		return []scripted.Step{{Tool: st.Tool, Arguments: b}}
	}
	cases := []struct {
		name string
		edit edit
		want []string
	}{
		{"none", func(s scripted.Script) scripted.Script { return s }, nil},
		{"wrong argument in a2's action", at(actionIndex(tk, 1), wrongArg), []string{"a2", "overall"}},
		{"wrong argument in a3's action", at(actionIndex(tk, 2), wrongArg), []string{"a3", "overall"}},
		{"a1's action skipped", at(actionIndex(tk, 0), func(scripted.Step) []scripted.Step { return nil }), []string{"a1", "overall"}},
		{"early stop before a3's action", func(s scripted.Script) scripted.Script {
			i := actionIndex(tk, 2)
			return scripted.Script{Steps: append(slices.Clone(s.Steps[:i]), scripted.Step{Say: "That is all I can do."})}
		}, []string{"a3", "overall"}},
		{"nothing communicated", func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps)
			out[len(out)-1] = scripted.Step{Say: "All done."}
			return scripted.Script{Steps: out}
		}, []string{"overall"}},
		{"extra write to another user's order", func(s scripted.Script) scripted.Script {
			out := slices.Clone(s.Steps[:len(s.Steps)-1])
			out = append(out, scripted.Step{Tool: "cancel_pending_order", Arguments: json.RawMessage(`{"order_id":"#W5918442","reason":"no longer needed"}`)}, s.Steps[len(s.Steps)-1])
			return scripted.Script{Steps: out}
		}, []string{"overall"}},
		{"extra read call", at(1, func(st scripted.Step) []scripted.Step { return []scripted.Step{st, st} }), nil},
		{"hallucinated tool", at(2, func(st scripted.Step) []scripted.Step {
			return []scripted.Step{{Tool: "get_order_status", Arguments: json.RawMessage(`{"order_id":"#W1"}`)}, st}
		}), nil},
		{"invalid arguments", at(2, func(st scripted.Step) []scripted.Step {
			return []scripted.Step{{Tool: st.Tool, Arguments: json.RawMessage(`{"order":1}`)}, st}
		}), nil},
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
		for _, h := range builtin.Names() {
			jobs = append(jobs, rollout.Job{Task: tk, View: task.ViewAgentic, Harness: h, Policy: c.name, Seed: 1})
		}
	}
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		c := cases[i/len(builtin.Names())]
		if o.Infra != nil {
			t.Errorf("%s / %s: infra %v", c.name, o.Harness, o.Infra)
			continue
		}
		if diff := cmp.Diff(c.want, failed(o)); diff != "" {
			t.Errorf("%s / %s: failed checkpoints (-want +got):\n%s", c.name, o.Harness, diff)
		}
		wantScore := 1 - float64(len(c.want))/float64(len(tk.Atomic)+1)
		if o.Score == nil || *o.Score != wantScore {
			t.Errorf("%s / %s: score %v, want %v", c.name, o.Harness, o.Score, wantScore)
		}
		for _, a := range attributions(t, o) {
			if a.Class != attribute.ClassPolicy {
				t.Errorf("%s / %s: checkpoint %s attributed to %s (%s), want policy", c.name, o.Harness, a.Checkpoint, a.Class, a.Evidence)
			}
		}
		if n := len(attributions(t, o)); n != len(c.want) {
			t.Errorf("%s / %s: %d attributions for %d failed checkpoints", c.name, o.Harness, n, len(c.want))
		}
	}
}

// stateChanging reports whether atomic task a has a changed_rows check.
func stateChanging(a task.Atomic) bool {
	for _, c := range a.Checks {
		if c.Kind == task.CheckChangedRows {
			return true
		}
	}
	return false
}

func cloneTask(tk *task.Task) *task.Task {
	b, _ := json.Marshal(tk)
	var c task.Task
	json.Unmarshal(b, &c)
	return &c
}

// TestAttributionAccuracy plants faults of the four classes in episodes of
// the tau2-retail tasks whose last atomic task changes state, and checks
// that the attributor names the class:
//
//   - policy: the policy calls the last action with a wrong order id;
//   - task: the task's reference solution of the last action names an
//     order that does not exist (so the reference cannot succeed), while
//     the policy does the right thing;
//   - verifier: the last atomic task's check is replaced by an SQL
//     assertion that contradicts the ledger and the diff;
//   - environment: the module fails (an injected trap) on the last action
//     in every attempt: the episode is an infrastructure failure, never a
//     score, and is attributed to the module and tool.
//
// Accuracy must be >= 95 % overall and per class.
func TestAttributionAccuracy(t *testing.T) {
	skipVolumeUnderRace(t)
	var subjects []*task.Task
	for _, tk := range retailWeftTasks(t) {
		n := len(tk.Atomic)
		if n == 0 || !stateChanging(tk.Atomic[n-1]) {
			continue
		}
		ref := tk.Atomic[n-1].Reference
		var args map[string]any
		if json.Unmarshal(ref[len(ref)-1].Arguments, &args) == nil && args["order_id"] != nil {
			// The planted faults rewrite the last action's order id.
			subjects = append(subjects, tk)
		}
	}
	if len(subjects) < 40 {
		t.Fatalf("only %d subject tasks", len(subjects))
	}
	classes := []attribute.Class{attribute.ClassPolicy, attribute.ClassTask, attribute.ClassVerifier, attribute.ClassEnvironment}
	var jobs []rollout.Job
	planted := map[string]*task.Task{} // job key -> the original task (policy follows it)
	for _, tk := range subjects {
		last := len(tk.Atomic) - 1
		for _, cl := range classes {
			pt := cloneTask(tk)
			pt.ID = tk.ID + "-" + string(cl)
			switch cl {
			case attribute.ClassTask:
				ref := pt.Atomic[last].Reference
				var args map[string]any
				json.Unmarshal(ref[len(ref)-1].Arguments, &args)
				args["order_id"] = "#W0000000"
				ref[len(ref)-1].Arguments, _ = json.Marshal(args)
			case attribute.ClassVerifier:
				pt.Atomic[last].Checks = []task.Check{{Kind: task.CheckSQL,
					SQL: "SELECT COUNT(*) FROM orders WHERE status = 'no-such-status'", Expect: json.RawMessage(`[[1]]`)}}
			}
			job := rollout.Job{Task: pt, View: task.ViewAgentic, Harness: "native", Policy: string(cl), Seed: 1}
			planted[job.Key()] = tk
			jobs = append(jobs, job)
		}
	}
	faultTool := sync.Map{} // session -> tool to fail
	setInject(t, func(session, module, tool string, seq uint64) error {
		if want, ok := faultTool.Load(session); ok && want == tool {
			return errors.New("planted module fault")
		}
		return nil
	})
	ex := scriptedExecutor(t, func(job rollout.Job, s scripted.Script) scripted.Script {
		orig := planted[job.Key()]
		s, _ = scripted.ScriptForView(orig, job.View)
		if job.Policy == string(attribute.ClassPolicy) {
			i := actionIndex(orig, len(orig.Atomic)-1)
			var args map[string]any
			json.Unmarshal(s.Steps[i].Arguments, &args)
			args["order_id"] = "#W0000000"
			s.Steps[i].Arguments, _ = json.Marshal(args)
		}
		return s
	})
	ex.OnSession = func(job rollout.Job, attempt int, session string) {
		if job.Policy == string(attribute.ClassEnvironment) {
			ref := job.Task.Atomic[len(job.Task.Atomic)-1].Reference
			faultTool.Store(session, ref[len(ref)-1].Tool)
		}
	}
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 4, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ right, total int }
	per := map[attribute.Class]*tally{}
	confusion := map[string]int{}
	ineffective := 0
	for _, o := range outs {
		want := attribute.Class(o.Policy)
		if per[want] == nil {
			per[want] = &tally{}
		}
		atts := attributions(t, o)
		if want == attribute.ClassEnvironment {
			if o.Infra == nil || o.Score != nil {
				t.Errorf("%s: an environment fault must end as an infrastructure failure, got score %v", o.Key, o.Score)
			}
		} else if o.Infra != nil {
			t.Errorf("%s: infra %v", o.Key, o.Infra)
		}
		if len(atts) == 0 && o.Score != nil && *o.Score == 1 {
			// The plant changed nothing: in a few gold solutions the last
			// action fails by design (e.g. cancelling an order that is not
			// pending), so a wrong order id fails the same way.
			ineffective++
			t.Logf("%s: planted fault had no effect (R = 1)", o.Key)
			continue
		}
		if len(atts) == 0 {
			t.Errorf("%s: no attribution (failed %v)", o.Key, failed(o))
			per[want].total++
			confusion[string(want)+"->none"]++
			continue
		}
		for _, a := range atts {
			per[want].total++
			confusion[string(want)+"->"+string(a.Class)]++
			if a.Class == want {
				per[want].right++
			}
		}
	}
	var keys []string
	for k := range confusion {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%s: %d", k, confusion[k]))
	}
	t.Logf("confusion (planted -> attributed, per failed checkpoint):\n%s", strings.Join(lines, "\n"))
	right, total := 0, 0
	for _, cl := range classes {
		tl := per[cl]
		if tl == nil || tl.total == 0 {
			t.Errorf("class %s: no attributions", cl)
			continue
		}
		acc := float64(tl.right) / float64(tl.total)
		t.Logf("%s: %d/%d = %.1f %%", cl, tl.right, tl.total, 100*acc)
		if acc < 0.95 {
			t.Errorf("class %s: accuracy %.1f %% < 95 %%", cl, 100*acc)
		}
		right += tl.right
		total += tl.total
	}
	t.Logf("overall: %d/%d = %.1f %% over %d episodes (%d plants without effect)", right, total, 100*float64(right)/float64(total), len(outs), ineffective)
	if ineffective*20 > len(outs) {
		t.Errorf("%d of %d planted faults had no effect", ineffective, len(outs))
	}
	if float64(right)/float64(total) < 0.95 {
		t.Errorf("overall accuracy %d/%d < 95 %%", right, total)
	}
}

// TestInfraFailuresAreNeverScores: a plugin killed mid-episode, a model
// endpoint that is down and a module that traps each end the attempt as an
// infrastructure failure with its reason (never a score), and the retry,
// where the fault is gone, scores R = 1.
func TestInfraFailuresAreNeverScores(t *testing.T) {
	tk := task30(t)
	l := newLauncher(t)
	var killed, trapped atomic.Bool
	ex := scriptedExecutor(t, nil)
	inner := ex.Policy
	ex.Policy = func(job rollout.Job) (model.Policy, error) {
		p, err := inner(job)
		if err != nil || job.Policy != "kill" {
			return p, err
		}
		if killed.Load() {
			return p, nil // the retry: the fault is gone
		}
		return &killOnce{inner: p, kill: func() {
			killed.Store(true)
			l.Kill("builtin:" + job.Harness)
		}}, nil
	}
	var trapSessions sync.Map
	ex.OnSession = func(job rollout.Job, attempt int, session string) {
		if job.Policy == "trap" {
			trapSessions.Store(session, true)
		}
	}
	setInject(t, func(session, module, tool string, seq uint64) error {
		if _, ok := trapSessions.Load(session); ok && tool == "cancel_pending_order" && !trapped.Swap(true) {
			return errors.New("planted trap")
		}
		return nil
	})
	jobs := []rollout.Job{
		{Task: tk, View: task.ViewSimUser, Harness: "hermes", Policy: "kill", Seed: 1},
		{Task: tk, View: task.ViewAgentic, Harness: "react", Policy: "trap", Seed: 1},
	}
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 1, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	wantKinds := []string{"plugin_exited", "env_trap"}
	for i, o := range outs {
		if o.Attempts != 2 || len(o.InfraErrors) != 1 || o.InfraErrors[0].Code() != wantKinds[i] {
			t.Errorf("%s: attempts %d, infra errors %+v; want 2 attempts after one %s", o.Key, o.Attempts, o.InfraErrors, wantKinds[i])
		}
		if o.Infra != nil || o.Score == nil || *o.Score != 1 {
			t.Errorf("%s: retry: infra %v, score %v, failed %v, attributions %s; want R = 1", o.Key, o.Infra, o.Score, failed(o), o.Attributions)
		}
	}
	if !killed.Load() || !trapped.Load() {
		t.Fatalf("faults not planted: killed %v, trapped %v", killed.Load(), trapped.Load())
	}
}

// killOnce kills the harness process at the policy's third generation.
type killOnce struct {
	inner model.Policy
	kill  func()
	n     atomic.Int32
}

func (k *killOnce) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if k.n.Add(1) == 3 {
		go k.kill() // as an outside kill would: not from inside the callback
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return k.inner.Generate(ctx, req)
}

// TestReferencePerContent: two tasks with the same id but different
// reference solutions each get their own reference replay (the cache is
// keyed by content, not id): the exact reference of each scores R = 1.
func TestReferencePerContent(t *testing.T) {
	tk := task30(t)
	edited := cloneTask(tk)
	ref := edited.Atomic[1].Reference
	var args map[string]any
	json.Unmarshal(ref[len(ref)-1].Arguments, &args)
	if args["reason"] == "no longer needed" {
		args["reason"] = "ordered by mistake"
	} else {
		args["reason"] = "no longer needed"
	}
	ref[len(ref)-1].Arguments, _ = json.Marshal(args)
	ex := scriptedExecutor(t, nil)
	jobs := []rollout.Job{
		{Task: tk, View: task.ViewAgentic, Harness: "native", Policy: "scripted", Seed: 1},
		{Task: edited, View: task.ViewAgentic, Harness: "native", Policy: "scripted", Sample: 1, Seed: 1},
	}
	outs, err := rollout.Run(context.Background(), jobs, ex, rollout.Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Infra != nil || o.Score == nil || *o.Score != 1 {
			t.Errorf("%s: infra %v, score %v, failed %v", o.Key, o.Infra, o.Score, failed(o))
		}
	}
}
