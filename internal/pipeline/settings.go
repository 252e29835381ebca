package pipeline

import (
	"fmt"
	"path/filepath"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
)

// settingsOf states cfg's experiment settings for metrics.json and the
// report: the rollout policy in plain terms (the scripted fault injector
// with its rates, or the endpoint model), the mix, the verifier's basis and
// judge, and the tasks' failed gold actions (task.FailedActions).
func settingsOf(cfg *config.Config, tasks []*task.Task) *report.Settings {
	s := &report.Settings{Config: filepath.Base(cfg.File), Stages: append([]string{}, cfg.Stages...), Tasks: len(tasks),
		EpisodesPerTask: cfg.Rollout.EpisodesPerTask, Seed: cfg.Rollout.Seed, Mix: []report.MixSetting{},
		Verifier: pluginName(cfg.Verifier), Basis: task.BasisWeft, Judge: cfg.Verifier.Judge,
		Attributor: pluginName(cfg.Attributor), FailedGoldActions: []report.TaskFailedActions{}}
	if cfg.Verifier.Basis != "" {
		s.Basis = cfg.Verifier.Basis
	}
	for _, p := range cfg.Policies {
		if p.Name != cfg.Rollout.Policy {
			continue
		}
		s.Policy.Name = p.Name
		switch {
		case p.Scripted != nil:
			f := p.Scripted.Faults
			s.Policy.Kind, s.Policy.FaultSeed = "scripted", p.Scripted.Seed
			s.Policy.Faults = map[string]float64{"wrong_argument": f.WrongArgument, "skip_step": f.SkipStep, "extra_call": f.ExtraCall,
				"hallucinated_tool": f.HallucinatedTool, "malformed_call": f.MalformedCall, "early_stop": f.EarlyStop}
		case p.Endpoint != nil:
			s.Policy.Kind, s.Policy.Model, s.Policy.BaseURL = "endpoint", p.Endpoint.Model, p.Endpoint.BaseURL
		}
	}
	for _, e := range cfg.Mix {
		s.Mix = append(s.Mix, report.MixSetting{View: e.View, Harness: e.Harness, Weight: e.Weight})
	}
	for _, t := range tasks {
		fa, err := task.FailedActions(t)
		if err != nil || len(fa) == 0 {
			continue
		}
		row := report.TaskFailedActions{Task: t.ID}
		for _, f := range fa {
			row.Actions = append(row.Actions, fmt.Sprintf("#%d %s: %s", f.Action, f.Tool, f.Error))
			if f.DroppedAtomic {
				row.DroppedAtomic++
			}
		}
		s.FailedGoldActions = append(s.FailedGoldActions, row)
	}
	return s
}

// pluginName is a verifier or attributor as the report names it: the
// built-in's name, or the binary's path.
func pluginName(p config.Plugin) string {
	if p.Binary != "" {
		return p.Binary
	}
	return p.Builtin
}
