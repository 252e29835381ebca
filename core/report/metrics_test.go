package report

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/rollout"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json")

var rolloutInfra = rollout.InfraError{Kind: "plugin_crash", Message: "harness exited", Retryable: true}

var approx = cmpopts.EquateApprox(0, 1e-12)

func TestComputeFixture(t *testing.T) {
	got := Compute(fixtureEpisodes(), fixtureSFT(), fixtureGRPO(), 2)
	want := Metrics{
		Episodes: 8, InfraFailures: 1, ScoredEpisodes: 7, Passed: 4,
		PassRate: f(4.0 / 7),
		PassRateBy: []GroupRate{
			{View: "agentic", Harness: "react", Episodes: 5, InfraFailures: 1, Scored: 4, Passed: 2,
				PassRate: f(0.5), MeanScore: f(2.5 / 4), PassAtK: map[int]float64{1: 1.0 / 3, 2: 1},
				PassHatK: map[int]float64{1: 1.0 / 3, 2: 1.0 / 3}, PassKTasks: map[int]int{1: 2, 2: 1}},
			{View: "simuser", Harness: "native", Episodes: 3, Scored: 3, Passed: 2,
				PassRate: f(2.0 / 3), MeanScore: f(0.75), PassAtK: map[int]float64{1: 2.0 / 3, 2: 1},
				PassHatK: map[int]float64{1: 2.0 / 3, 2: 1.0 / 3}, PassKTasks: map[int]int{1: 1, 2: 1}},
		},
		MeanScore:      f(4.75 / 7),
		ScoreHistogram: []int{1, 0, 1, 0, 0, 1, 0, 0, 0, 4},
		ToolCalls:      24, ToolErrors: 5, ToolErrorRate: f(5.0 / 24),
		ToolErrorsBy: []HarnessTools{
			{Harness: "native", ToolCalls: 8, ToolErrors: 1, ToolErrorRate: f(0.125)},
			{Harness: "react", ToolCalls: 16, ToolErrors: 4, ToolErrorRate: f(0.25)},
		},
		Attributions: map[attribute.Class]int{"policy": 2, "environment": 1, "task": 0, "verifier": 1},
		K:            2,
		// k=1 over the three tasks (2/3, 2/3, 0); k=2 over the two with 3
		// scored samples: pass@2 = 1 - C(1,2)/C(3,2) = 1, pass^2 = C(2,2)/C(3,2).
		PassAtK:    map[int]float64{1: 4.0 / 9, 2: 1},
		PassHatK:   map[int]float64{1: 4.0 / 9, 2: 1.0 / 3},
		PassKTasks: map[int]int{1: 3, 2: 2},
		// Per task over all its episodes: t1 has 6 scored, 4 passed
		// (pass@2 = 1 - C(2,2)/C(6,2) = 14/15, pass^2 = C(4,2)/C(6,2) = 2/5);
		// t2 1 scored, 0 passed.
		TaskPassAtK:    map[int]float64{1: (4.0/6 + 0) / 2, 2: 14.0 / 15},
		TaskPassHatK:   map[int]float64{1: (4.0/6 + 0) / 2, 2: 2.0 / 5},
		TaskPassKTasks: map[int]int{1: 2, 2: 1},
		ByTask: []TaskPassK{
			{Task: "t1", Episodes: 6, Scored: 6, Passed: 4,
				PassAtK: map[int]float64{1: 4.0 / 6, 2: 14.0 / 15}, PassHatK: map[int]float64{1: 4.0 / 6, 2: 2.0 / 5}},
			{Task: "t2", Episodes: 2, Scored: 1, Passed: 0, PassAtK: map[int]float64{1: 0}, PassHatK: map[int]float64{1: 0}},
		},
		SFTMode: "prefix", SFTTasks: 3, SFTTrajectories: 2, SFTRecords: 3, SFTKeptTurns: 5, SFTAttempts: 9,
		SFTTurnsResampled: 2, SFTAttemptsPerKeptTurn: f(1.8),
		GRPOLevel: "turn", GRPOGroups: 10, GRPONonZeroGroups: 6, GRPOSegments: 40, GRPOMaskedSegments: 4,
		GRPOMaskedShare: f(0.1),
		PerTask: []TaskOutcome{
			{Task: "t1", View: "agentic", Harness: "react", Policy: "p", Episodes: 3, Scored: 3, Passed: 2,
				PassRate: f(2.0 / 3), MeanScore: f(2.5 / 3),
				PassAtK: map[int]float64{1: 2.0 / 3, 2: 1}, PassHatK: map[int]float64{1: 2.0 / 3, 2: 1.0 / 3},
				Scores: []*float64{f(1), f(1), f(0.5)}},
			{Task: "t1", View: "simuser", Harness: "native", Policy: "p", Episodes: 3, Scored: 3, Passed: 2,
				PassRate: f(2.0 / 3), MeanScore: f(0.75),
				PassAtK: map[int]float64{1: 2.0 / 3, 2: 1}, PassHatK: map[int]float64{1: 2.0 / 3, 2: 1.0 / 3},
				Scores: []*float64{f(1), f(0.25), f(1)}},
			{Task: "t2", View: "agentic", Harness: "react", Policy: "p", Episodes: 2, InfraFailures: 1, Scored: 1,
				PassRate: f(0), MeanScore: f(0),
				PassAtK: map[int]float64{1: 0}, PassHatK: map[int]float64{1: 0},
				Scores: []*float64{nil, f(0)}},
		},
		Why: Diagnosis{
			InfraReasons:     []InfraReason{{Kind: "plugin_crash", Episodes: 1, Example: "t2/agentic/react/p/0", Message: "harness exited"}},
			TaskAttributions: []TaskBlame{},
			Detectors:        map[string]int{"forbidden_tool": 1, "repeated_call": 3},
		},
	}
	if d := cmp.Diff(want, got, approx); d != "" {
		t.Fatalf("Compute (-want +got):\n%s", d)
	}
}

// Infrastructure failures are counted but never scored: adding them
// changes episodes and infra_failures only, not any rate or score.
func TestComputeInfraExcludedFromRates(t *testing.T) {
	base := fixtureEpisodes()
	more := slices.Clone(base)
	for i := range 3 {
		e := ep("t9", "agentic", "react", i, nil, 0, 0)
		e.Infra = &rollout.InfraError{Kind: "deadline"}
		more = append(more, e)
	}
	a, b := Compute(base, nil, nil, 2), Compute(more, nil, nil, 2)
	if b.Episodes != a.Episodes+3 || b.InfraFailures != a.InfraFailures+3 || b.ScoredEpisodes != a.ScoredEpisodes {
		t.Fatalf("counts: episodes %d->%d infra %d->%d scored %d->%d",
			a.Episodes, b.Episodes, a.InfraFailures, b.InfraFailures, a.ScoredEpisodes, b.ScoredEpisodes)
	}
	if *b.PassRate != 4.0/7 || *b.MeanScore != *a.MeanScore {
		t.Fatalf("pass rate %v mean %v, want 4/7 and %v", *b.PassRate, *b.MeanScore, *a.MeanScore)
	}
	g := b.PassRateBy[0]
	if g.Episodes != 8 || g.InfraFailures != 4 || g.Scored != 4 || g.Passed != 2 || *g.PassRate != 0.5 {
		t.Fatalf("agentic x react = %+v", g)
	}
	// The all-infra task has no rate and no mean (null, not 0), and is left
	// out of pass@k.
	last := b.PerTask[len(b.PerTask)-1]
	if last.Task != "t9" || last.Scored != 0 || last.PassRate != nil || last.MeanScore != nil || len(last.PassHatK) != 0 {
		t.Fatalf("t9 = %+v", last)
	}
	if d := cmp.Diff(a.PassHatK, b.PassHatK, approx); d != "" || b.PassKTasks[1] != 3 {
		t.Fatalf("pass^k changed (-before +after):\n%s tasks %v", d, b.PassKTasks)
	}
}

func TestComputeEmpty(t *testing.T) {
	got := Compute(nil, nil, nil, 0)
	want := Metrics{
		ScoreHistogram: make([]int, 10), PassRateBy: []GroupRate{}, ToolErrorsBy: []HarnessTools{},
		Attributions: map[attribute.Class]int{"policy": 0, "environment": 0, "task": 0, "verifier": 0},
		PassAtK:      map[int]float64{}, PassHatK: map[int]float64{}, PassKTasks: map[int]int{},
		TaskPassAtK: map[int]float64{}, TaskPassHatK: map[int]float64{}, TaskPassKTasks: map[int]int{},
		ByTask:  []TaskPassK{},
		PerTask: []TaskOutcome{},
		Why:     Diagnosis{InfraReasons: []InfraReason{}, TaskAttributions: []TaskBlame{}, Detectors: map[string]int{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Compute(nil) (-want +got):\n%s", d)
	}
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"pass_rate":null`, `"mean_score":null`, `"tool_error_rate":null`, `"pass_rate_by":[]`, `"per_task":[]`} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("empty metrics JSON lacks %s: %s", s, b)
		}
	}
}

func TestScoreBin(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want int
	}{{0, 0}, {0.0999, 0}, {0.1, 1}, {0.3, 3}, {0.1 + 0.2, 3}, {0.7, 7}, {0.95, 9}, {1, 9}, {-0.5, 0}, {1.5, 9}} {
		if got := scoreBin(c.s); got != c.want {
			t.Errorf("scoreBin(%v) = %d, want %d", c.s, got, c.want)
		}
	}
}

// TestMetricsGolden pins metrics.json: field names, order and values
// (go test ./core/report -run Golden -update rewrites it).
func TestMetricsGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMetrics(&buf, Compute(fixtureEpisodes(), fixtureSFT(), fixtureGRPO(), 2)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "metrics.golden.json")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), buf.String()); d != "" {
		t.Fatalf("metrics.json differs from %s (-want +got):\n%s", path, d)
	}
	// The required fields are all there, at the top level.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(buf.Bytes(), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"episodes", "infra_failures", "pass_rate", "pass_rate_by", "mean_score",
		"tool_error_rate", "attributions", "pass_hat_k", "sft_trajectories", "grpo_groups", "grpo_nonzero_groups"} {
		if _, ok := top[k]; !ok {
			t.Errorf("metrics.json lacks %q", k)
		}
	}
}

// TestPassAtKExactAveraging: pass@k and pass^k are computed exactly, so
// the same outcomes pooled per task x view x harness and per task give the
// same float (metrics.json had task_pass_at_k {"1": 0.49999999999999994}
// beside pass_at_k {"1": 0.5}), and an exact value prints exactly.
func TestPassAtKExactAveraging(t *testing.T) {
	one, zero := 1.0, 0.0
	var eps []Episode
	// Task a: 1 of 3 passed; task b: 2 of 3; task c: 3 of 6 over two
	// harnesses (each 1 of 3 and 2 of 3).
	add := func(task, harness string, scores ...*float64) {
		for i, s := range scores {
			eps = append(eps, ep(task, "agentic", harness, i, s, 0, 0))
		}
	}
	add("a", "react", &one, &zero, &zero)
	add("b", "react", &one, &one, &zero)
	add("c", "react", &one, &zero, &zero)
	add("c", "native", &one, &one, &zero)
	m := Compute(eps, nil, nil, 2)
	// Per group: 2/3, 1, 2/3, 1 at k=2; per task: 2/3, 1, 1-C(3,2)/C(6,2).
	if d := cmp.Diff(map[int]float64{1: 0.5, 2: 5.0 / 6}, m.PassAtK); d != "" {
		t.Errorf("pass_at_k (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[int]float64{1: 0.5, 2: 37.0 / 45}, m.TaskPassAtK); d != "" {
		t.Errorf("task_pass_at_k (-want +got):\n%s", d)
	}
	wantHat := map[int]float64{1: 0.5, 2: 1.0 / 6}
	if d := cmp.Diff(wantHat, m.PassHatK); d != "" {
		t.Errorf("pass_hat_k (-want +got):\n%s", d)
	}
	// Task c pooled: 3 of 6; pass^2 = C(3,2)/C(6,2) = 1/5.
	if d := cmp.Diff(map[int]float64{1: 0.5, 2: 1 - 3.0/15}, m.ByTask[2].PassAtK); d != "" {
		t.Errorf("task c pass_at_k (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[int]float64{1: 0.5, 2: 0.2}, m.ByTask[2].PassHatK); d != "" {
		t.Errorf("task c pass_hat_k (-want +got):\n%s", d)
	}
}
