package train

import (
	"fmt"
	"math"
	"strings"
)

// ScorePair is one rollout of a task scored twice: Executable is the
// verifier's R in [0, 1] (rollout.Outcome.Score) and Rubric the judge
// model's rubric score in [0, 1].
type ScorePair struct {
	Executable float64
	Rubric     float64
}

// TaskScores is one task's rollouts, each scored by both verifiers.
type TaskScores struct {
	TaskID string
	Scores []ScorePair
}

// FilterConfig sets the task–verifier consistency filter's thresholds.
//   - MinCorrelation: the least Pearson correlation between the executable
//     and rubric scores a kept task has (in [-1, 1]).
//   - MinAgreement: the least share of agreeing rollouts a kept task has
//     (in [0, 1]).
//   - RubricPass: a rubric score at or above it counts as a pass.
//   - MinRollouts: the fewest rollouts a task needs to be judged at all
//     (values below 2 act as 2: correlation needs two points).
//
// It is also the grpo block's consistency_filter of an experiment config
// (core/config decodes into it; the json names are the HCL attributes).
type FilterConfig struct {
	MinCorrelation float64 `json:"min_correlation"`
	MinAgreement   float64 `json:"min_agreement"`
	RubricPass     float64 `json:"rubric_pass"`
	MinRollouts    int     `json:"min_rollouts"`
}

// Decision is the filter's verdict on one task.
//   - TaskID is the task; Keep whether it stays in the training set.
//   - Reason is "" for a kept task and, for a dropped one, every failed
//     condition, "; "-separated (see Filter).
//   - Correlation is the Pearson correlation of the executable and rubric
//     scores, NaN when undefined (fewer than two rollouts, a constant
//     series, or an invalid score).
//   - Agreement is the share of rollouts where (Executable == 1) ==
//     (Rubric >= RubricPass), NaN when there are no rollouts or an invalid
//     score.
//   - N is the number of rollouts.
type Decision struct {
	TaskID      string
	Keep        bool
	Reason      string
	Correlation float64
	Agreement   float64
	N           int
}

// Filter judges each task's verifier consistency: does the executable
// verifier agree with the rubric judge on its rollouts? It returns one
// Decision per task, in input order. A task is dropped, with the reason:
//
//   - "too few rollouts: N < M" when it has fewer than MinRollouts (at least
//     2) rollouts; nothing else is judged;
//   - "invalid score: rollout i ..." when a score is NaN or outside [0, 1];
//     nothing else is judged;
//   - otherwise with every one of these that holds, joined by "; ":
//     "low agreement: A < MinAgreement";
//     "constant executable scores: correlation undefined",
//     "constant rubric scores: correlation undefined" or
//     "constant scores: correlation undefined" (both series constant) when
//     a series has zero variance — the correlation is NaN, and a task
//     whose scores cannot be correlated is dropped whatever MinCorrelation
//     is, since a constant series gives no evidence that the verifiers
//     track each other (and no GRPO signal either);
//     "low correlation: C < MinCorrelation".
//
// Numbers in reasons are printed with %.4g.
func Filter(tasks []TaskScores, cfg FilterConfig) []Decision {
	minN := max(cfg.MinRollouts, 2)
	out := make([]Decision, len(tasks))
	for i, t := range tasks {
		d := Decision{TaskID: t.TaskID, N: len(t.Scores), Correlation: math.NaN(), Agreement: math.NaN()}
		bad := invalidScore(t.Scores)
		if bad == "" {
			if d.N > 0 {
				d.Agreement = Agreement(t.Scores, cfg.RubricPass)
			}
			d.Correlation = Pearson(t.Scores)
		}
		if d.N < minN {
			d.Reason = fmt.Sprintf("too few rollouts: %d < %d", d.N, minN)
			out[i] = d
			continue
		}
		if bad != "" {
			d.Reason = bad
			out[i] = d
			continue
		}
		var reasons []string
		if d.Agreement < cfg.MinAgreement {
			reasons = append(reasons, fmt.Sprintf("low agreement: %.4g < %.4g", d.Agreement, cfg.MinAgreement))
		}
		ce, cr := constant(t.Scores, func(p ScorePair) float64 { return p.Executable }), constant(t.Scores, func(p ScorePair) float64 { return p.Rubric })
		switch {
		case ce && cr:
			reasons = append(reasons, "constant scores: correlation undefined")
		case ce:
			reasons = append(reasons, "constant executable scores: correlation undefined")
		case cr:
			reasons = append(reasons, "constant rubric scores: correlation undefined")
		case d.Correlation < cfg.MinCorrelation:
			reasons = append(reasons, fmt.Sprintf("low correlation: %.4g < %.4g", d.Correlation, cfg.MinCorrelation))
		}
		d.Reason = strings.Join(reasons, "; ")
		d.Keep = len(reasons) == 0
		out[i] = d
	}
	return out
}

func invalidScore(ps []ScorePair) string {
	ok := func(x float64) bool { return x >= 0 && x <= 1 } // false for NaN
	for i, p := range ps {
		if !ok(p.Executable) {
			return fmt.Sprintf("invalid score: rollout %d executable score %v not in [0, 1]", i, p.Executable)
		}
		if !ok(p.Rubric) {
			return fmt.Sprintf("invalid score: rollout %d rubric score %v not in [0, 1]", i, p.Rubric)
		}
	}
	return ""
}

func constant(ps []ScorePair, f func(ScorePair) float64) bool {
	for _, p := range ps[1:] {
		if f(p) != f(ps[0]) {
			return false
		}
	}
	return true
}

// Pearson returns the Pearson correlation coefficient of the executable and
// rubric scores,
//
//	r = sum((x_i - mean x)(y_i - mean y)) / sqrt(sum (x_i - mean x)^2 * sum (y_i - mean y)^2),
//
// in [-1, 1] (clamped against rounding). It is NaN (undefined) when there
// are fewer than two pairs, when either series is constant (zero variance),
// or when a score is not finite.
func Pearson(ps []ScorePair) float64 {
	n := len(ps)
	if n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for _, p := range ps {
		mx += p.Executable
		my += p.Rubric
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for _, p := range ps {
		dx, dy := p.Executable-mx, p.Rubric-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 || math.IsNaN(sxx) || math.IsNaN(syy) {
		return math.NaN()
	}
	r := sxy / math.Sqrt(sxx*syy)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return math.NaN()
	}
	return math.Max(-1, math.Min(1, r))
}

// Agreement returns the share of rollouts (in [0, 1]) on which the two
// verifiers agree: the executable score is exactly 1 and the rubric score
// is at least rubricPass, or the executable score is below 1 and the rubric
// score is below rubricPass. It is NaN for no rollouts.
func Agreement(ps []ScorePair, rubricPass float64) float64 {
	if len(ps) == 0 {
		return math.NaN()
	}
	agree := 0
	for _, p := range ps {
		if (p.Executable == 1) == (p.Rubric >= rubricPass) {
			agree++
		}
	}
	return float64(agree) / float64(len(ps))
}
