package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/synth/evolve"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// Files of an evolve run folder (beside FileConfig, FileMetrics and
// FileReport).
const (
	// FileEvolve is EvolveSummary as JSON.
	FileEvolve = "evolve.json"
	// FileRevisions holds one evolve.Revision per line.
	FileRevisions = "revisions.jsonl"
	// FileTaskVersions holds every task version the run made, one task
	// per line (weft.tasks/v1 task objects with their version).
	FileTaskVersions = "task-versions.jsonl"
	// FileEvolvedTasks is the evolved system's active tasks (weft.tasks/v1).
	FileEvolvedTasks = "tasks.weft.json"
	// DirEvolvedServers holds each revised server as NAME.json
	// (weft.server/v1, inline program, schema and seed).
	DirEvolvedServers = "servers"
)

// EvolveSummary is the evolve stage's outcome (FileEvolve).
type EvolveSummary struct {
	Format string `json:"format"`
	// System is "benchmark" (the planted-defect benchmark) or the server's
	// name.
	System string         `json:"system"`
	Result *evolve.Result `json:"result"`
	// Defects and Benchmark are the benchmark's planted defects and its
	// score (absent for a server as shipped).
	Defects   []evolve.Defect `json:"defects,omitempty"`
	Benchmark *evolve.Score   `json:"benchmark,omitempty"`
}

// EvolveSystem builds the system of a config with an evolve block: the
// planted-defect benchmark (evolve.Plant over benchmark_docs) or the server
// as shipped with its tasks (tau2 tasks converted on it with the gold
// replay, or a weft.tasks/v1 file), and the evolve.Options from the block
// and the rollout policy's scripted faults. Errors: no evolve block, docs,
// server or tasks that do not load, a policy that is not scripted.
func EvolveSystem(ctx context.Context, cfg *config.Config) (*evolve.System, *evolve.Bench, evolve.Options, error) {
	e := cfg.Evolve
	var opts evolve.Options
	if e == nil {
		return nil, nil, opts, fmt.Errorf("pipeline: %s has no evolve block", cfg.File)
	}
	opts = evolve.Options{Rounds: e.Rounds, Budget: e.Budget, Episodes: e.Episodes}
	opts.Classes = []attribute.Class{}
	for _, c := range e.Classes {
		opts.Classes = append(opts.Classes, attribute.Class(c))
	}
	found := false
	for _, p := range cfg.Policies {
		if p.Name == e.Policy {
			if p.Scripted == nil {
				return nil, nil, opts, fmt.Errorf("pipeline: evolve: policy %q is not scripted", p.Name)
			}
			opts.Faults, opts.PolicySeed, found = p.Scripted.Faults, p.Scripted.Seed, true
		}
	}
	if !found {
		return nil, nil, opts, fmt.Errorf("pipeline: evolve: no policy %q", e.Policy)
	}
	switch e.Synthesizer {
	case "", "deterministic":
		opts.Synthesizer = &synth.Deterministic{}
	case "scripted":
		s, err := synth.LoadScript(e.Script)
		if err != nil {
			return nil, nil, opts, err
		}
		opts.Synthesizer = s
	default:
		return nil, nil, opts, fmt.Errorf("pipeline: evolve: unknown synthesizer %q", e.Synthesizer)
	}
	if e.BenchmarkDocs != "" {
		docs, err := synth.LoadDocs(e.BenchmarkDocs)
		if err != nil {
			return nil, nil, opts, err
		}
		if len(docs) != 1 {
			return nil, nil, opts, fmt.Errorf("pipeline: evolve: %s holds %d servers' docs, want one", e.BenchmarkDocs, len(docs))
		}
		b, err := evolve.Plant(ctx, docs[0], evolve.BenchOptions{Servers: e.BenchmarkServers, Seed: e.Seed})
		if err != nil {
			return nil, nil, opts, err
		}
		return b.System, b, opts, nil
	}
	s, err := spec.Load(e.Server)
	if err != nil {
		return nil, nil, opts, err
	}
	var ts []*task.Task
	if e.Tau2Tasks != "" {
		env, err := tasks.SpecEnv(ctx, module.Config{}, s)
		if err != nil {
			return nil, nil, opts, err
		}
		ts, err = env.ConvertTau2(ctx, e.Tau2Tasks, []string{s.Name}, s.Name)
		env.Store.Close()
		if err != nil {
			return nil, nil, opts, err
		}
	} else if ts, err = task.LoadFile(e.Tasks); err != nil {
		return nil, nil, opts, err
	}
	return &evolve.System{Servers: []*evolve.Server{{Spec: s}}, Tasks: ts}, nil, opts, nil
}

// RunEvolve is the evolve stage: evolve.Run on EvolveSystem's system,
// writing into dir the summary (FileEvolve), the revisions, every task
// version made, the evolved tasks and revised servers, metrics.json with
// its rounds and report.html with the per-round section, and the resolved
// config. progress, when set, is told about each round.
func RunEvolve(ctx context.Context, cfg *config.Config, dir string, progress func(string)) (*EvolveSummary, error) {
	sys, bench, opts, err := EvolveSystem(ctx, cfg)
	if err != nil {
		return nil, err
	}
	opts.Progress = progress
	res, err := evolve.Run(ctx, sys, opts)
	if err != nil {
		return nil, err
	}
	sum := &EvolveSummary{Format: evolve.Format, System: "benchmark", Result: res}
	if bench != nil {
		sum.Defects, sum.Benchmark = bench.Defects, bench.Score(res)
	} else {
		sum.System = sys.Servers[0].Spec.Name
	}
	if err := os.MkdirAll(filepath.Join(dir, DirEvolvedServers), 0o755); err != nil {
		return nil, err
	}
	files := map[string][]byte{FileConfig: cfg.Resolved()}
	b, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	files[FileEvolve] = append(b, '\n')
	var revs, versions bytes.Buffer
	for _, v := range res.Revisions {
		if err := json.NewEncoder(&revs).Encode(v); err != nil {
			return nil, err
		}
	}
	for _, t := range res.History {
		if err := json.NewEncoder(&versions).Encode(t); err != nil {
			return nil, err
		}
	}
	files[FileRevisions], files[FileTaskVersions] = revs.Bytes(), versions.Bytes()
	var tf bytes.Buffer
	if err := task.Save(&tf, res.System.Tasks); err != nil {
		return nil, err
	}
	files[FileEvolvedTasks] = tf.Bytes()
	for i, s := range res.System.Servers {
		if s.Spec == sys.Servers[i].Spec {
			continue
		}
		sb, err := json.MarshalIndent(s.Spec, "", "  ")
		if err != nil {
			return nil, err
		}
		files[filepath.Join(DirEvolvedServers, s.Spec.Name+".json")] = append(sb, '\n')
	}
	m := EvolveMetrics(res)
	mb, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	files[FileMetrics] = append(mb, '\n')
	var html bytes.Buffer
	if err := report.WriteHTML(&html, report.ReportData{Title: "evolve: " + sum.System, Config: cfg.File, Metrics: m}); err != nil {
		return nil, err
	}
	files[FileReport] = html.Bytes()
	for name, data := range files {
		if err := writeFileAtomic(filepath.Join(dir, name), data); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// EvolveMetrics is metrics.json of an evolve run: the rounds, and the
// episode and attribution totals over them (the tool totals are per round,
// non-policy errors only).
func EvolveMetrics(res *evolve.Result) report.Metrics {
	m := report.Metrics{Attributions: map[attribute.Class]int{}, Rounds: []report.Round{}}
	for _, c := range report.AttributionClasses {
		m.Attributions[c] = 0
	}
	for _, r := range res.Rounds {
		m.Rounds = append(m.Rounds, r)
		m.Episodes += r.Episodes
		m.ScoredEpisodes += r.Episodes
		m.Passed += r.Passed
		for c, n := range r.Attributions {
			m.Attributions[c] += n
		}
	}
	m.PassRate = report.RoundRate(m.Passed, m.ScoredEpisodes)
	return m
}
