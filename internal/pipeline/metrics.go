package pipeline

import (
	"bytes"
	"path/filepath"

	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/train"
)

// episodeLess orders episodes by task (in spec order), view, harness,
// policy and sample: metrics and the report do not depend on the order
// episodes finished in.
func (r *runner) episodeLess(a, b report.Episode) bool {
	if a.Task != b.Task {
		ia, oka := r.taskIndex[a.Task]
		ib, okb := r.taskIndex[b.Task]
		if oka && okb {
			return ia < ib
		}
		return a.Task < b.Task
	}
	if a.View != b.View {
		return a.View < b.View
	}
	if a.Harness != b.Harness {
		return a.Harness < b.Harness
	}
	if a.Policy != b.Policy {
		return a.Policy < b.Policy
	}
	return a.Sample < b.Sample
}

// sftStats turns sampling results into the report's SFT figures (nil when
// there are none).
func sftStats(mode string, results []*train.SampleResult) *report.SFTStats {
	s := train.SummarizeSampling(results)
	st := &report.SFTStats{Mode: mode, Tasks: s.Tasks, Accepted: s.Accepted, Records: s.WithData,
		KeptTurns: s.KeptTurns, Attempts: s.Attempts, TurnsResampled: s.Resampled, AttemptsHistogram: map[int]int{}}
	for _, res := range results {
		for _, ts := range res.Turns {
			st.AttemptsHistogram[ts.Attempts]++
		}
	}
	return st
}

func grpoStats(level string, results []*train.GRPOResult) *report.GRPOStats {
	s := train.SummarizeGRPO(results)
	return &report.GRPOStats{Level: level, Groups: s.Groups, NonZeroGroups: s.NonZero, Segments: s.Segments, MaskedSegments: s.Masked,
		Detectors: s.Patterns}
}

func (r *runner) passK() int {
	if len(r.spec.PassK) == 0 {
		return report.KAll
	}
	k := 1
	for _, x := range r.spec.PassK {
		k = max(k, x)
	}
	return k
}

// metrics computes metrics.json from what the folder holds.
func (r *runner) metrics() report.Metrics {
	var cmp *report.SFTStats
	if r.spec.SFT != nil && (r.spec.has(StageSFT) || len(r.samples) > 0) {
		r.sftStats = sftStats(r.spec.SFT.Mode, r.samples)
		if r.spec.SFT.Compare || len(r.compare) > 0 {
			cmp = sftStats(otherMode(r.spec.SFT.Mode), r.compare)
		}
	}
	if r.spec.GRPO != nil && (r.spec.has(StageGRPO) || len(r.groups) > 0) {
		r.grpoStats = grpoStats(r.spec.GRPO.Level, r.groups)
	}
	m := report.Compute(r.episodes, r.sftStats, r.grpoStats, r.passK())
	m.SFTCompare = cmp
	// Every unfinished task of a stage was tried in this run (a run that
	// ends without interruption tries them all), so this run's failures
	// are exactly the stage's unfinished tasks.
	failed := map[string]map[string]bool{}
	for _, f := range r.failures {
		if failed[f.Stage] == nil {
			failed[f.Stage] = map[string]bool{}
		}
		failed[f.Stage][f.TaskID] = true
	}
	m.SFTFailedTasks, m.GRPOFailedTasks = len(failed[StageSFT]), len(failed[StageGRPO])
	m.Settings = r.spec.Settings
	return m
}

// report writes report.html from m and the stage figures metrics left.
func (r *runner) report(m report.Metrics) error {
	var b bytes.Buffer
	if err := report.WriteHTML(&b, report.ReportData{Title: r.spec.Name, Config: r.spec.Name, GeneratedAt: r.opts.GeneratedAt,
		Metrics: m, Episodes: r.episodes, SFT: r.sftStats, GRPO: r.grpoStats}); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(r.opts.Dir, FileReport), b.Bytes())
}
