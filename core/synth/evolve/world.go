package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/failure"
)

// world is one version of the system loaded: an Env per server, the
// certification of the active tasks and the round's episodes.
type world struct {
	sys  *System
	envs map[string]*tasks.Env
	// certified maps every active task id to whether it certifies;
	// results holds its certification.
	certified map[string]bool
	results   map[string]tasks.TaskResult
	// faithful maps a task id to whether its faithful episode passed.
	faithful   map[string]bool
	episodes   []*episode
	findings   []*finding
	refs       map[string]*refRun
	policySeed uint64
}

func newWorld(ctx context.Context, sys *System) (*world, error) {
	w := &world{sys: sys, envs: map[string]*tasks.Env{}, refs: map[string]*refRun{}}
	for _, s := range sys.Servers {
		env, err := tasks.SpecEnv(ctx, moduleConfig, s.Spec)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("evolve: server %s: %w", s.Spec.Name, err)
		}
		w.envs[s.Spec.Name] = env
	}
	return w, nil
}

func (w *world) close() {
	for _, e := range w.envs {
		e.Store.Close()
	}
	w.envs = nil
}

func (w *world) resolve(mods []string) (*tasks.Env, error) {
	if len(mods) == 1 {
		if e, ok := w.envs[mods[0]]; ok {
			return e, nil
		}
	}
	return nil, fmt.Errorf("no server %v in the system", mods)
}

// certify certifies ts on w's servers.
func (w *world) certify(ctx context.Context, ts []*task.Task) (*tasks.Report, error) {
	rep, _, err := tasks.Certify(ctx, ts, w.resolve, tasks.Options{})
	return rep, err
}

// refCall is one call of a task's whole reference: its atomic task and
// position there.
type refCall struct {
	Atomic string
	Index  int
	Call   tasks.Call
}

// refRun is a task's reference replayed from the seed, atomic task by
// atomic task: the states after each (after[0] the seed) and the calls.
type refRun struct {
	after []*state.Version
	calls []refCall
}

func (w *world) reference(ctx context.Context, t *task.Task) (*refRun, error) {
	key := taskRef(t)
	if r, ok := w.refs[key]; ok {
		return r, nil
	}
	env, err := w.resolve(t.Modules)
	if err != nil {
		return nil, err
	}
	rr, err := replayReference(ctx, env, t)
	if err != nil {
		return nil, err
	}
	w.refs[key] = rr
	return rr, nil
}

func replayReference(ctx context.Context, env *tasks.Env, t *task.Task) (*refRun, error) {
	rr := &refRun{after: []*state.Version{env.Seed}}
	from := env.Seed
	for _, k := range t.Order() {
		a := &t.Atomic[k]
		run, err := env.Exec(ctx, from, 1, execCalls(a.Reference))
		if err != nil {
			return nil, err
		}
		for i, c := range run.Calls {
			rr.calls = append(rr.calls, refCall{Atomic: a.ID, Index: i, Call: c})
		}
		from = run.Final
		rr.after = append(rr.after, from)
	}
	return rr, nil
}

func execCalls(cs []task.Call) []tasks.ExecCall {
	out := make([]tasks.ExecCall, len(cs))
	for i, c := range cs {
		out[i] = tasks.ExecCall{Tool: c.Tool, Arguments: c.Arguments}
	}
	return out
}

// episode is one rollout of a task.
type episode struct {
	task      *task.Task
	seed      uint64
	faithful  bool // no faults: the reference as the policy
	plan      []scripted.PlannedStep
	passed    bool
	calls     int
	nonPolicy int
	run       *tasks.Run
	result    *verify.Result
	attrs     []attribute.Attribution
	refReport attribute.ReferenceReport
}

// script is a task's reference as the scripted policy's script: every
// reference call in DAG order, then a closing message stating every
// communicate text.
func script(t *task.Task) scripted.Script {
	var s scripted.Script
	var says []string
	for _, k := range t.Order() {
		a := &t.Atomic[k]
		for _, c := range a.Reference {
			s.Steps = append(s.Steps, scripted.Step{Tool: c.Tool, Arguments: c.Arguments})
		}
		for _, c := range a.Checks {
			if c.Kind == task.CheckCommunicate {
				says = append(says, c.Text)
			}
		}
	}
	for _, c := range t.Checks {
		if c.Kind == task.CheckCommunicate {
			says = append(says, c.Text)
		}
	}
	if len(says) > 0 {
		s.Steps = append(s.Steps, scripted.Step{Say: strings.Join(says, "; ")})
	} else {
		s.Steps = append(s.Steps, scripted.Step{Say: scripted.ClosingSay})
	}
	return s
}

func episodeSeed(policySeed uint64, round int, t *task.Task, i int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%d/%s/%d", policySeed, round, t.ID, i)
	return h.Sum64()
}

// rollout runs one episode of t: the plan's tool calls (a malformed call
// never reaches the tools: the harness refuses it) in one session from the
// seed, the agent relaying every successful output and saying the plan's
// messages; then verification and attribution of the failed checkpoints.
func (w *world) rollout(ctx context.Context, t *task.Task, faults scripted.Faults, seed uint64, faithful bool) (*episode, error) {
	env, err := w.resolve(t.Modules)
	if err != nil {
		return nil, err
	}
	pol, err := scripted.New(script(t), faults, seed)
	if err != nil {
		return nil, err
	}
	ep := &episode{task: t, seed: seed, faithful: faithful, plan: pol.Plan()}
	var calls []tasks.ExecCall
	var says []string
	for _, p := range ep.plan {
		switch {
		case p.Step.Tool == "":
			says = append(says, p.Step.Say)
		case p.Fault == scripted.FaultMalformedCall:
		default:
			calls = append(calls, tasks.ExecCall{Tool: p.Step.Tool, Arguments: p.Step.Arguments})
		}
	}
	run, err := env.Exec(ctx, env.Seed, seed, calls)
	if err != nil {
		return nil, err
	}
	ep.run = run
	rr, err := w.reference(ctx, t)
	if err != nil {
		return nil, err
	}
	msgs := run.Messages()
	for _, s := range says {
		msgs = append(msgs, verify.Message{Role: "assistant", Content: s})
	}
	versions := map[string]*state.Version{verify.Initial: env.Seed, verify.Final: run.Final, verify.Reference: rr.after[len(rr.after)-1]}
	for k, v := range rr.after {
		versions[verify.ReferenceAfter(k)] = v
	}
	ev := verify.NewStateEvidence(versions)
	ledger := run.Ledger()
	res, err := verify.Verify(ctx, verify.Input{Task: t, Ledger: ledger, Messages: msgs}, ev)
	if err != nil {
		return nil, fmt.Errorf("task %s: verify: %w", t.ID, err)
	}
	ep.result = res
	ep.passed = true
	for _, cp := range res.Checkpoints {
		if cp.Score < 1 {
			ep.passed = false
		}
	}
	for _, c := range rr.calls {
		rc := attribute.ReferenceCall{Atomic: c.Atomic, Index: c.Index, Tool: c.Call.Tool, IsError: c.Call.IsError, Output: c.Call.Output}
		if c.Call.Failure != "" {
			rc.ErrorKind = failure.Kind(c.Call.Failure)
		}
		if c.Call.Changed {
			rc.RowsChanged = 1
		}
		ep.refReport.Calls = append(ep.refReport.Calls, rc)
	}
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.Content
	}
	mods := map[string]string{}
	for _, name := range env.Tools() {
		mods[name] = t.Modules[0]
	}
	ep.attrs, err = attribute.Attribute(ctx, attribute.Input{Task: t, Result: res, Ledger: ledger, Reference: ep.refReport, Evidence: ev, Messages: texts, Modules: mods})
	if err != nil {
		return nil, err
	}
	ep.calls = len(run.Calls)
	for _, c := range run.Calls {
		if c.Failed() && isReferenceCall(t, c) {
			ep.nonPolicy++
		}
	}
	return ep, nil
}

// isReferenceCall reports whether c is a call of t's reference (same tool,
// JSON-equal arguments).
func isReferenceCall(t *task.Task, c tasks.Call) bool {
	for _, a := range t.Atomic {
		for _, r := range a.Reference {
			if r.Tool == c.Tool && jsonEqual(r.Arguments, c.Arguments) {
				return true
			}
		}
	}
	return false
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// measure certifies the active tasks, rolls out every task (the faithful
// episode and opts.Episodes with faults) and collects the findings.
func (w *world) measure(ctx context.Context, round int, opts *Options) (*Round, error) {
	w.policySeed = opts.PolicySeed
	rd := &Round{Round: round, Attributions: map[attribute.Class]int{}, Applied: map[attribute.Class]int{},
		RolledBack: map[attribute.Class]int{}, Discarded: map[attribute.Class]int{}, Regressed: []string{}}
	for _, c := range append([]attribute.Class{attribute.ClassPolicy}, Revisable...) {
		rd.Attributions[c] = 0
	}
	rep, err := w.certify(ctx, w.sys.Tasks)
	if err != nil {
		return nil, err
	}
	w.certified = map[string]bool{}
	w.results = map[string]tasks.TaskResult{}
	for _, r := range rep.Results {
		w.certified[r.ID] = r.Certified
		w.results[r.ID] = r
		if r.Certified {
			rd.Certified++
		}
	}
	rd.Tasks = len(w.sys.Tasks)
	w.faithful = map[string]bool{}
	for _, t := range w.sys.Tasks {
		ep, err := w.rollout(ctx, t, scripted.Faults{}, episodeSeed(opts.PolicySeed, 0, t, 0), true)
		if err != nil {
			return nil, err
		}
		w.faithful[t.ID] = ep.passed
		w.episodes = append(w.episodes, ep)
		for i := 0; i < opts.Episodes; i++ {
			ep, err := w.rollout(ctx, t, opts.Faults, episodeSeed(opts.PolicySeed, round, t, i+1), false)
			if err != nil {
				return nil, err
			}
			w.episodes = append(w.episodes, ep)
			rd.Episodes++
			if ep.passed {
				rd.Passed++
			}
			rd.ToolCalls += ep.calls
			rd.NonPolicyToolErrors += ep.nonPolicy
			for _, a := range ep.attrs {
				rd.Attributions[a.Class]++
			}
		}
	}
	rd.PassRate = report.RoundRate(rd.Passed, rd.Episodes)
	rd.ToolErrorRate = report.RoundRate(rd.NonPolicyToolErrors, rd.ToolCalls)
	if err := w.collect(ctx); err != nil {
		return nil, err
	}
	return rd, nil
}
