package report

import (
	"cmp"
	"encoding/json"
	"io"
	"math"
	"math/big"
	"slices"
	"strconv"

	"github.com/weft-dev/weft/core/attribute"
)

// HistogramBins is the number of score-histogram bins: bin i counts the
// scores in [i/10, (i+1)/10), the last bin [0.9, 1] closed.
const HistogramBins = 10

// SFTStats summarizes a prefix-preserving rejection-sampling (SFT) stage.
// Counts are plain numbers; the caller fills it from the driver's result.
type SFTStats struct {
	// Mode names the sampler's variant (e.g. "prefix"); free text.
	Mode string `json:"mode"`
	// Tasks counts the tasks sampled; Accepted those whose whole
	// trajectory was kept.
	Tasks    int `json:"tasks"`
	Accepted int `json:"accepted"`
	// Records counts the tasks that yielded an SFT record: a whole
	// accepted trajectory or, in prefix mode, a verified prefix (at least
	// one kept turn).
	Records int `json:"records"`
	// KeptTurns counts the atomic turns kept: those of the accepted
	// trajectories and, in prefix mode, of the verified prefixes of the
	// others.
	KeptTurns int `json:"kept_turns"`
	// Attempts counts the candidates sampled over all atomic turns.
	Attempts int `json:"attempts"`
	// TurnsResampled counts the atomic turns that needed more than one
	// attempt.
	TurnsResampled int `json:"turns_resampled"`
	// AttemptsHistogram maps a number of attempts (>= 1) to the number of
	// atomic turns, kept or not, that took that many attempts.
	AttemptsHistogram map[int]int `json:"attempts_histogram"`
}

// GRPOStats summarizes an atomic-turn GRPO stage.
type GRPOStats struct {
	// Level is the advantage level ("atomic_turn" or "trajectory").
	Level string `json:"level"`
	// Groups counts the candidate groups sampled, NonZeroGroups those whose
	// advantages are not all 0 (rewards not all equal).
	Groups        int `json:"groups"`
	NonZeroGroups int `json:"nonzero_groups"`
	// Segments counts the training segments (candidate continuations),
	// MaskedSegments those whose positive credit an undesirable-pattern
	// detector masked.
	Segments       int `json:"segments"`
	MaskedSegments int `json:"masked_segments"`
	// Detectors maps an undesirable-pattern detector's name to the
	// candidate turns it fired on (train.GRPOSummary.Patterns).
	Detectors map[string]int `json:"detectors,omitempty"`
}

// Metrics is metrics.json. Counts are numbers of episodes unless stated;
// every rate and share is a fraction in [0, 1] and null when its
// denominator is 0; scores are in [0, 1].
type Metrics struct {
	// Rounds are the self-evolution rounds (the evolve stage), one object
	// per round; absent for other runs.
	Rounds []Round `json:"rounds,omitempty"`
	// Episodes counts all episodes; InfraFailures those that ended on an
	// infrastructure failure (no score); ScoredEpisodes the rest; Passed the
	// scored ones with score 1.
	Episodes       int `json:"episodes"`
	InfraFailures  int `json:"infra_failures"`
	ScoredEpisodes int `json:"scored_episodes"`
	Passed         int `json:"passed"`
	// PassRate is Passed / ScoredEpisodes (infrastructure failures are
	// excluded).
	PassRate *float64 `json:"pass_rate"`
	// PassRateBy is the pass rate per view x harness, sorted by view then
	// harness.
	PassRateBy []GroupRate `json:"pass_rate_by"`
	// MeanScore is the mean score over scored episodes.
	MeanScore *float64 `json:"mean_score"`
	// ScoreHistogram has HistogramBins counts of scored episodes: bin i is
	// scores in [i/10, (i+1)/10), the last bin [0.9, 1] closed.
	ScoreHistogram []int `json:"score_histogram"`
	// ToolCalls and ToolErrors count tool calls and those that returned an
	// error, over all episodes (infrastructure failures included: their
	// calls happened); ToolErrorRate is ToolErrors / ToolCalls.
	ToolCalls     int      `json:"tool_calls"`
	ToolErrors    int      `json:"tool_errors"`
	ToolErrorRate *float64 `json:"tool_error_rate"`
	// ToolErrorsBy is the same per harness, sorted by harness.
	ToolErrorsBy []HarnessTools `json:"tool_errors_by"`
	// Attributions counts attribution records (one per failed checkpoint)
	// per class; the four classes policy, environment, task and verifier
	// are always present, 0 when none.
	Attributions map[attribute.Class]int `json:"attributions"`
	// K is the largest k pass@k and pass^k are computed for (1..K).
	K int `json:"k"`
	// PassAtK and PassHatK map k to pass@k (rollout.PassAtK) and pass^k
	// (rollout.PassHatK, tau-bench) averaged over tasks, a task being a
	// (task, view, harness, policy) with its scored samples; a task with
	// fewer than k scored samples is left out for that k, and a k no task
	// reaches is absent. PassKTasks maps k to the number of tasks averaged.
	PassAtK    map[int]float64 `json:"pass_at_k"`
	PassHatK   map[int]float64 `json:"pass_hat_k"`
	PassKTasks map[int]int     `json:"pass_k_tasks"`
	// TaskPassAtK and TaskPassHatK are tau-bench's headline figures: pass@k
	// and pass^k of each task over all its scored episodes (every view,
	// harness and policy; ByTask), averaged over the tasks with at least k
	// scored episodes, for k = 1..K; TaskPassKTasks maps k to the number of
	// tasks averaged. A k no task reaches is absent.
	TaskPassAtK    map[int]float64 `json:"task_pass_at_k"`
	TaskPassHatK   map[int]float64 `json:"task_pass_hat_k"`
	TaskPassKTasks map[int]int     `json:"task_pass_k_tasks"`
	// ByTask is one row per task over all its episodes, sorted by task.
	ByTask []TaskPassK `json:"by_task"`
	// SFT: the rejection-sampling stage (all 0 and "" when it did not run).
	// SFTTrajectories counts the whole trajectories kept
	// (SFTStats.Accepted), SFTRecords the SFT records written
	// (SFTStats.Records, prefixes included),
	// SFTAttemptsPerKeptTurn is SFTAttempts / SFTKeptTurns (candidates per
	// kept atomic turn, not a fraction).
	SFTMode                string   `json:"sft_mode"`
	SFTTasks               int      `json:"sft_tasks"`
	SFTTrajectories        int      `json:"sft_trajectories"`
	SFTRecords             int      `json:"sft_records"`
	SFTKeptTurns           int      `json:"sft_kept_turns"`
	SFTAttempts            int      `json:"sft_attempts"`
	SFTTurnsResampled      int      `json:"sft_turns_resampled"`
	SFTAttemptsPerKeptTurn *float64 `json:"sft_attempts_per_kept_turn"`
	// SFTFailedTasks and GRPOFailedTasks count the tasks the stage could
	// not finish (infrastructure failures past their retries; details in
	// failures.json): they have no SFT or GRPO data. Filled by the
	// pipeline, 0 from Compute.
	SFTFailedTasks  int `json:"sft_failed_tasks"`
	GRPOFailedTasks int `json:"grpo_failed_tasks"`
	// SFTCompare is the other rejection-sampling mode run at the same
	// retry budget for comparison (prefix-preserving vs end-to-end); nil
	// when it did not run.
	SFTCompare *SFTStats `json:"sft_compare"`
	// GRPO: the GRPO stage (all 0 and "" when it did not run).
	// GRPOMaskedShare is GRPOMaskedSegments / GRPOSegments.
	GRPOLevel          string   `json:"grpo_level"`
	GRPOGroups         int      `json:"grpo_groups"`
	GRPONonZeroGroups  int      `json:"grpo_nonzero_groups"`
	GRPOSegments       int      `json:"grpo_segments"`
	GRPOMaskedSegments int      `json:"grpo_masked_segments"`
	GRPOMaskedShare    *float64 `json:"grpo_masked_share"`
	// PerTask is one row per (task, view, harness, policy), sorted by
	// task, view, harness, policy.
	PerTask []TaskOutcome `json:"per_task"`
	// Settings are the experiment's settings (nil when the caller gave
	// none; Compute leaves it nil).
	Settings *Settings `json:"settings"`
	// Why is Diagnose over the episodes and the GRPO stage.
	Why Diagnosis `json:"why"`
}

// GroupRate is the pass rate of one view x harness (all policies).
type GroupRate struct {
	View          string `json:"view"`
	Harness       string `json:"harness"`
	Episodes      int    `json:"episodes"`
	InfraFailures int    `json:"infra_failures"`
	Scored        int    `json:"scored"`
	Passed        int    `json:"passed"`
	// PassRate is Passed / Scored.
	PassRate  *float64 `json:"pass_rate"`
	MeanScore *float64 `json:"mean_score"`
	// PassAtK and PassHatK are pass@k and pass^k averaged over the
	// group's tasks (each over its samples in this cell), as
	// Metrics.PassAtK; PassKTasks maps k to the number of tasks averaged.
	PassAtK    map[int]float64 `json:"pass_at_k"`
	PassHatK   map[int]float64 `json:"pass_hat_k"`
	PassKTasks map[int]int     `json:"pass_k_tasks"`
}

// TaskPassK is one task over all its episodes (every view, harness and
// policy): Episodes, of which Scored have a score and Passed a score of 1,
// and pass@k and pass^k for k in 1..min(K, Scored).
type TaskPassK struct {
	Task     string          `json:"task"`
	Episodes int             `json:"episodes"`
	Scored   int             `json:"scored"`
	Passed   int             `json:"passed"`
	PassAtK  map[int]float64 `json:"pass_at_k"`
	PassHatK map[int]float64 `json:"pass_hat_k"`
}

// KAll as Compute's k computes pass@k and pass^k for every k the samples
// allow: k = 1..n for a task or cell of n scored samples. Metrics.K is then
// the largest such n.
const KAll = math.MaxInt

// HarnessTools is the tool error rate of one harness.
type HarnessTools struct {
	Harness    string `json:"harness"`
	ToolCalls  int    `json:"tool_calls"`
	ToolErrors int    `json:"tool_errors"`
	// ToolErrorRate is ToolErrors / ToolCalls.
	ToolErrorRate *float64 `json:"tool_error_rate"`
}

// TaskOutcome is one task under one view, harness and policy.
type TaskOutcome struct {
	Task          string `json:"task"`
	View          string `json:"view"`
	Harness       string `json:"harness"`
	Policy        string `json:"policy"`
	Episodes      int    `json:"episodes"`
	InfraFailures int    `json:"infra_failures"`
	Scored        int    `json:"scored"`
	Passed        int    `json:"passed"`
	// PassRate is Passed / Scored.
	PassRate  *float64 `json:"pass_rate"`
	MeanScore *float64 `json:"mean_score"`
	// PassAtK and PassHatK map k in 1..min(K, Scored) to
	// rollout.PassAtK(Scored, Passed, k) and rollout.PassHatK(...).
	PassAtK  map[int]float64 `json:"pass_at_k"`
	PassHatK map[int]float64 `json:"pass_hat_k"`
	// Scores are the samples' scores in sample order (null for an
	// infrastructure failure).
	Scores []*float64 `json:"scores"`
}

// AttributionClasses are the four attribution classes, in report order.
var AttributionClasses = []attribute.Class{
	attribute.ClassPolicy, attribute.ClassEnvironment, attribute.ClassTask, attribute.ClassVerifier,
}

// Compute aggregates episodes and the optional stage summaries (nil when a
// stage did not run) into Metrics, with pass@k and pass^k for k = 1..k
// (none when k < 1; every k the samples allow when k is KAll). An episode is scored when its Score is non-nil and
// passed when Score == 1. The episodes are not modified.
func Compute(episodes []Episode, sft *SFTStats, grpo *GRPOStats, k int) Metrics {
	m := Metrics{
		Episodes:       len(episodes),
		ScoreHistogram: make([]int, HistogramBins),
		PassRateBy:     []GroupRate{},
		ToolErrorsBy:   []HarnessTools{},
		Attributions:   map[attribute.Class]int{},
		K:              max(k, 0),
		PerTask:        []TaskOutcome{},
	}
	for _, c := range AttributionClasses {
		m.Attributions[c] = 0
	}
	var sum float64
	for _, e := range episodes {
		m.ToolCalls += e.ToolCalls
		m.ToolErrors += e.ToolErrors
		for _, a := range e.Attributions {
			m.Attributions[a.Class]++
		}
		if e.Score == nil {
			m.InfraFailures++
			continue
		}
		m.ScoredEpisodes++
		sum += *e.Score
		if *e.Score == 1 {
			m.Passed++
		}
		m.ScoreHistogram[scoreBin(*e.Score)]++
	}
	m.PassRate = ratio(m.Passed, m.ScoredEpisodes)
	if m.ScoredEpisodes > 0 {
		m.MeanScore = ptr(sum / float64(m.ScoredEpisodes))
	}
	m.ToolErrorRate = ratio(m.ToolErrors, m.ToolCalls)

	// Per task (task, view, harness, policy).
	tasks := groupBy(episodes, func(e Episode) [4]string { return [4]string{e.Task, e.View, e.Harness, e.Policy} })
	for _, g := range tasks {
		eps := slices.Clone(g.eps)
		slices.SortStableFunc(eps, func(a, b Episode) int {
			return cmp.Or(cmp.Compare(a.Sample, b.Sample), cmp.Compare(a.Key, b.Key))
		})
		t := TaskOutcome{Task: g.key[0], View: g.key[1], Harness: g.key[2], Policy: g.key[3],
			PassAtK: map[int]float64{}, PassHatK: map[int]float64{}, Scores: []*float64{}}
		var s float64
		for _, e := range eps {
			t.Episodes++
			if e.Score == nil {
				t.InfraFailures++
				t.Scores = append(t.Scores, nil)
				continue
			}
			t.Scored++
			s += *e.Score
			if *e.Score == 1 {
				t.Passed++
			}
			t.Scores = append(t.Scores, ptr(*e.Score))
		}
		t.PassRate = ratio(t.Passed, t.Scored)
		if t.Scored > 0 {
			t.MeanScore = ptr(s / float64(t.Scored))
		}
		for j := 1; j <= min(k, t.Scored); j++ {
			t.PassAtK[j] = ratFloat(passAtK(t.Scored, t.Passed, j))
			t.PassHatK[j] = ratFloat(passHatK(t.Scored, t.Passed, j))
		}
		m.PerTask = append(m.PerTask, t)
	}
	m.PassAtK, m.PassHatK, m.PassKTasks = averageK(m.PerTask, k)

	// Per task over all its episodes.
	m.ByTask = []TaskPassK{}
	var pooled []TaskOutcome
	for _, g := range groupBy(episodes, func(e Episode) [4]string { return [4]string{e.Task} }) {
		t := TaskPassK{Task: g.key[0], PassAtK: map[int]float64{}, PassHatK: map[int]float64{}}
		for _, e := range g.eps {
			t.Episodes++
			if e.Score != nil {
				t.Scored++
				if *e.Score == 1 {
					t.Passed++
				}
			}
		}
		for j := 1; j <= min(k, t.Scored); j++ {
			t.PassAtK[j] = ratFloat(passAtK(t.Scored, t.Passed, j))
			t.PassHatK[j] = ratFloat(passHatK(t.Scored, t.Passed, j))
		}
		m.ByTask = append(m.ByTask, t)
		pooled = append(pooled, TaskOutcome{Scored: t.Scored, Passed: t.Passed})
	}
	m.TaskPassAtK, m.TaskPassHatK, m.TaskPassKTasks = averageK(pooled, k)
	if k == KAll {
		m.K = 0
		for _, t := range m.ByTask {
			m.K = max(m.K, t.Scored)
		}
	}

	// Per view x harness.
	for _, g := range groupBy(episodes, func(e Episode) [4]string { return [4]string{e.View, e.Harness} }) {
		r := GroupRate{View: g.key[0], Harness: g.key[1]}
		var s float64
		for _, e := range g.eps {
			r.Episodes++
			if e.Score == nil {
				r.InfraFailures++
				continue
			}
			r.Scored++
			s += *e.Score
			if *e.Score == 1 {
				r.Passed++
			}
		}
		r.PassRate = ratio(r.Passed, r.Scored)
		if r.Scored > 0 {
			r.MeanScore = ptr(s / float64(r.Scored))
		}
		var sub []TaskOutcome
		for _, t := range m.PerTask {
			if t.View == r.View && t.Harness == r.Harness {
				sub = append(sub, t)
			}
		}
		r.PassAtK, r.PassHatK, r.PassKTasks = averageK(sub, k)
		m.PassRateBy = append(m.PassRateBy, r)
	}

	// Tool errors per harness.
	for _, g := range groupBy(episodes, func(e Episode) [4]string { return [4]string{e.Harness} }) {
		h := HarnessTools{Harness: g.key[0]}
		for _, e := range g.eps {
			h.ToolCalls += e.ToolCalls
			h.ToolErrors += e.ToolErrors
		}
		h.ToolErrorRate = ratio(h.ToolErrors, h.ToolCalls)
		m.ToolErrorsBy = append(m.ToolErrorsBy, h)
	}

	if sft != nil {
		m.SFTMode = sft.Mode
		m.SFTTasks = sft.Tasks
		m.SFTTrajectories = sft.Accepted
		m.SFTRecords = sft.Records
		m.SFTKeptTurns = sft.KeptTurns
		m.SFTAttempts = sft.Attempts
		m.SFTTurnsResampled = sft.TurnsResampled
		m.SFTAttemptsPerKeptTurn = ratio(sft.Attempts, sft.KeptTurns)
	}
	if grpo != nil {
		m.GRPOLevel = grpo.Level
		m.GRPOGroups = grpo.Groups
		m.GRPONonZeroGroups = grpo.NonZeroGroups
		m.GRPOSegments = grpo.Segments
		m.GRPOMaskedSegments = grpo.MaskedSegments
		m.GRPOMaskedShare = ratio(grpo.MaskedSegments, grpo.Segments)
	}
	m.Why = Diagnose(episodes, grpo)
	return m
}

// averageK averages the tasks' pass@k and pass^k for k = 1..k over the
// tasks with at least k scored samples.
func averageK(tasks []TaskOutcome, k int) (at, hat map[int]float64, n map[int]int) {
	at, hat, n = map[int]float64{}, map[int]float64{}, map[int]int{}
	most := 0
	for _, t := range tasks {
		most = max(most, t.Scored)
	}
	for j := 1; j <= min(k, most); j++ {
		sa, sh := new(big.Rat), new(big.Rat)
		c := 0
		for _, t := range tasks {
			if t.Scored < j {
				continue
			}
			sa.Add(sa, passAtK(t.Scored, t.Passed, j))
			sh.Add(sh, passHatK(t.Scored, t.Passed, j))
			c++
		}
		if c > 0 {
			d := big.NewRat(int64(c), 1)
			at[j], hat[j], n[j] = ratFloat(sa.Quo(sa, d)), ratFloat(sh.Quo(sh, d)), c
		}
	}
	return at, hat, n
}

// passAtK is rollout.PassAtK computed exactly, 1 - prod_{i=n-c+1..n}
// (i-k)/i, so that averages over the same outcomes pooled differently
// (per task x view x harness, per task) are the same float, not 0.5 beside
// 0.49999999999999994. Arguments are as rollout.PassAtK's, already valid.
func passAtK(n, c, k int) *big.Rat {
	if n-c < k {
		return big.NewRat(1, 1)
	}
	p := big.NewRat(1, 1)
	for i := n - c + 1; i <= n; i++ {
		p.Mul(p, big.NewRat(int64(i-k), int64(i)))
	}
	return p.Sub(big.NewRat(1, 1), p)
}

// passHatK is rollout.PassHatK computed exactly: prod_{i=0..k-1}
// (c-i)/(n-i).
func passHatK(n, c, k int) *big.Rat {
	p := big.NewRat(1, 1)
	for i := 0; i < k; i++ {
		if c-i <= 0 {
			return new(big.Rat)
		}
		p.Mul(p, big.NewRat(int64(c-i), int64(n-i)))
	}
	return p
}

// ratFloat is the float64 nearest to r.
func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

type group struct {
	key [4]string
	eps []Episode
}

// groupBy groups episodes by key, in key order, episodes in input order.
func groupBy(episodes []Episode, key func(Episode) [4]string) []group {
	idx := map[[4]string]int{}
	var gs []group
	for _, e := range episodes {
		k := key(e)
		i, ok := idx[k]
		if !ok {
			i = len(gs)
			idx[k] = i
			gs = append(gs, group{key: k})
		}
		gs[i].eps = append(gs[i].eps, e)
	}
	slices.SortFunc(gs, func(a, b group) int {
		for i := range a.key {
			if c := naturalCompare(a.key[i], b.key[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	return gs
}

// naturalCompare orders two strings that are both decimal integers (tau2
// task ids: "2" before "10") by value, anything else as text.
func naturalCompare(a, b string) int {
	x, errA := strconv.ParseUint(a, 10, 64)
	y, errB := strconv.ParseUint(b, 10, 64)
	if errA == nil && errB == nil {
		return cmp.Compare(x, y)
	}
	return cmp.Compare(a, b)
}

// scoreBin is the histogram bin of a score in [0, 1]; out-of-range scores
// are clamped into the first or last bin.
func scoreBin(s float64) int {
	b := int(math.Floor(s*HistogramBins + 1e-9))
	return min(max(b, 0), HistogramBins-1)
}

func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	return ptr(float64(num) / float64(den))
}

func ptr(f float64) *float64 { return &f }

// WriteMetrics writes m as indented JSON (metrics.json), ending in a
// newline. Map keys are sorted, so the output is byte-for-byte
// deterministic.
func WriteMetrics(w io.Writer, m Metrics) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}
