package evolve

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
)

// Kinds of finding: the symptom, which decides the classes tried in turn.
const (
	// kindCallFailed: a reference call fails (environment, then task).
	kindCallFailed = "call_failed"
	// kindNoEffect: a reference call of a state-changing tool succeeds
	// and changes nothing (environment, then task).
	kindNoEffect = "no_effect"
	// kindCheckFails: a check fails on the reference or is contradicted
	// by an episode's evidence (verifier).
	kindCheckFails = "check_fails"
	// kindWeakCheck: the checkpoint passes on the initial state or with a
	// step dropped (verifier, then task).
	kindWeakCheck = "weak_check"
	// kindBinding: a binding names nothing in the state (task).
	kindBinding = "binding"
)

// routes are the classes tried for each kind, in order.
var routes = map[string][]attribute.Class{
	kindCallFailed: {attribute.ClassEnvironment, attribute.ClassTask},
	kindNoEffect:   {attribute.ClassEnvironment, attribute.ClassTask},
	kindCheckFails: {attribute.ClassVerifier},
	kindWeakCheck:  {attribute.ClassVerifier, attribute.ClassTask},
	kindBinding:    {attribute.ClassTask},
}

// finding is one non-policy symptom of an atomic task.
type finding struct {
	task   *task.Task
	atomic string
	kind   string
	// sources: "certification", "attribution".
	sources map[string]bool
	// call is the whole-reference index of the failing or effect-less
	// call (-1: none); check the index of the failing check (-1: none).
	call     int
	check    int
	evidence []string
	// classes the attributions named (for the report).
	attributed map[attribute.Class]int
}

func (f *finding) source() string {
	var s []string
	for k := range f.sources {
		s = append(s, k)
	}
	sort.Strings(s)
	return strings.Join(s, "+")
}

func (f *finding) key() string { return f.task.ID + "/" + f.atomic + "/" + f.kind }

// collect turns the certification rejections and the non-policy
// attributions of the round into findings, one per atomic task and kind,
// in task order.
func (w *world) collect(ctx context.Context) error {
	by := map[string]*finding{}
	var order []string
	add := func(t *task.Task, atomic, kind, source, ev string, call, check int) *finding {
		f := &finding{task: t, atomic: atomic, kind: kind, sources: map[string]bool{}, call: call, check: check, attributed: map[attribute.Class]int{}}
		if g, ok := by[f.key()]; ok {
			f = g
		} else {
			by[f.key()] = f
			order = append(order, f.key())
		}
		f.sources[source] = true
		if ev != "" && len(f.evidence) < 3 {
			f.evidence = append(f.evidence, ev)
		}
		if f.call < 0 {
			f.call = call
		}
		if f.check < 0 {
			f.check = check
		}
		return f
	}
	for _, t := range w.sys.Tasks {
		tr := w.results[t.ID]
		rr, err := w.reference(ctx, t)
		if err != nil {
			return err
		}
		env, _ := w.resolve(t.Modules)
		for _, a := range tr.Atomic {
			for _, rj := range a.Rejections {
				ev := fmt.Sprintf("certification: %s: %s", rj.Reason, rj.Detail)
				switch rj.Reason {
				case tasks.ReasonReferenceFailed:
					add(t, a.ID, kindCallFailed, "certification", ev, rj.Call.TaskIndex, -1)
				case tasks.ReasonFailsOnReference:
					add(t, a.ID, kindCheckFails, "certification", ev, -1, *rj.Check)
				case tasks.ReasonPassesOnInitial, tasks.ReasonDroppedStepUnnoticed, tasks.ReasonReadOnlyUnverifiable:
					if i, ok := noEffectCall(env, rr, a.ID); ok {
						add(t, a.ID, kindNoEffect, "certification", ev+fmt.Sprintf("; reference call %d (%s) of a state-changing tool succeeded and changed nothing", i, rr.calls[i].Call.Tool), i, -1)
					} else {
						add(t, a.ID, kindWeakCheck, "certification", ev, -1, -1)
					}
				case tasks.ReasonBindingNotFound:
					add(t, a.ID, kindBinding, "certification", ev, -1, -1)
				}
			}
		}
	}
	for _, ep := range w.episodes {
		for _, at := range ep.attrs {
			if at.Class == attribute.ClassPolicy {
				continue
			}
			atomic := at.Checkpoint
			ev := fmt.Sprintf("attribution (%s, episode seed %d): %s", at.Class, ep.seed, clip(at.Evidence, 300))
			var f *finding
			switch at.Class {
			case attribute.ClassEnvironment, attribute.ClassTask:
				f = add(ep.task, atomic, kindCallFailed, "attribution", ev, firstFailedReference(ep, atomic), -1)
			case attribute.ClassVerifier:
				f = add(ep.task, atomic, kindCheckFails, "attribution", ev, -1, firstFailedCheck(ep, atomic))
			}
			if f != nil {
				f.attributed[at.Class]++
			}
		}
	}
	w.findings = nil
	for _, k := range order {
		w.findings = append(w.findings, by[k])
	}
	return nil
}

// noEffectCall returns the whole-reference index of the first call of
// atomic that is to a tool not declared read-only, succeeded and changed
// nothing.
func noEffectCall(env *tasks.Env, rr *refRun, atomic string) (int, bool) {
	for i, c := range rr.calls {
		if c.Atomic != atomic || c.Call.Failed() || c.Call.Changed {
			continue
		}
		if ro, ok := env.ReadOnly(c.Call.Tool); ok && !ro {
			return i, true
		}
	}
	return -1, false
}

func firstFailedReference(ep *episode, atomic string) int {
	for i, c := range ep.refReport.Calls {
		if (atomic == "overall" || c.Atomic == atomic) && (c.IsError || c.ErrorKind != "") {
			return i
		}
	}
	return -1
}

func firstFailedCheck(ep *episode, atomic string) int {
	for _, cp := range ep.result.Checkpoints {
		if cp.Name != atomic {
			continue
		}
		for i, c := range cp.Checks {
			if !c.Passed {
				return i
			}
		}
	}
	return -1
}
