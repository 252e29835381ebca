package tasks

import (
	"context"

	"github.com/weft-dev/weft/core/task"
)

// Tau2Tools returns the Env's tools as a tau2 tool set (tool -> read-only,
// from the manifests' readOnlyHint), for task.Tau2Options.Tools.
func (e *Env) Tau2Tools() task.Tau2Tools {
	out := task.Tau2Tools{}
	for _, n := range e.names {
		out[n] = e.readOnly[n]
	}
	return out
}

// Tau2Replay returns a task.Tau2Options.Replay that runs a tau2 task's
// gold actions in order on a fresh fork of the Env's seed (session seed
// 1), as plugins/host.GoldReplay does on a MegaMCP session: a call that
// fails (tool error, refused arguments, unknown tool) is a failed action
// with its text as the reason.
func (e *Env) Tau2Replay(ctx context.Context) func(*task.Tau2Task, []task.Call) ([]task.ActionOutcome, error) {
	return func(_ *task.Tau2Task, calls []task.Call) ([]task.ActionOutcome, error) {
		run, err := e.Exec(ctx, e.Seed, 1, execCalls(calls))
		if err != nil {
			return nil, err
		}
		out := make([]task.ActionOutcome, len(run.Calls))
		for i, c := range run.Calls {
			if c.Failed() {
				out[i] = task.ActionOutcome{Failed: true, Reason: c.Output}
			}
		}
		return out, nil
	}
}

// ConvertTau2 converts a tau2-bench tasks file against the Env (its tools'
// read-only flags, its gold replay), with modules as the tasks' Modules and
// source as their Source prefix (task.FromTau2).
func (e *Env) ConvertTau2(ctx context.Context, path string, modules []string, source string) ([]*task.Task, error) {
	return task.ConvertTau2File(path, task.Tau2Options{Modules: modules, Tools: e.Tau2Tools(), Source: source, Replay: e.Tau2Replay(ctx)})
}
