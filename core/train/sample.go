package train

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// Rejection-sampling modes (SamplingConfig.Mode).
const (
	// ModePrefix is prefix-preserving rejection sampling (WEFT): each
	// atomic turn is verified after it runs and, on failure, only that turn
	// is resampled from the restored pre-turn state and history; every
	// verified prefix is kept.
	ModePrefix = "prefix"
	// ModeEndToEnd is end-to-end rejection sampling, the baseline: whole
	// trajectories are sampled from the initial state and kept or dropped
	// as a whole.
	ModeEndToEnd = "end_to_end"
)

// SamplingConfig configures RejectionSample.
type SamplingConfig struct {
	// Mode is ModePrefix ("" means ModePrefix) or ModeEndToEnd.
	Mode string
	// Retries is k >= 0, the retry budget. ModePrefix runs up to k+1
	// attempts of each turn; ModeEndToEnd runs up to k+1 attempts of the
	// whole trajectory.
	Retries int
	// Episode is passed to Env.Open.
	Episode EpisodeOptions
	// Detectors are the undesirable-pattern detectors run on every
	// attempt; an attempt on which one fires is rejected even when
	// verified. nil means DefaultDetectors(); a non-nil empty slice runs
	// none.
	Detectors []Detector
	// Threshold is the least TurnResult.Reward an attempt needs to be
	// accepted (see Accept). 0 means 1: every checkpoint verified after
	// the turn passed. It must lie in [0, 1].
	Threshold float64
}

// TurnSampling is the record of one atomic turn under rejection sampling.
type TurnSampling struct {
	// Turn is the 0-based index in Task.Order(); Atomic the atomic task's
	// id (from the first attempt's TurnResult).
	Turn   int    `json:"turn"`
	Atomic string `json:"atomic"`
	// Attempts is how many times the turn ran (1..Retries+1).
	Attempts int `json:"attempts"`
	// Accepted is true when the turn is kept: in ModePrefix, an attempt
	// passed; in ModeEndToEnd, the trajectory it belongs to was kept.
	Accepted bool `json:"accepted"`
	// Rewards and Patterns are per attempt, in order (len == Attempts):
	// the attempt's TurnResult.Reward and the detectors that fired on it
	// (nil when none).
	Rewards  []float64  `json:"rewards"`
	Patterns [][]string `json:"patterns"`
	// Kept is the accepted attempt's result (nil when none was kept).
	Kept *TurnResult `json:"kept"`
}

// SampleResult is rejection sampling's outcome for one task.
type SampleResult struct {
	TaskID string `json:"task_id"`
	Mode   string `json:"mode"`
	// Accepted is true when every turn was kept: the whole trajectory
	// verified.
	Accepted bool `json:"accepted"`
	// Messages is the kept canonical conversation, system message first:
	// the whole trajectory when Accepted; in ModePrefix otherwise the
	// verified prefix, i.e. the conversation up to the end of the last
	// accepted turn; nil when no turn was kept (ModePrefix with turn 0
	// rejected, or ModeEndToEnd rejected).
	Messages []model.Message `json:"messages"`
	// Tools are the tools offered in the kept turns, in order of first
	// appearance, deduplicated by name.
	Tools []model.Tool `json:"tools"`
	// Turns has one entry per turn that ran, in order. In ModePrefix it
	// ends at the first rejected turn.
	Turns []TurnSampling `json:"turns"`
	// Attempts is the number of turn attempts run in total (the sampling
	// cost in atomic turns); KeptTurns the number of turns kept.
	Attempts  int `json:"attempts"`
	KeptTurns int `json:"kept_turns"`
	// Stats tallies the turns: one SamplingStats.Add per entry of Turns,
	// its candidates the turn's attempts.
	Stats SamplingStats `json:"stats"`
}

// SFT returns the kept conversation as an SFT record (TRL conversational
// format: Messages and ToolDefs(Tools)), and false when nothing was kept
// (KeptTurns == 0). A prefix that is not Accepted is still returned: it is
// verified data (prefix-preserving rejection sampling).
func (r *SampleResult) SFT() (SFTRecord, bool) {
	if r == nil || r.KeptTurns == 0 || len(r.Messages) == 0 {
		return SFTRecord{}, false
	}
	msgs := make([]model.Message, len(r.Messages))
	copy(msgs, r.Messages)
	return SFTRecord{Messages: msgs, Tools: ToolDefs(r.Tools)}, true
}

// RejectionSample runs task t on env with rejection sampling (WEFT,
// prefix-preserving rejection sampling for SFT).
//
// ModePrefix runs the composed task turn by turn, one atomic task per turn
// in DAG order (Task.Order). Before turn k it snapshots the episode;
// attempt a (0-based) of the turn runs Turn with TurnOptions{Sample: a}
// after restoring the snapshot (for a > 0), and is verified: it is
// accepted when Accept keeps it (TurnResult.Reward >= Threshold and no
// detector fired). The first accepted attempt is kept and the episode
// moves on; when all Retries+1 attempts fail, sampling stops and the
// verified prefix (turns 0..k-1) is kept.
//
// ModeEndToEnd runs up to Retries+1 whole trajectories from the initial
// state (restored from a snapshot taken right after Open): trajectory
// attempt a runs every turn with Sample a, with no early stop (the
// baseline has no per-turn signal), and is kept when every one of its
// turns is accepted by the same rule. The first kept trajectory ends
// sampling; otherwise nothing is kept.
//
// Errors: a nil task, a task with no atomic tasks, an unknown Mode, a
// negative Retries or a Threshold outside [0, 1] are reported before
// anything runs. An error from Env.Open, Turn, Snapshot or Restore (an
// infrastructure failure, typically *rollout.InfraError) aborts the task
// and is returned wrapped with the task id, turn and attempt; the result is
// then nil. The episode is closed on every path.
func RejectionSample(ctx context.Context, env Env, t *task.Task, cfg SamplingConfig) (*SampleResult, error) {
	mode, threshold, n, err := checkSampling(t, cfg)
	if err != nil {
		return nil, err
	}
	ds := cfg.Detectors
	if ds == nil {
		ds = DefaultDetectors()
	}
	ep, err := env.Open(ctx, t, cfg.Episode)
	if err != nil {
		return nil, fmt.Errorf("train: task %s: open: %w", t.ID, err)
	}
	defer ep.Close()
	s := sampler{ctx: ctx, ep: ep, taskID: t.ID, n: n, k: cfg.Retries, ds: ds, threshold: threshold}
	r := &SampleResult{TaskID: t.ID, Mode: mode}
	if mode == ModePrefix {
		err = s.prefix(r)
	} else {
		err = s.endToEnd(r)
	}
	if err != nil {
		return nil, err
	}
	for i := range r.Turns {
		ts := &r.Turns[i]
		r.Attempts += ts.Attempts
		if ts.Accepted {
			r.KeptTurns++
		}
		cs := make([]Candidate, ts.Attempts)
		for a := range cs {
			cs[a] = Candidate{Reward: ts.Rewards[a], Masked: len(ts.Patterns[a]) > 0, Patterns: ts.Patterns[a]}
		}
		kept := -1
		if ts.Accepted {
			kept = ts.Attempts - 1 // sampling stops at the kept attempt (turn or trajectory)
		}
		r.Stats.Add(cs, kept)
		if ts.Accepted && ts.Kept != nil {
			r.Tools = appendTools(r.Tools, ts.Kept.Tools)
		}
	}
	r.Accepted = r.KeptTurns == n
	return r, nil
}

func checkSampling(t *task.Task, cfg SamplingConfig) (mode string, threshold float64, n int, err error) {
	if t == nil {
		return "", 0, 0, errors.New("train: RejectionSample: nil task")
	}
	mode = cfg.Mode
	if mode == "" {
		mode = ModePrefix
	}
	if mode != ModePrefix && mode != ModeEndToEnd {
		return "", 0, 0, fmt.Errorf("train: RejectionSample: unknown mode %q (want %q or %q)", cfg.Mode, ModePrefix, ModeEndToEnd)
	}
	if cfg.Retries < 0 {
		return "", 0, 0, fmt.Errorf("train: RejectionSample: negative retries %d", cfg.Retries)
	}
	threshold = cfg.Threshold
	if math.IsNaN(threshold) || threshold < 0 || threshold > 1 {
		return "", 0, 0, fmt.Errorf("train: RejectionSample: threshold %g outside [0, 1]", cfg.Threshold)
	}
	if threshold == 0 {
		threshold = 1
	}
	n = len(t.Order())
	if n == 0 {
		return "", 0, 0, fmt.Errorf("train: RejectionSample: task %s has no atomic tasks", t.ID)
	}
	return mode, threshold, n, nil
}

type sampler struct {
	ctx       context.Context
	ep        Episode
	taskID    string
	n, k      int
	ds        []Detector
	threshold float64
}

// attempt runs one attempt of the next turn and records it in ts; it
// reports whether the attempt is accepted.
func (s *sampler) attempt(ts *TurnSampling, sample int) (*TurnResult, bool, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, false, s.wrap(ts.Turn, sample, "turn", err)
	}
	res, err := s.ep.Turn(s.ctx, TurnOptions{Sample: uint64(sample)})
	if err != nil {
		return nil, false, s.wrap(ts.Turn, sample, "turn", err)
	}
	if ts.Attempts == 0 {
		ts.Atomic = res.Atomic
	}
	pats := Detect(res.Segment, s.ds)
	ts.Attempts++
	ts.Rewards = append(ts.Rewards, res.Reward)
	ts.Patterns = append(ts.Patterns, pats)
	ok := Accept([]Candidate{{Reward: res.Reward, Masked: len(pats) > 0}}, s.threshold) == 0
	return res, ok, nil
}

func (s *sampler) wrap(turn, attempt int, op string, err error) error {
	return fmt.Errorf("train: task %s turn %d attempt %d: %s: %w", s.taskID, turn, attempt, op, err)
}

func (s *sampler) prefix(r *SampleResult) error {
	for turn := 0; turn < s.n; turn++ {
		before := s.ep.Messages()
		snap, err := s.ep.Snapshot(s.ctx)
		if err != nil {
			return s.wrap(turn, 0, "snapshot", err)
		}
		ts := TurnSampling{Turn: turn}
		for a := 0; a <= s.k; a++ {
			if a > 0 {
				if err := s.ep.Restore(s.ctx, snap); err != nil {
					return s.wrap(turn, a, "restore", err)
				}
			}
			res, ok, err := s.attempt(&ts, a)
			if err != nil {
				return err
			}
			if ok {
				ts.Accepted, ts.Kept = true, res
				break
			}
		}
		r.Turns = append(r.Turns, ts)
		if !ts.Accepted {
			if turn > 0 {
				r.Messages = before
			}
			return nil
		}
	}
	r.Messages = s.ep.Messages()
	return nil
}

func (s *sampler) endToEnd(r *SampleResult) error {
	snap, err := s.ep.Snapshot(s.ctx)
	if err != nil {
		return s.wrap(0, 0, "snapshot", err)
	}
	r.Turns = make([]TurnSampling, s.n)
	for turn := range r.Turns {
		r.Turns[turn].Turn = turn
	}
	for a := 0; a <= s.k; a++ {
		if a > 0 {
			if err := s.ep.Restore(s.ctx, snap); err != nil {
				return s.wrap(0, a, "restore", err)
			}
		}
		all := true
		kept := make([]*TurnResult, s.n)
		for turn := 0; turn < s.n; turn++ {
			res, ok, err := s.attempt(&r.Turns[turn], a)
			if err != nil {
				return err
			}
			kept[turn] = res
			all = all && ok
		}
		if all {
			for turn := range r.Turns {
				r.Turns[turn].Accepted, r.Turns[turn].Kept = true, kept[turn]
			}
			r.Messages = s.ep.Messages()
			return nil
		}
	}
	return nil
}

// appendTools appends the tools of add not yet in tools (by name).
func appendTools(tools, add []model.Tool) []model.Tool {
	for _, t := range add {
		dup := false
		for _, have := range tools {
			if have.Name == t.Name {
				dup = true
				break
			}
		}
		if !dup {
			tools = append(tools, t)
		}
	}
	return tools
}

// SamplingSummary aggregates rejection sampling over many tasks.
type SamplingSummary struct {
	// Tasks is the number of results; Accepted the trajectories kept whole
	// (SampleResult.Accepted); WithData the results that yield an SFT
	// record (KeptTurns > 0).
	Tasks    int
	Accepted int
	WithData int
	// Turns is the number of turns that ran, KeptTurns those kept,
	// Attempts the turn attempts run, Resampled the turns that ran more
	// than once.
	Turns     int
	KeptTurns int
	Attempts  int
	Resampled int
	// Stats is the sum of the results' SamplingStats.
	Stats SamplingStats
}

// SummarizeSampling adds up results (nil entries are skipped).
func SummarizeSampling(results []*SampleResult) SamplingSummary {
	var s SamplingSummary
	for _, r := range results {
		if r == nil {
			continue
		}
		s.Tasks++
		if r.Accepted {
			s.Accepted++
		}
		if r.KeptTurns > 0 {
			s.WithData++
		}
		s.Turns += len(r.Turns)
		s.KeptTurns += r.KeptTurns
		s.Attempts += r.Attempts
		for _, ts := range r.Turns {
			if ts.Attempts > 1 {
				s.Resampled++
			}
		}
		s.Stats.Turns += r.Stats.Turns
		s.Stats.Accepted += r.Stats.Accepted
		s.Stats.Attempts += r.Stats.Attempts
		s.Stats.Masked += r.Stats.Masked
		for p, c := range r.Stats.Patterns {
			if s.Stats.Patterns == nil {
				s.Stats.Patterns = map[string]int{}
			}
			s.Stats.Patterns[p] += c
		}
	}
	return s
}

// AcceptanceRate is Accepted/Tasks, the share of tasks whose whole
// trajectory was kept, in [0, 1]; 0 when there are no tasks.
func (s SamplingSummary) AcceptanceRate() float64 {
	if s.Tasks == 0 {
		return 0
	}
	return float64(s.Accepted) / float64(s.Tasks)
}

// KeptTurnRate is KeptTurns/Attempts, the share of turn attempts that
// ended up in the kept data, in [0, 1]; 0 when nothing ran.
func (s SamplingSummary) KeptTurnRate() float64 {
	if s.Attempts == 0 {
		return 0
	}
	return float64(s.KeptTurns) / float64(s.Attempts)
}
