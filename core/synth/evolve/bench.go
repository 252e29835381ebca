package evolve

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// Defect kinds Plant plants.
const (
	DefectWrongPrecondition = "wrong_precondition" // environment: the tool refuses every call on an existing entity
	DefectMissingEffect     = "missing_effect"     // environment: the tool answers as if it wrote, and writes nothing
	DefectStaleBinding      = "stale_binding"      // task: an entity binding names an id the state does not have
	DefectContradictedCheck = "contradicted_check" // verifier: an sql check expects the value the reference changes
	DefectKeywordCheck      = "keyword_check"      // verifier: the only check is a keyword the agent says anyway
)

// Defect is one planted defect and where it is.
type Defect struct {
	ID     string          `json:"id"`
	Class  attribute.Class `json:"class"`
	Kind   string          `json:"kind"`
	Server string          `json:"server,omitempty"`
	Tool   string          `json:"tool,omitempty"`
	Task   string          `json:"task,omitempty"`
	Atomic string          `json:"atomic,omitempty"`
	Detail string          `json:"detail"`
	// original is the tool's function before planting (environment);
	// planted the planted check or binding value (task, verifier).
	original string
	planted  string
}

// Bench is a planted-defect benchmark: the system with the defects in it.
type Bench struct {
	System  *System
	Defects []Defect
}

// BenchOptions configures Plant.
type BenchOptions struct {
	// Servers is the number of servers synthesized from the docs, each
	// with its own seed rows (default 5); Name suffixes "_a", "_b", ...
	Servers int
	// Env, Task and Verifier are the defects planted per server of each
	// class (0: defaults 3, 2, 2; negative: none; the verifier's alternate contradicted and
	// keyword-only checks, the environment's wrong preconditions and
	// missing effects).
	Env, Task, Verifier int
	// Seed seeds task generation.
	Seed uint64
}

// Plant synthesizes opts.Servers servers from docs with the deterministic
// synthesizer, generates and certifies their atomic tasks (tasks.Generate),
// and plants defects: in tools (a wrong precondition: the function refuses
// with "conflict" before doing anything; a missing effect: the write
// replaced by a read of the same row), in task bindings (a stale id of the
// same shape that the state does not have) and in checks (an sql check
// expecting the value the reference changes; the checks replaced by a
// communicate check of the bound id, which the reads before the write
// already say). Tasks using a planted tool are not planted again. The same
// docs and options give the same benchmark.
func Plant(ctx context.Context, docs synth.Docs, opts BenchOptions) (*Bench, error) {
	if opts.Servers == 0 {
		opts.Servers = 5
	}
	for _, c := range []struct {
		n    *int
		dflt int
	}{{&opts.Env, 3}, {&opts.Task, 2}, {&opts.Verifier, 2}} {
		switch {
		case *c.n == 0:
			*c.n = c.dflt
		case *c.n < 0:
			*c.n = 0
		}
	}
	b := &Bench{System: &System{}}
	for i := 0; i < opts.Servers; i++ {
		d := docs
		d.Name = fmt.Sprintf("%s_%c", docs.Name, 'a'+i)
		s, err := (&synth.Deterministic{Seed: uint64(i)}).Synthesize(ctx, &synth.Request{Docs: d})
		if err != nil {
			return nil, err
		}
		s.Source = &spec.Source{Docs: d.Name, Synthesizer: "deterministic"}
		env, err := tasks.SpecEnv(ctx, moduleConfig, s)
		if err != nil {
			return nil, err
		}
		gen, err := tasks.Generate(ctx, env, []*spec.Server{s}, tasks.GenOptions{Seed: opts.Seed + uint64(i)})
		if err != nil {
			env.Store.Close()
			return nil, err
		}
		ts := gen.Tasks
		for _, t := range ts {
			t.ID = s.Name + ":" + t.ID
		}
		planted, defects, err := plantServer(ctx, env, s, ts, opts, len(b.Defects))
		env.Store.Close()
		if err != nil {
			return nil, err
		}
		b.System.Servers = append(b.System.Servers, &Server{Spec: planted, Docs: &d})
		b.System.Tasks = append(b.System.Tasks, ts...)
		b.Defects = append(b.Defects, defects...)
	}
	return b, nil
}

// writeTask is a generated task whose one atomic task writes: its tool
// (the reference's last call), its first binding and the reference diff.
type writeTask struct {
	t       *task.Task
	tool    string
	bindKey string
	bindVal string
	reads   int // reference calls before the write
	diff    *state.Changes
}

func plantServer(ctx context.Context, env *tasks.Env, s *spec.Server, ts []*task.Task, opts BenchOptions, n0 int) (*spec.Server, []Defect, error) {
	var writes []*writeTask
	for _, t := range ts {
		if len(t.Atomic) != 1 {
			continue
		}
		a := &t.Atomic[0]
		rr, err := replayReference(ctx, env, t)
		if err != nil {
			return nil, nil, err
		}
		d := state.Diff(rr.after[0], rr.after[1])
		if d.Empty() || len(a.Reference) == 0 {
			continue
		}
		wt := &writeTask{t: t, tool: a.Reference[len(a.Reference)-1].Tool, reads: len(a.Reference) - 1, diff: d}
		keys := make([]string, 0, len(a.Bindings))
		for k := range a.Bindings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if v := a.Bindings[k]; sameShapeable(v) {
				wt.bindKey, wt.bindVal = k, v
				break
			}
		}
		writes = append(writes, wt)
	}
	var defects []Defect
	id := func() string { return fmt.Sprintf("d%02d", n0+len(defects)+1) }
	out := *s
	// Environment: distinct write tools, in task order.
	bad := map[string]bool{}
	for _, wt := range writes {
		if len(bad) == opts.Env {
			break
		}
		if bad[wt.tool] {
			continue
		}
		a, e, ok := funcSpan(out.Program, wt.tool)
		if !ok {
			continue
		}
		fn := out.Program[a:e]
		kind := DefectWrongPrecondition
		var planted string
		if len(bad)%2 == 1 && (strings.Contains(fn, "return _update(") || strings.Contains(fn, "return _delete(")) {
			kind = DefectMissingEffect
			planted = strings.Replace(strings.Replace(fn, "return _update(", "return _noeffect_update(", 1), "return _delete(", "return _noeffect_delete(", 1)
		} else {
			i := strings.Index(fn, "    return ")
			if i < 0 {
				continue
			}
			planted = fn[:i] + fmt.Sprintf("    if _len(_a) > 0:\n        _err(\"conflict\", %q)\n", wt.tool+" is not allowed in this state") + fn[i:]
		}
		out.Program = out.Program[:a] + planted + out.Program[e:]
		bad[wt.tool] = true
		defects = append(defects, Defect{ID: id(), Class: attribute.ClassEnvironment, Kind: kind, Server: s.Name, Tool: wt.tool, original: fn,
			Detail: fmt.Sprintf("%s of %s planted in %s", kind, wt.tool, s.Name)})
	}
	out.Program += noEffectHelpers
	// Task and verifier defects on tasks whose tools are healthy.
	nTask, nVer := 0, 0
	for _, wt := range writes {
		if bad[wt.tool] {
			continue
		}
		a := &wt.t.Atomic[0]
		switch {
		case nTask < opts.Task && wt.bindVal != "":
			stale := strings.TrimRight(wt.bindVal, "0123456789") + "9" + wt.bindVal[len(strings.TrimRight(wt.bindVal, "0123456789")):] + "7"
			nt, err := rebind(wt.t, wt.bindVal, stale)
			if err != nil {
				return nil, nil, err
			}
			*wt.t = *nt
			nTask++
			defects = append(defects, Defect{ID: id(), Class: attribute.ClassTask, Kind: DefectStaleBinding, Server: s.Name, Task: wt.t.ID, Atomic: a.ID, planted: stale,
				Detail: fmt.Sprintf("binding %s %q replaced by %q, which the state does not have", wt.bindKey, wt.bindVal, stale)})
		case nVer < opts.Verifier && nVer%2 == 0:
			c, ok := contradicted(wt.diff)
			if !ok {
				continue
			}
			a.Checks = append([]task.Check{c}, a.Checks...)
			nVer++
			cj, _ := json.Marshal(c)
			defects = append(defects, Defect{ID: id(), Class: attribute.ClassVerifier, Kind: DefectContradictedCheck, Server: s.Name, Task: wt.t.ID, Atomic: a.ID, planted: string(cj),
				Detail: fmt.Sprintf("sql check %s expecting %s, the value before the reference's change", c.SQL, c.Expect)})
		case nVer < opts.Verifier && wt.bindVal != "" && wt.reads > 0:
			c := task.Check{Kind: task.CheckCommunicate, Text: wt.bindVal}
			a.Checks = []task.Check{c}
			nVer++
			cj, _ := json.Marshal(c)
			defects = append(defects, Defect{ID: id(), Class: attribute.ClassVerifier, Kind: DefectKeywordCheck, Server: s.Name, Task: wt.t.ID, Atomic: a.ID, planted: string(cj),
				Detail: fmt.Sprintf("the checks replaced by communicate %q, which the reads before the write already say", wt.bindVal)})
		}
	}
	return &out, defects, nil
}

// noEffectHelpers are the planted missing effects' stand-ins: the row read
// back as the write would have returned it, nothing written.
const noEffectHelpers = `
def _noeffect_update(e, a, keyprop, cols, refs, status):
    return _get(e, a, keyprop, refs)

def _noeffect_delete(e, a, keyprop, refs):
    return {"deleted": _get(e, a, keyprop, refs)}
`

func sameShapeable(v string) bool {
	p := strings.TrimRight(v, "0123456789")
	return len(p) >= 2 && p != v
}

// contradicted is an sql check on the first changed column (not a
// timestamp) of the diff that expects its old value.
func contradicted(d *state.Changes) (task.Check, bool) {
	for _, t := range d.Tables {
		if len(t.PrimaryKey) != 1 {
			continue
		}
		for _, r := range t.Changed {
			for _, c := range r.Columns {
				if strings.HasSuffix(c.Column, "_at") || c.Old == nil {
					continue
				}
				old, err := json.Marshal([][]any{{c.Old}})
				if err != nil {
					continue
				}
				if _, ok := c.Old.(string); !ok {
					continue
				}
				sql := fmt.Sprintf("SELECT `%s` FROM `%s` WHERE `%s` = %s", c.Column, t.Table, t.PrimaryKey[0], sqlLiteral(r.Key[0]))
				return task.Check{Kind: task.CheckSQL, SQL: sql, Expect: old, Note: "the changed column holds its new value"}, true
			}
		}
	}
	return task.Check{}, false
}

func sqlLiteral(v any) string {
	if s, ok := v.(string); ok {
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	}
	return fmt.Sprint(v)
}

// Score is the benchmark's figures after each revising round.
type Score struct {
	Defects int `json:"defects"`
	// ByClass counts the planted defects per class.
	ByClass map[attribute.Class]int `json:"by_class"`
	Rounds  []RoundScore            `json:"rounds"`
}

// RoundScore is the state of the defects after one round (cumulative).
type RoundScore struct {
	Round int `json:"round"`
	// Found: defects a revision (any status) targeted so far; Fixed:
	// defects no longer in the system after the round. Per class.
	Found map[attribute.Class]int `json:"found"`
	Fixed map[attribute.Class]int `json:"fixed"`
	// FixedShare is the share of all planted defects fixed.
	FixedShare float64 `json:"fixed_share"`
	// Applied revisions so far, those that targeted a planted defect, and
	// their ratio (revision precision; null when none applied).
	Applied   int      `json:"applied"`
	OnTarget  int      `json:"on_target"`
	Precision *float64 `json:"precision"`
	// Regressed: tasks that got worse in the round (Round.Regressed).
	Regressed     int     `json:"regressed"`
	ToolErrorRate float64 `json:"non_policy_tool_error_rate"`
}

// Score scores res against the benchmark's defects (res.Snapshots gives
// the system after each round).
func (b *Bench) Score(res *Result) *Score {
	sc := &Score{Defects: len(b.Defects), ByClass: map[attribute.Class]int{}}
	for _, d := range b.Defects {
		sc.ByClass[d.Class]++
	}
	applied, onTarget := 0, 0
	found := map[string]bool{}
	for i, snap := range res.Snapshots {
		round := i + 1
		rs := RoundScore{Round: round, Found: map[attribute.Class]int{}, Fixed: map[attribute.Class]int{}}
		for _, v := range res.Revisions {
			if v.Round != round {
				continue
			}
			hit := false
			for _, d := range b.Defects {
				if d.targets(v.Component) {
					found[d.ID] = true
					hit = true
				}
			}
			if v.Status == StatusApplied {
				applied++
				if hit {
					onTarget++
				}
			}
		}
		fixed := 0
		for _, d := range b.Defects {
			if found[d.ID] {
				rs.Found[d.Class]++
			}
			if d.fixedIn(snap) {
				rs.Fixed[d.Class]++
				fixed++
			}
		}
		rs.FixedShare = float64(fixed) / float64(len(b.Defects))
		rs.Applied, rs.OnTarget = applied, onTarget
		if applied > 0 {
			p := float64(onTarget) / float64(applied)
			rs.Precision = &p
		}
		if i+1 < len(res.Rounds) {
			rs.Regressed = len(res.Rounds[i+1].Regressed)
			rs.ToolErrorRate = report.RateOr0(res.Rounds[i+1].ToolErrorRate)
		}
		sc.Rounds = append(sc.Rounds, rs)
	}
	return sc
}

// targets reports whether a revision's component is the defect's.
func (d *Defect) targets(comp string) bool {
	if d.Class == attribute.ClassEnvironment {
		return comp == "server:"+d.Server+"/tool:"+d.Tool
	}
	return strings.HasPrefix(comp, "task:"+d.Task+"/atomic:"+d.Atomic)
}

// fixedIn reports whether the defect is gone from sys: the tool's function
// is the one synthesized from the docs again; the task (still active) no
// longer holds the stale value or the planted check.
func (d *Defect) fixedIn(sys *System) bool {
	if d.Class == attribute.ClassEnvironment {
		_, s := serverOf(sys, d.Server)
		if s == nil {
			return false
		}
		a, e, ok := funcSpan(s.Spec.Program, d.Tool)
		return ok && s.Spec.Program[a:e] == d.original
	}
	t := activeTask(sys, d.Task)
	if t == nil {
		return false
	}
	for _, a := range t.Atomic {
		if a.ID != d.Atomic {
			continue
		}
		if d.Class == attribute.ClassTask {
			b, _ := json.Marshal(a)
			return replaceToken(string(b), d.planted, "") == string(b)
		}
		for _, c := range a.Checks {
			cj, _ := json.Marshal(c)
			if string(cj) == d.planted {
				return false
			}
		}
		return true
	}
	return false
}
