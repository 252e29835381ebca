package train

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func pairs(xy ...float64) []ScorePair {
	ps := make([]ScorePair, len(xy)/2)
	for i := range ps {
		ps[i] = ScorePair{Executable: xy[2*i], Rubric: xy[2*i+1]}
	}
	return ps
}

func TestPearson(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		ps   []ScorePair
		want float64
	}{
		// x = (0, 1), y = (0.2, 0.8): perfectly linear.
		{"two points", pairs(0, 0.2, 1, 0.8), 1},
		{"anti", pairs(0, 1, 1, 0), -1},
		// x = (1, 0, 1, 0), y = (1, 0, 0, 1): mx = my = 0.5, sxy = .25-.25... = 0.
		{"uncorrelated", pairs(1, 1, 0, 0, 1, 0, 0, 1), 0},
		// x = (0, 0.5, 1), y = (0, 1, 0.5): mx = my = 0.5;
		// dx = (-.5, 0, .5), dy = (-.5, .5, 0); sxy = .25; sxx = syy = .5; r = .5.
		{"half", pairs(0, 0, 0.5, 1, 1, 0.5), 0.5},
		// x = (1, 1, 0, 0), y = (0.9, 0.6, 0.4, 0.3): mx = .5, my = .55;
		// dx = ±.5, dy = (.35, .05, -.15, -.25); sxy = .5*(.35+.05+.15+.25) = .4;
		// sxx = 1; syy = .1225+.0025+.0225+.0625 = .21; r = .4/sqrt(.21).
		{"binary vs graded", pairs(1, 0.9, 1, 0.6, 0, 0.4, 0, 0.3), 0.4 / math.Sqrt(0.21)},
		{"empty", nil, nan},
		{"one", pairs(1, 1), nan},
		{"constant x", pairs(1, 0.2, 1, 0.9), nan},
		{"constant y", pairs(0, 0.5, 1, 0.5), nan},
		{"both constant", pairs(1, 1, 1, 1, 1, 1), nan},
		{"infinite", pairs(0, 0, math.Inf(1), 1), nan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Pearson(tc.ps)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("Pearson (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAgreement(t *testing.T) {
	// R == 1 with rubric 0.7 (pass at 0.7): agree; R == 1 with 0.69: disagree;
	// R = 0.99 (not 1) with 0.2: agree; R = 0 with 0.9: disagree. 2 of 4.
	ps := pairs(1, 0.7, 1, 0.69, 0.99, 0.2, 0, 0.9)
	if got := Agreement(ps, 0.7); got != 0.5 {
		t.Errorf("Agreement = %v, want 0.5", got)
	}
	// With the pass line at 0.6, rollout 1 agrees too: 3 of 4.
	if got := Agreement(ps, 0.6); got != 0.75 {
		t.Errorf("Agreement = %v, want 0.75", got)
	}
	if got := Agreement(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("Agreement(nil) = %v, want NaN", got)
	}
}

func TestFilter(t *testing.T) {
	nan := math.NaN()
	cfg := FilterConfig{MinCorrelation: 0.5, MinAgreement: 0.75, RubricPass: 0.5, MinRollouts: 4}
	tasks := []TaskScores{
		// x = (1,1,0,0), y = (.9,.6,.4,.3): r = .4/sqrt(.21) = .8729; all agree.
		{TaskID: "good", Scores: pairs(1, 0.9, 1, 0.6, 0, 0.4, 0, 0.3)},
		{TaskID: "few", Scores: pairs(1, 1, 0, 0, 1, 1)},
		{TaskID: "none"},
		// Agreement: (1,.2) no, (1,.3) no, (0,.8) no, (0,.9) no: 0.
		// dx = ±.5, dy = (-.35, -.25, .25, .35): sxy = -.6, sxx = 1,
		// syy = .37: r = -.6/sqrt(.37) = -.9864.
		{TaskID: "inverted", Scores: pairs(1, 0.2, 1, 0.3, 0, 0.8, 0, 0.9)},
		// Every rollout passes both: agreement 1 but r undefined.
		{TaskID: "all pass", Scores: pairs(1, 1, 1, 0.8, 1, 0.9, 1, 0.7)},
		// Executable constant at 0, rubric below the pass line: agreement 1.
		{TaskID: "all fail exec", Scores: pairs(0, 0.1, 0, 0.2, 0, 0.3, 0, 0.4)},
		// Rubric constant at 1, R varies: agreement 2/4.
		{TaskID: "rubric const", Scores: pairs(1, 1, 1, 1, 0, 1, 0, 1)},
		{TaskID: "both const", Scores: pairs(1, 1, 1, 1, 1, 1, 1, 1)},
		// x = (1,0,1,0), y = (.6,.4,.4,.6): agreement (1,.6) yes, (0,.4) yes,
		// (1,.4) no, (0,.6) no = .5; dx = (.5,-.5,.5,-.5),
		// dy = (.1,-.1,-.1,.1): sxy = .05+.05-.05-.05 = 0: r = 0.
		{TaskID: "noise", Scores: pairs(1, 0.6, 0, 0.4, 1, 0.4, 0, 0.6)},
		// x = (1,0,0,0,0), y = (.5,.4,.4,.4,.6): agreement (1,.5) yes, (0,.4)x3
		// yes, (0,.6) no = .8. mx = .2, my = .46; dx = (.8,-.2,-.2,-.2,-.2),
		// dy = (.04,-.06,-.06,-.06,.14); sxy = .032+.012*3-.028 = .04;
		// sxx = .64+.04*4 = .8; syy = .0016+.0036*3+.0196 = .032;
		// r = .04/sqrt(.0256) = .25.
		{TaskID: "weak", Scores: pairs(1, 0.5, 0, 0.4, 0, 0.4, 0, 0.4, 0, 0.6)},
		{TaskID: "nan", Scores: pairs(1, 1, 0, nan, 1, 1, 0, 0)},
		{TaskID: "range", Scores: pairs(1, 1, 1.5, 0, 1, 1, 0, 0)},
	}
	want := []Decision{
		{TaskID: "good", Keep: true, Correlation: 0.4 / math.Sqrt(0.21), Agreement: 1, N: 4},
		{TaskID: "few", Reason: "too few rollouts: 3 < 4", Correlation: 1, Agreement: 1, N: 3},
		{TaskID: "none", Reason: "too few rollouts: 0 < 4", Correlation: nan, Agreement: nan, N: 0},
		{TaskID: "inverted", Reason: "low agreement: 0 < 0.75; low correlation: -0.9864 < 0.5", Correlation: -0.6 / math.Sqrt(0.37), Agreement: 0, N: 4},
		{TaskID: "all pass", Reason: "constant executable scores: correlation undefined", Correlation: nan, Agreement: 1, N: 4},
		{TaskID: "all fail exec", Reason: "constant executable scores: correlation undefined", Correlation: nan, Agreement: 1, N: 4},
		{TaskID: "rubric const", Reason: "low agreement: 0.5 < 0.75; constant rubric scores: correlation undefined", Correlation: nan, Agreement: 0.5, N: 4},
		{TaskID: "both const", Reason: "constant scores: correlation undefined", Correlation: nan, Agreement: 1, N: 4},
		{TaskID: "noise", Reason: "low agreement: 0.5 < 0.75; low correlation: 0 < 0.5", Correlation: 0, Agreement: 0.5, N: 4},
		{TaskID: "weak", Reason: "low correlation: 0.25 < 0.5", Correlation: 0.25, Agreement: 0.8, N: 5},
		{TaskID: "nan", Reason: "invalid score: rollout 1 rubric score NaN not in [0, 1]", Correlation: nan, Agreement: nan, N: 4},
		{TaskID: "range", Reason: "invalid score: rollout 1 executable score 1.5 not in [0, 1]", Correlation: nan, Agreement: nan, N: 4},
	}
	got := Filter(tasks, cfg)
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
}

func TestFilterMinRolloutsFloor(t *testing.T) {
	// MinRollouts 0 still needs two rollouts for a correlation.
	got := Filter([]TaskScores{{TaskID: "one", Scores: pairs(1, 1)}}, FilterConfig{})
	want := []Decision{{TaskID: "one", Reason: "too few rollouts: 1 < 2", Correlation: math.NaN(), Agreement: 1, N: 1}}
	if diff := cmp.Diff(want, got, cmpopts.EquateNaNs()); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
	// Two perfectly correlated rollouts pass the zero thresholds.
	got = Filter([]TaskScores{{TaskID: "two", Scores: pairs(1, 1, 0, 0)}}, FilterConfig{RubricPass: 0.5})
	want = []Decision{{TaskID: "two", Keep: true, Correlation: 1, Agreement: 1, N: 2}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Filter (-want +got):\n%s", diff)
	}
	if got := Filter(nil, FilterConfig{}); len(got) != 0 {
		t.Errorf("Filter(nil) = %v, want empty", got)
	}
}
