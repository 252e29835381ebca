package evolve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/spec"
)

// revise tries a revision for each finding, in order, within the budget.
// It returns the revisions tried and the number of findings no revision
// fixed.
func (w *world) revise(ctx context.Context, round int, opts *Options, cur *System, res *Result) ([]Revision, int, error) {
	out := []Revision{}
	tried, unrevised := 0, 0
	for _, f := range w.findings {
		t := activeTask(cur, f.task.ID)
		if t == nil || t != f.task {
			continue // dropped or revised by an earlier finding of the round
		}
		// Is the symptom reproduced by the current system? An earlier
		// revision of the round (a tool two tasks share) may have fixed
		// it; an attribution the reference does not reproduce is left.
		rep, err := w.certify(ctx, []*task.Task{t})
		if err != nil {
			return nil, 0, err
		}
		if rep.Results[0].Certified {
			if !f.sources["certification"] {
				unrevised++
			}
			continue
		}
		handled := false
		for _, cl := range routes[f.kind] {
			if !opts.allowed(cl) {
				continue
			}
			if opts.Budget > 0 && tried >= opts.Budget {
				break
			}
			var rev *Revision
			switch cl {
			case attribute.ClassEnvironment:
				rev, err = w.reviseEnv(ctx, f, round, opts, cur)
			case attribute.ClassTask:
				rev, err = w.reviseTask(ctx, f, round, cur, res)
			case attribute.ClassVerifier:
				rev, err = w.reviseVerifier(ctx, f, round, cur, res)
			}
			if err != nil {
				return nil, 0, err
			}
			if rev == nil {
				continue // no candidate of this class
			}
			tried++
			rev.Round, rev.Class, rev.Source = round, cl, f.source()
			if rev.Tasks == nil {
				rev.Tasks = []string{f.task.ID}
			}
			if rev.Evidence == "" {
				rev.Evidence = strings.Join(f.evidence, " | ")
			}
			out = append(out, *rev)
			if rev.Status == StatusApplied {
				handled = true
				break
			}
		}
		if !handled {
			unrevised++
		}
	}
	return out, unrevised, nil
}

func activeTask(sys *System, id string) *task.Task {
	for _, t := range sys.Tasks {
		if t.ID == id {
			return t
		}
	}
	return nil
}

func serverOf(sys *System, name string) (int, *Server) {
	for i, s := range sys.Servers {
		if s.Spec.Name == name {
			return i, s
		}
	}
	return -1, nil
}

// replaceTask puts nt in t's place in sys (nil nt: drops it).
func replaceTask(sys *System, t, nt *task.Task) {
	for i, x := range sys.Tasks {
		if x == t {
			if nt == nil {
				sys.Tasks = append(sys.Tasks[:i:i], sys.Tasks[i+1:]...)
			} else {
				sys.Tasks[i] = nt
			}
			return
		}
	}
}

// ---- environment ----

// reviseEnv re-synthesizes the tool of the finding's failing (or
// effect-less) reference call: the call, its error and its state diff go to
// the synthesizer as a validation finding whose code the enum names
// (unexpected_error, call_failed, no_effect), and the tool's function of the
// answer replaces the current one. No candidate (nil) when the server has no
// documentation, the finding has no call, or the answer's function equals
// the current one (the synthesizer agrees with the tool).
func (w *world) reviseEnv(ctx context.Context, f *finding, round int, opts *Options, cur *System) (*Revision, error) {
	if f.call < 0 {
		return nil, nil
	}
	si, srv := serverOf(cur, f.task.Modules[0])
	if srv == nil || srv.Docs == nil {
		return nil, nil
	}
	rr, err := w.reference(ctx, f.task)
	if err != nil {
		return nil, err
	}
	if f.call >= len(rr.calls) {
		return nil, nil
	}
	c := rr.calls[f.call]
	tool := c.Call.Tool
	if srv.Spec.Tool(tool) == nil {
		return nil, nil
	}
	fd := feedback(f, c, rr)
	comp := "server:" + srv.Spec.Name + "/tool:" + tool
	rev := &Revision{Component: comp, Action: ActionResynthesized, From: programDigest(srv.Spec),
		Evidence: fmt.Sprintf("%s (finding %s: %s)", fd.Message, fd.Code, strings.Join(f.evidence, " | "))}
	ans, err := opts.Synthesizer.Synthesize(ctx, &synth.Request{Docs: *srv.Docs, Round: 1, Previous: srv.Spec, Findings: []synth.Finding{fd}})
	if err != nil {
		var ae *synth.AnswerError
		if errors.As(err, &ae) || ctx.Err() == nil {
			rev.Status, rev.Detail = StatusDiscarded, "the synthesizer gave no usable server: "+err.Error()
			return rev, nil
		}
		return nil, err
	}
	prog, ok := splice(srv.Spec.Program, ans.Program, tool)
	if !ok {
		rev.Status, rev.Detail = StatusDiscarded, fmt.Sprintf("the %s synthesizer's answer has no function %s to take", opts.Synthesizer.Name(), tool)
		return rev, nil
	}
	if prog == srv.Spec.Program {
		return nil, nil
	}
	cand := *srv.Spec
	cand.Program = prog
	cand.Source = &spec.Source{Synthesizer: opts.Synthesizer.Name(), Rounds: round}
	if srv.Spec.Source != nil {
		cand.Source.Docs = srv.Spec.Source.Docs
	}
	rev.To = programDigest(&cand)
	cand.Version = bumpVersion(srv.Spec.Version, rev.To)
	candEnv, err := tasks.SpecEnv(ctx, moduleConfig, &cand)
	if err != nil {
		rev.Status, rev.Detail = StatusDiscarded, "the revised server does not load: "+err.Error()
		return rev, nil
	}
	keep := false
	defer func() {
		if !keep {
			candEnv.Store.Close()
		}
	}()
	rc, err := replayReference(ctx, candEnv, f.task)
	if err != nil {
		return nil, err
	}
	after := rc.calls[f.call].Call
	fixed := !after.Failed() && (f.kind != kindNoEffect || after.Changed)
	if !fixed {
		rev.Status, rev.Detail = StatusDiscarded, fmt.Sprintf("the re-synthesized %s still fails the same call: %s", tool, clip(after.Output, 200))
		return rev, nil
	}
	// Regressions among the server's tasks.
	tw := &world{sys: cur, envs: map[string]*tasks.Env{}, refs: map[string]*refRun{}, policySeed: w.policySeed}
	for k, e := range w.envs {
		tw.envs[k] = e
	}
	tw.envs[srv.Spec.Name] = candEnv
	var mine []*task.Task
	for _, t := range cur.Tasks {
		if t.Modules[0] == srv.Spec.Name {
			mine = append(mine, t)
		}
	}
	worse, certNow, faithNow, err := tw.regressions(ctx, w, mine)
	if err != nil {
		return nil, err
	}
	if len(worse) > 0 {
		rev.Status = StatusRolledBack
		rev.Detail = fmt.Sprintf("re-synthesized %s fixes the call but makes things worse for %s; the old version stays", tool, strings.Join(worse, ", "))
		return rev, nil
	}
	keep = true
	w.envs[srv.Spec.Name].Store.Close()
	w.envs[srv.Spec.Name] = candEnv
	w.refs = map[string]*refRun{}
	for id, ok := range certNow {
		w.certified[id] = ok
	}
	for id, ok := range faithNow {
		w.faithful[id] = ok
	}
	cur.Servers[si] = &Server{Spec: &cand, Docs: srv.Docs}
	rev.Status = StatusApplied
	rev.Detail = fmt.Sprintf("%s re-synthesized by the %s synthesizer; the call now succeeds%s; server version %s -> %s",
		tool, opts.Synthesizer.Name(), map[bool]string{true: " and changes the state", false: ""}[f.kind == kindNoEffect], srv.Spec.Version, cand.Version)
	return rev, nil
}

// regressions certifies ts and runs their faithful episodes on w and
// returns the tasks that got worse than in base (certified or faithful
// episode passing there, not here), with the new figures.
func (w *world) regressions(ctx context.Context, base *world, ts []*task.Task) ([]string, map[string]bool, map[string]bool, error) {
	rep, err := w.certify(ctx, ts)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, faith := map[string]bool{}, map[string]bool{}
	var worse []string
	for i, t := range ts {
		cert[t.ID] = rep.Results[i].Certified
		ep, err := w.rollout(ctx, t, scripted.Faults{}, episodeSeed(w.policySeed, 0, t, 0), true)
		if err != nil {
			return nil, nil, nil, err
		}
		faith[t.ID] = ep.passed
		if (base.certified[t.ID] && !cert[t.ID]) || (base.faithful[t.ID] && !faith[t.ID]) {
			worse = append(worse, t.ID)
		}
	}
	return worse, cert, faith, nil
}

// feedback is the synthesizer's finding for a failing reference call: the
// call (name, arguments, result), the state diff of the reference up to it,
// and the code the validation enum has for the symptom.
func feedback(f *finding, c refCall, rr *refRun) synth.Finding {
	call, _ := json.Marshal(map[string]any{"name": c.Call.Tool, "arguments": c.Call.Arguments, "result": c.Call.Output})
	fd := synth.Finding{Stage: synth.StageNormal, Code: synth.CodeUnexpectedError, Tool: c.Call.Tool, Call: call}
	switch {
	case f.kind == kindNoEffect:
		fd.Stage, fd.Code = synth.StageDiff, synth.CodeNoEffect
		fd.Message = fmt.Sprintf("%s succeeded on a seed entity and changed nothing (a state-changing tool)", c.Call.Tool)
	case failure.Kind(c.Call.Failure).InModule():
		fd.Code = synth.CodeCallFailed
		fd.Message = fmt.Sprintf("%s failed inside the server (%s): %s", c.Call.Tool, c.Call.Failure, clip(c.Call.Output, 200))
	default:
		fd.Message = fmt.Sprintf("%s answered a valid reference call with a tool error: %s", c.Call.Tool, clip(c.Call.Output, 200))
	}
	// The state diff of the reference before the call's atomic task (what
	// the call saw).
	pos, seen := 0, ""
	for _, x := range rr.calls {
		if x.Atomic == seen {
			continue
		}
		if x.Atomic == c.Atomic {
			break
		}
		seen = x.Atomic
		pos++
	}
	if d := state.Diff(rr.after[0], rr.after[pos]); d != nil && !d.Empty() {
		fd.Diff, _ = json.Marshal(d)
	}
	return fd
}

// splice returns prog with tool's function replaced by the one in from
// (false when either program has no such function).
func splice(prog, from, tool string) (string, bool) {
	a, b, ok := funcSpan(prog, tool)
	if !ok {
		return "", false
	}
	c, d, ok := funcSpan(from, tool)
	if !ok {
		return "", false
	}
	return prog[:a] + from[c:d] + prog[b:], true
}

// funcSpan returns the byte span of the top-level Starlark function name
// in prog: from "def name(" to the next line at column 0 that is not
// blank (or the end).
func funcSpan(prog, name string) (int, int, bool) {
	head := "def " + name + "("
	start := -1
	if strings.HasPrefix(prog, head) {
		start = 0
	} else if i := strings.Index(prog, "\n"+head); i >= 0 {
		start = i + 1
	}
	if start < 0 {
		return 0, 0, false
	}
	end := len(prog)
	off := start + len(head)
	for {
		i := strings.IndexByte(prog[off:], '\n')
		if i < 0 {
			break
		}
		line := off + i + 1
		if line < len(prog) && prog[line] != ' ' && prog[line] != '\t' && prog[line] != '\n' && prog[line] != '#' {
			end = line
			break
		}
		off = line
	}
	// Keep trailing blank lines with the rest of the program.
	for end > start && end-1 > start && prog[end-1] == '\n' && prog[end-2] == '\n' {
		end--
	}
	return start, end, true
}

// bumpVersion is the version of a revised server: the base version with
// "+evolve." and the first 12 hex digits of the new program digest.
func bumpVersion(v, digest string) string {
	if i := strings.Index(v, "+evolve."); i >= 0 {
		v = v[:i]
	}
	if v == "" {
		v = "0"
	}
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return v + "+evolve." + d
}

// ---- task ----

// reviseTask rebinds the finding's atomic task: for each binding value of
// it (sorted by binding key) and each value of the seed state of the same
// shape (the same prefix before a trailing number), a new task version with
// the value replaced everywhere in the task; the first that certifies is
// applied. When none does, the task is dropped with its reason.
func (w *world) reviseTask(ctx context.Context, f *finding, round int, cur *System, res *Result) (*Revision, error) {
	t := f.task
	comp := "task:" + t.ID + "/atomic:" + f.atomic
	env, err := w.resolve(t.Modules)
	if err != nil {
		return nil, err
	}
	vals, err := stateStrings(env.Seed)
	if err != nil {
		return nil, err
	}
	var a *task.Atomic
	for i := range t.Atomic {
		if t.Atomic[i].ID == f.atomic {
			a = &t.Atomic[i]
		}
	}
	tried := 0
	if a != nil {
		keys := make([]string, 0, len(a.Bindings))
		for k := range a.Bindings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := a.Bindings[k]
			for _, c := range sameShape(vals, v, 8) {
				tried++
				nt, err := newVersion(t, round, attribute.ClassTask, fmt.Sprintf("binding %s rebound %q -> %q: %s", k, v, c, strings.Join(f.evidence, " | ")))
				if err != nil {
					return nil, err
				}
				if nt, err = rebind(nt, v, c); err != nil {
					return nil, err
				}
				// The failing call first (cheap): certify only a
				// rebinding whose reference gets past it.
				if f.call >= 0 {
					rr, err := replayReference(ctx, env, nt)
					if err != nil {
						return nil, err
					}
					if f.call < len(rr.calls) && rr.calls[f.call].Call.Failed() {
						continue
					}
				}
				ok, _, err := w.adopt(ctx, cur, res, t, nt)
				if err != nil {
					return nil, err
				}
				if ok {
					return &Revision{Component: comp, Action: ActionRebound, Status: StatusApplied, From: taskRef(t), To: taskRef(nt),
						Detail: fmt.Sprintf("binding %s rebound from %q to %q (the first same-shaped value of the seed state that certifies; %d tried)", k, v, c, tried)}, nil
				}
			}
		}
	}
	why := fmt.Sprintf("dropped: %s; no rebinding certifies (%d tried)", strings.Join(f.evidence, " | "), tried)
	nt, err := newVersion(t, round, attribute.ClassTask, why)
	if err != nil {
		return nil, err
	}
	nt.Meta["dropped"] = why
	replaceTask(cur, t, nil)
	res.History = append(res.History, nt)
	res.Dropped[t.ID] = why
	delete(w.certified, t.ID)
	delete(w.faithful, t.ID)
	return &Revision{Component: comp, Action: ActionDropped, Status: StatusApplied, From: taskRef(t), To: taskRef(nt), Detail: why}, nil
}

// adopt certifies nt, the new version of t, and when it certifies puts it
// in t's place in cur and in the history.
func (w *world) adopt(ctx context.Context, cur *System, res *Result, t, nt *task.Task) (bool, *tasks.Report, error) {
	rep, err := w.certify(ctx, []*task.Task{nt})
	if err != nil || !rep.Results[0].Certified {
		return false, rep, err
	}
	replaceTask(cur, t, nt)
	res.History = append(res.History, nt)
	w.certified[t.ID] = true
	return true, rep, nil
}

// stateStrings returns every string value of v's tables (JSON text in a
// cell walked to its string leaves).
func stateStrings(v *state.Version) (map[string]bool, error) {
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		return nil, err
	}
	var doc any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		return nil, err
	}
	out := map[string]bool{}
	var walk func(x any)
	walk = func(x any) {
		switch y := x.(type) {
		case string:
			out[y] = true
			if s := strings.TrimSpace(y); len(s) > 1 && (s[0] == '{' || s[0] == '[') {
				var j any
				if json.Unmarshal([]byte(s), &j) == nil {
					walk(j)
				}
			}
		case []any:
			for _, z := range y {
				walk(z)
			}
		case map[string]any:
			for _, z := range y {
				walk(z)
			}
		}
	}
	walk(doc)
	return out, nil
}

// sameShape returns up to n values of vals other than v with v's prefix
// before its trailing digits followed by digits only, shortest first then
// in order.
func sameShape(vals map[string]bool, v string, n int) []string {
	prefix := strings.TrimRight(v, "0123456789")
	if len(prefix) < 2 || prefix == v {
		return nil
	}
	var out []string
	for s := range vals {
		if s == v || !strings.HasPrefix(s, prefix) || len(s) == len(prefix) || strings.TrimLeft(s[len(prefix):], "0123456789") != "" {
			continue
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return out[i] < out[j]
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// rebind replaces every whole-token occurrence of v in the task's JSON by c.
func rebind(t *task.Task, v, c string) (*task.Task, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	s := replaceToken(string(b), v, c)
	var nt task.Task
	if err := json.Unmarshal([]byte(s), &nt); err != nil {
		return nil, err
	}
	return &nt, nil
}

func isWord(b byte) bool {
	return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// replaceToken replaces the occurrences of v in s not preceded or followed
// by a letter, digit or underscore.
func replaceToken(s, v, c string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, v)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(v)
		if (i > 0 && isWord(s[i-1])) || (j < len(s) && isWord(s[j])) {
			b.WriteString(s[:j])
		} else {
			b.WriteString(s[:i])
			b.WriteString(c)
		}
		s = s[j:]
	}
}

// ---- verifier ----

// reviseVerifier regenerates the finding's check from the reference's
// observed effect: an sql check gets the rows its query returns on the
// reference's state after the atomic task; any other contradicted check,
// and a weak checkpoint (passing on the initial state or with a step
// dropped), gets a changed_rows check over the reference's diff. The new
// task version must certify (pass on the reference, fail on the initial
// state and with each state-changing step dropped). No candidate when the
// reference changes nothing.
func (w *world) reviseVerifier(ctx context.Context, f *finding, round int, cur *System, res *Result) (*Revision, error) {
	t := f.task
	k, ai := 0, -1
	for n, i := range t.Order() {
		if t.Atomic[i].ID == f.atomic {
			k, ai = n+1, i
		}
	}
	if ai < 0 {
		return nil, nil
	}
	rr, err := w.reference(ctx, t)
	if err != nil {
		return nil, err
	}
	if rr.after[k-1].Hash() == rr.after[k].Hash() {
		return nil, nil
	}
	a := &t.Atomic[ai]
	comp := "task:" + t.ID + "/atomic:" + f.atomic
	type cand struct {
		checks []task.Check
		what   string
	}
	changed := task.Check{Kind: task.CheckChangedRows, Note: fmt.Sprintf("regenerated from the reference's diff (evolve round %d)", round)}
	var cands []cand
	if f.kind == kindCheckFails && f.check >= 0 && f.check < len(a.Checks) {
		comp += fmt.Sprintf("/check:%d", f.check)
		old := a.Checks[f.check]
		if old.Kind == task.CheckSQL {
			ev := verify.NewStateEvidence(map[string]*state.Version{"ref": rr.after[k]})
			if _, rows, err := ev.Query(ctx, "ref", old.SQL); err == nil {
				if rows == nil {
					rows = [][]any{}
				}
				exp, err := json.Marshal(rows)
				if err != nil {
					return nil, err
				}
				nc := old
				nc.Expect, nc.Note = exp, fmt.Sprintf("expect regenerated from the reference's state (evolve round %d)", round)
				cs := append([]task.Check(nil), a.Checks...)
				cs[f.check] = nc
				cands = append(cands, cand{cs, fmt.Sprintf("sql check %d's expect %s -> %s (its query on the reference's state)", f.check, compactJSON(old.Expect), exp)})
			}
		}
		cs := append([]task.Check(nil), a.Checks...)
		cs[f.check] = changed
		cands = append(cands, cand{cs, fmt.Sprintf("%s check %d replaced by changed_rows (the reference's diff)", old.Kind, f.check)})
	} else {
		var cs []task.Check
		var weak []string
		for _, c := range a.Checks {
			if c.Kind == task.CheckCommunicate || c.Kind == task.CheckRequiredCall {
				weak = append(weak, c.Kind)
				continue
			}
			cs = append(cs, c)
		}
		cs = append(cs, changed)
		cands = append(cands, cand{cs, fmt.Sprintf("checks that only match words or calls (%s) replaced by changed_rows (the reference's diff)", strings.Join(weak, ", "))})
	}
	var last string
	for _, c := range cands {
		nt, err := newVersion(t, round, attribute.ClassVerifier, c.what+": "+strings.Join(f.evidence, " | "))
		if err != nil {
			return nil, err
		}
		nt.Atomic[ai].Checks = c.checks
		ok, rep, err := w.adopt(ctx, cur, res, t, nt)
		if err != nil {
			return nil, err
		}
		if ok {
			return &Revision{Component: comp, Action: ActionRegenerated, Status: StatusApplied, From: taskRef(t), To: taskRef(nt), Detail: c.what + "; re-certified"}, nil
		}
		last = c.what
		if rj := rep.Rejections(); len(rj) > 0 {
			last += "; still rejected: " + string(rj[0].Reason) + ": " + rj[0].Detail
		}
	}
	return &Revision{Component: comp, Action: ActionRegenerated, Status: StatusDiscarded, From: taskRef(t), Detail: last}, nil
}

func compactJSON(b json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return string(b)
	}
	return buf.String()
}
