package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync"

	"github.com/weft-dev/weft/core/task"
)

// GRPO levels (GRPOConfig.Level).
const (
	// LevelAtomicTurn is atomic-turn GRPO (WEFT): one group per atomic
	// turn, G candidates forked from the state and history reached so far,
	// each rewarded by the verification of that turn's atomic task.
	LevelAtomicTurn = "atomic_turn"
	// LevelTrajectory is trajectory-level GRPO, the ablation: one group
	// per task, G whole trajectories from the initial state, one reward
	// per trajectory broadcast to all its turns.
	LevelTrajectory = "trajectory"
)

// Continuations of the main episode after an atomic-turn group
// (GRPOConfig.Continue).
const (
	// ContinueFirst continues from the first successful candidate in
	// candidate order.
	ContinueFirst = "first"
	// ContinueRandom continues from a successful candidate drawn
	// uniformly with a PCG seeded by (GRPOConfig.Seed, task id, turn).
	ContinueRandom = "random"
	// ContinueReference continues by running the atomic task's reference
	// solution on the main episode.
	ContinueReference = "reference"
)

// MinGroupSize is the least group size G: a group-normalised advantage
// compares each candidate with the others, so a group of one carries no
// preference. core/config's grpo.group_size checks the same constant.
const MinGroupSize = 2

// GRPOConfig configures GRPO.
type GRPOConfig struct {
	// G is the group size, >= MinGroupSize.
	G int
	// Eps is the stabiliser of the advantage denominator; <= 0 means
	// DefaultEps (see GroupAdvantages).
	Eps float64
	// Level is LevelAtomicTurn ("" means it) or LevelTrajectory.
	Level string
	// Continue is ContinueFirst ("" means it), ContinueRandom or
	// ContinueReference. Used at LevelAtomicTurn only.
	Continue string
	// NoMask turns detector masking off (an ablation): patterns are still
	// detected and recorded, but no candidate is Masked. The zero value
	// masks.
	NoMask bool
	// Detectors are the undesirable-pattern detectors; nil means
	// DefaultDetectors(), a non-nil empty slice runs none.
	Detectors []Detector
	// Reward maps a turn to its scalar reward; nil means
	// TurnResult.Reward (binary completion of the atomic task). It is
	// called from GRPO's goroutine once a group's candidates have run,
	// never concurrently.
	Reward func(*TurnResult) float64
	// Concurrency is the most candidates run at once, >= 0; 0 means G.
	Concurrency int
	// Episode is passed to Env.Open.
	Episode EpisodeOptions
	// Seed seeds ContinueRandom.
	Seed uint64
	// OnGroup, when set, is called with each group as soon as it is
	// complete (advantages computed, continuation chosen), in turn order,
	// from GRPO's goroutine, before the next group starts: a streaming
	// consumer (the rollout service) sends it on while the task goes on.
	// The group is the one GRPOResult.Groups will hold; OnGroup must not
	// modify it. A task that later fails has had its earlier groups
	// reported all the same.
	OnGroup func(Group)
}

// GroupCandidate is one candidate of a GRPO group.
type GroupCandidate struct {
	// Sample is the TurnOptions.Sample the candidate ran with (its index
	// in the group).
	Sample uint64 `json:"sample"`
	// Reward is the reward its advantage was computed from: the turn's
	// (atomic turn) or the trajectory's (trajectory level).
	Reward float64 `json:"reward"`
	// Advantage is the group-relative advantage after masking. At
	// LevelTrajectory it is the trajectory's advantage before per-turn
	// masking; each turn's own value is in Turns[i].Advantage.
	Advantage float64 `json:"advantage"`
	// Masked is whether a detector fired and masking is on (at
	// LevelTrajectory: on any of its turns); Patterns the detectors that
	// fired (at LevelTrajectory: over all its turns, first firing order,
	// deduplicated).
	Masked   bool     `json:"masked"`
	Patterns []string `json:"patterns"`
	// Result is the candidate's turn (at LevelTrajectory: its last turn).
	Result *TurnResult `json:"result"`
	// Turns are, at LevelTrajectory only, every turn of the trajectory in
	// order.
	Turns []CandidateTurn `json:"turns"`
}

// CandidateTurn is one turn of a trajectory-level candidate.
type CandidateTurn struct {
	Result   *TurnResult `json:"result"`
	Patterns []string    `json:"patterns"`
	Masked   bool        `json:"masked"`
	// Advantage is the trajectory's advantage with this turn's masking
	// applied (A := min(A, 0) when Masked): what the turn's policy tokens
	// get.
	Advantage float64 `json:"advantage"`
}

// Group is one GRPO group: candidates sampled from the same state.
type Group struct {
	// ID is "<task id>/t<turn>" at LevelAtomicTurn and
	// "<task id>/trajectory" at LevelTrajectory.
	ID     string `json:"id"`
	TaskID string `json:"task_id"`
	// Turn and Atomic are the atomic turn the candidates ran (0 and the
	// first atomic task at LevelTrajectory).
	Turn   int    `json:"turn"`
	Atomic string `json:"atomic"`
	Level  string `json:"level"`
	// Candidates are in sample order (0..G-1), whatever order they ran in.
	Candidates []GroupCandidate `json:"candidates"`
	// NonZero is true when any candidate turn's advantage is non-zero:
	// the group carries a learning signal.
	NonZero bool `json:"nonzero"`
	// Continued is the candidate the main episode continued from, or -1
	// when it ran the reference solution (and at LevelTrajectory).
	Continued int `json:"continued"`
	// Reference is the reference turn run when Continued == -1 at
	// LevelAtomicTurn; nil otherwise.
	Reference *TurnResult `json:"reference"`
}

// GRPOResult is GRPO's outcome for one task.
type GRPOResult struct {
	TaskID string `json:"task_id"`
	Level  string `json:"level"`
	// Groups are in turn order (one per turn reached at LevelAtomicTurn,
	// one in all at LevelTrajectory).
	Groups []Group `json:"groups"`
	// Stopped is true when an atomic-turn episode ended early: no
	// candidate succeeded at StopTurn and the reference solution failed
	// too; StopReason says so in words. The group of StopTurn is recorded.
	Stopped    bool   `json:"stopped"`
	StopTurn   int    `json:"stop_turn"`
	StopReason string `json:"stop_reason"`
}

// GRPO runs GRPO rollouts of task t on env with a frozen policy and returns
// the groups with their advantages.
//
// LevelAtomicTurn (WEFT atomic-turn GRPO): at each turn, G episodes are
// forked from the main episode (the state and history reached so far) and
// candidate i runs Turn(Sample: i) on fork i, up to Concurrency at once.
// The reward of candidate i is r_i = Reward(result) (binary completion of
// the current atomic task by default); the detectors run on its segment.
// Advantages are CandidateAdvantages: A_i = (r_i - mean(r)) / (std(r) +
// eps) within the group (GRPO, Shao et al. 2024, arXiv:2402.03300; all zero
// when std == 0), then A_i := min(A_i, 0) for masked candidates. The
// advantage applies to that turn's policy tokens only. The episode then
// continues from a successful candidate — TurnResult.Reward >= 1 and not
// Masked — chosen by Continue, whose fork becomes the main episode; with
// ContinueReference, or when no candidate succeeded, the main episode runs
// the reference solution (Turn with Reference: true) instead, and if that
// fails too (Reward < 1) the task stops there (GRPOResult.Stopped).
//
// LevelTrajectory (the ablation): G episodes forked from the initial state
// each run every turn with Sample i. The trajectory reward is Reward of its
// last turn, whose TurnResult.Reward is the full-task verification (every
// atomic checkpoint and the overall checks). TrajectoryAdvantages
// broadcasts the group advantage to every turn; each turn on which a
// detector fired then gets min(A, 0). There is one group per task.
//
// Every episode opened or forked is closed on every path, errors included.
//
// Errors: a nil task, a task with no atomic tasks, G < MinGroupSize, a negative
// Concurrency, or an unknown Level or Continue are reported before
// anything runs. An error from Env.Open, Fork or Turn (an infrastructure
// failure) aborts the task and is returned wrapped with the task id and
// turn; the result is then nil. When one candidate fails, the others of
// its group are cancelled through their context and the first error to
// occur is returned.
func GRPO(ctx context.Context, env Env, t *task.Task, cfg GRPOConfig) (*GRPOResult, error) {
	d, err := newGRPODriver(t, cfg)
	if err != nil {
		return nil, err
	}
	main, err := env.Open(ctx, t, cfg.Episode)
	if err != nil {
		return nil, fmt.Errorf("train: task %s: open: %w", t.ID, err)
	}
	defer func() { main.Close() }()
	r := &GRPOResult{TaskID: t.ID, Level: d.level}
	if d.level == LevelTrajectory {
		g, err := d.trajectoryGroup(ctx, main)
		if err != nil {
			return nil, err
		}
		r.Groups = []Group{g}
		d.done(g)
		return r, nil
	}
	for turn := 0; turn < d.n; turn++ {
		g, next, err := d.turnGroup(ctx, main, turn)
		if err != nil {
			return nil, err
		}
		if next != nil {
			main.Close()
			main = next
		}
		r.Groups = append(r.Groups, g)
		d.done(g)
		if g.Continued < 0 && g.Reference.Reward < 1 {
			r.Stopped, r.StopTurn = true, turn
			if d.cont == ContinueReference {
				r.StopReason = fmt.Sprintf("turn %d (%s): the reference solution failed verification", turn, g.Atomic)
			} else {
				r.StopReason = fmt.Sprintf("turn %d (%s): no candidate succeeded and the reference solution failed verification", turn, g.Atomic)
			}
			break
		}
	}
	return r, nil
}

type grpoDriver struct {
	t      *task.Task
	cfg    GRPOConfig
	level  string
	cont   string
	n      int
	conc   int
	ds     []Detector
	reward func(*TurnResult) float64
}

func newGRPODriver(t *task.Task, cfg GRPOConfig) (*grpoDriver, error) {
	if t == nil {
		return nil, errors.New("train: GRPO: nil task")
	}
	d := &grpoDriver{t: t, cfg: cfg, level: cfg.Level, cont: cfg.Continue, ds: cfg.Detectors, reward: cfg.Reward}
	if d.level == "" {
		d.level = LevelAtomicTurn
	}
	if d.level != LevelAtomicTurn && d.level != LevelTrajectory {
		return nil, fmt.Errorf("train: GRPO: unknown level %q (want %q or %q)", cfg.Level, LevelAtomicTurn, LevelTrajectory)
	}
	if d.cont == "" {
		d.cont = ContinueFirst
	}
	switch d.cont {
	case ContinueFirst, ContinueRandom, ContinueReference:
	default:
		return nil, fmt.Errorf("train: GRPO: unknown continuation %q (want %q, %q or %q)", cfg.Continue, ContinueFirst, ContinueRandom, ContinueReference)
	}
	if cfg.G < MinGroupSize {
		return nil, fmt.Errorf("train: GRPO: group size %d < %d (a group-normalised advantage compares each candidate with the others)", cfg.G, MinGroupSize)
	}
	if cfg.Concurrency < 0 {
		return nil, fmt.Errorf("train: GRPO: negative concurrency %d", cfg.Concurrency)
	}
	d.conc = cfg.Concurrency
	if d.conc == 0 || d.conc > cfg.G {
		d.conc = cfg.G
	}
	if d.ds == nil {
		d.ds = DefaultDetectors()
	}
	if d.reward == nil {
		d.reward = func(r *TurnResult) float64 { return r.Reward }
	}
	d.n = len(t.Order())
	if d.n == 0 {
		return nil, fmt.Errorf("train: GRPO: task %s has no atomic tasks", t.ID)
	}
	return d, nil
}

// done reports a finished group to GRPOConfig.OnGroup.
func (d *grpoDriver) done(g Group) {
	if d.cfg.OnGroup != nil {
		d.cfg.OnGroup(g)
	}
}

// forks returns G forks of ep; on error it closes those made.
func (d *grpoDriver) forks(ctx context.Context, ep Episode, turn int) ([]Episode, error) {
	out := make([]Episode, 0, d.cfg.G)
	for range d.cfg.G {
		f, err := ep.Fork(ctx)
		if err != nil {
			closeAll(out)
			return nil, fmt.Errorf("train: task %s turn %d: fork: %w", d.t.ID, turn, err)
		}
		out = append(out, f)
	}
	return out, nil
}

func closeAll(eps []Episode) {
	for _, e := range eps {
		if e != nil {
			e.Close()
		}
	}
}

// run calls f(ctx, i) for i in 0..G-1, at most d.conc at once. When one
// fails the context of the others is cancelled; run returns the first
// error to occur.
func (d *grpoDriver) run(ctx context.Context, f func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
		sem   = make(chan struct{}, d.conc)
	)
	for i := range d.cfg.G {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := ctx.Err(); err != nil {
				once.Do(func() { first = fmt.Errorf("train: task %s candidate %d: %w", d.t.ID, i, err) })
				return
			}
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// detect returns the patterns that fire on a turn and whether it is masked.
func (d *grpoDriver) detect(res *TurnResult) ([]string, bool) {
	pats := Detect(res.Segment, d.ds)
	return pats, !d.cfg.NoMask && len(pats) > 0
}

// turnGroup runs one atomic-turn group from main. It returns the fork to
// continue from (nil when main itself ran the reference turn); every other
// fork is closed.
func (d *grpoDriver) turnGroup(ctx context.Context, main Episode, turn int) (Group, Episode, error) {
	forks, err := d.forks(ctx, main, turn)
	if err != nil {
		return Group{}, nil, err
	}
	results := make([]*TurnResult, d.cfg.G)
	err = d.run(ctx, func(ctx context.Context, i int) error {
		res, err := forks[i].Turn(ctx, TurnOptions{Sample: uint64(i)})
		if err != nil {
			return fmt.Errorf("train: task %s turn %d candidate %d: %w", d.t.ID, turn, i, err)
		}
		results[i] = res
		return nil
	})
	if err != nil {
		closeAll(forks)
		return Group{}, nil, err
	}
	g := Group{ID: fmt.Sprintf("%s/t%d", d.t.ID, turn), TaskID: d.t.ID, Turn: turn, Level: LevelAtomicTurn, Continued: -1}
	g.Atomic = results[0].Atomic
	cs := make([]Candidate, d.cfg.G)
	var ok []int
	for i, res := range results {
		pats, masked := d.detect(res)
		c := GroupCandidate{Sample: uint64(i), Reward: d.reward(res), Masked: masked, Patterns: pats, Result: res}
		g.Candidates = append(g.Candidates, c)
		cs[i] = Candidate{Reward: c.Reward, Masked: c.Masked, Patterns: c.Patterns}
		if res.Reward >= 1 && !c.Masked {
			ok = append(ok, i)
		}
	}
	for i, a := range CandidateAdvantages(cs, d.cfg.Eps) {
		g.Candidates[i].Advantage = a
		g.NonZero = g.NonZero || a != 0
	}
	if len(ok) > 0 {
		switch d.cont {
		case ContinueFirst:
			g.Continued = ok[0]
		case ContinueRandom:
			g.Continued = ok[d.rng(turn).IntN(len(ok))]
		}
	}
	var next Episode
	if g.Continued >= 0 {
		next = forks[g.Continued]
		forks[g.Continued] = nil
	}
	closeAll(forks)
	if next == nil {
		res, err := main.Turn(ctx, TurnOptions{Reference: true})
		if err != nil {
			return Group{}, nil, fmt.Errorf("train: task %s turn %d: reference: %w", d.t.ID, turn, err)
		}
		g.Reference = res
	}
	return g, next, nil
}

// rng is the continuation PRNG of a turn: PCG seeded by (Seed, FNV-1a of
// the task id and turn).
func (d *grpoDriver) rng(turn int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", d.t.ID, turn)
	return rand.New(rand.NewPCG(d.cfg.Seed, h.Sum64()))
}

// trajectoryGroup runs G whole trajectories forked from root.
func (d *grpoDriver) trajectoryGroup(ctx context.Context, root Episode) (Group, error) {
	forks, err := d.forks(ctx, root, 0)
	if err != nil {
		return Group{}, err
	}
	defer closeAll(forks)
	runs := make([][]*TurnResult, d.cfg.G)
	err = d.run(ctx, func(ctx context.Context, i int) error {
		rs := make([]*TurnResult, 0, d.n)
		for turn := 0; turn < d.n; turn++ {
			res, err := forks[i].Turn(ctx, TurnOptions{Sample: uint64(i)})
			if err != nil {
				return fmt.Errorf("train: task %s turn %d candidate %d: %w", d.t.ID, turn, i, err)
			}
			rs = append(rs, res)
		}
		runs[i] = rs
		return nil
	})
	if err != nil {
		return Group{}, err
	}
	g := Group{ID: d.t.ID + "/trajectory", TaskID: d.t.ID, Turn: 0, Atomic: runs[0][0].Atomic, Level: LevelTrajectory, Continued: -1}
	rewards := make([]float64, d.cfg.G)
	turns := make([]int, d.cfg.G)
	for i, rs := range runs {
		last := rs[len(rs)-1]
		c := GroupCandidate{Sample: uint64(i), Reward: d.reward(last), Result: last}
		for _, res := range rs {
			pats, masked := d.detect(res)
			c.Turns = append(c.Turns, CandidateTurn{Result: res, Patterns: pats, Masked: masked})
			c.Masked = c.Masked || masked
			for _, p := range pats {
				if !contains(c.Patterns, p) {
					c.Patterns = append(c.Patterns, p)
				}
			}
		}
		rewards[i], turns[i] = c.Reward, len(rs)
		g.Candidates = append(g.Candidates, c)
	}
	adv := TrajectoryAdvantages(rewards, turns, d.cfg.Eps)
	for i := range g.Candidates {
		c := &g.Candidates[i]
		c.Advantage = adv[i][0]
		for j := range c.Turns {
			a := adv[i][j]
			if c.Turns[j].Masked && a > 0 {
				a = 0
			}
			c.Turns[j].Advantage = a
			g.NonZero = g.NonZero || a != 0
		}
	}
	return g, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Segments returns one RLSegment per candidate turn, group by group in
// order, candidates in sample order (and, at LevelTrajectory, turns in
// order): GroupID, TaskID, Turn, Prompt = TurnResult.Prompt, Completion =
// TurnResult.Completion, Reward and Advantage (after masking) of the
// candidate turn, Masked, Patterns of the turn, Tools = ToolDefs(Tools).
// Reference turns are not segments: the policy did not produce them.
func (r *GRPOResult) Segments() []RLSegment {
	var out []RLSegment
	for _, g := range r.Groups {
		for _, c := range g.Candidates {
			if g.Level == LevelTrajectory {
				for _, ct := range c.Turns {
					out = append(out, segment(g, ct.Result, c.Reward, ct.Advantage, ct.Masked, ct.Patterns))
				}
				continue
			}
			out = append(out, segment(g, c.Result, c.Reward, c.Advantage, c.Masked, c.Patterns))
		}
	}
	return out
}

func segment(g Group, res *TurnResult, reward, adv float64, masked bool, pats []string) RLSegment {
	return RLSegment{
		GroupID: g.ID, TaskID: g.TaskID, Turn: res.Turn,
		Prompt: res.Prompt, Completion: res.Completion,
		Reward: reward, Advantage: adv, Masked: masked, Patterns: pats,
		Tools: ToolDefs(res.Tools),
	}
}

// VerlOptions are the dataset-level fields of GRPOResult.VerlRecords.
type VerlOptions struct {
	// DataSource is "data_source" (e.g. "weft/retail"); Split is
	// extra_info.split ("" means "train"); Ability is "ability" ("" means
	// "agent"); StartIndex is the extra_info.index of the first record.
	DataSource string
	Split      string
	Ability    string
	StartIndex int64
	// NonZeroOnly drops groups whose advantages are all zero (no learning
	// signal).
	NonZeroOnly bool
}

// VerlGroundTruth is the JSON in a weft verl record's
// reward_model.ground_truth: the task and the atomic turn whose
// verification is the reward.
type VerlGroundTruth struct {
	TaskID string `json:"task_id"`
	Turn   int    `json:"turn"`
	Atomic string `json:"atomic,omitempty"`
	Level  string `json:"level"`
}

// VerlRecords returns one verl RL row per group (a prompt verl rolls out
// from: the state the group's candidates were sampled from), in group
// order: Prompt is the group's shared prompt (candidate 0's
// TurnResult.Prompt; at LevelTrajectory its first turn's), RewardModel is
// {Style: "rule", GroundTruth: VerlGroundTruth as JSON}, and ExtraInfo
// carries split, index (StartIndex, StartIndex+1, ...), task id, turn,
// group id and the tools offered; its Reward and Advantage are 0 and
// Masked/Patterns empty, since a row is a state, not a segment (use
// Segments for per-candidate values).
func (r *GRPOResult) VerlRecords(opts VerlOptions) []VerlRLRecord {
	split, ability := opts.Split, opts.Ability
	if split == "" {
		split = "train"
	}
	if ability == "" {
		ability = "agent"
	}
	var out []VerlRLRecord
	idx := opts.StartIndex
	for _, g := range r.Groups {
		if (opts.NonZeroOnly && !g.NonZero) || len(g.Candidates) == 0 {
			continue
		}
		c := g.Candidates[0]
		res := c.Result
		if len(c.Turns) > 0 {
			res = c.Turns[0].Result
		}
		gt, _ := json.Marshal(VerlGroundTruth{TaskID: g.TaskID, Turn: g.Turn, Atomic: g.Atomic, Level: g.Level})
		out = append(out, VerlRLRecord{
			DataSource:  opts.DataSource,
			Prompt:      res.Prompt,
			Ability:     ability,
			RewardModel: VerlRewardModel{Style: "rule", GroundTruth: string(gt)},
			ExtraInfo: VerlExtraInfo{
				Split: split, Index: idx, TaskID: g.TaskID, Turn: g.Turn, GroupID: g.ID,
				Tools: ToolDefs(res.Tools),
			},
		})
		idx++
	}
	return out
}

// GRPOSummary aggregates GRPO results.
type GRPOSummary struct {
	// Tasks is the number of results, Stopped those that ended early.
	Tasks   int
	Stopped int
	// Groups is the number of groups, NonZero those with a learning
	// signal (Group.NonZero).
	Groups  int
	NonZero int
	// Segments is the number of candidate turns (len of Segments()),
	// Masked those masked, ReferenceTurns the reference continuations
	// run.
	Segments       int
	Masked         int
	ReferenceTurns int
	// Patterns counts candidate turns on which each detector fired.
	Patterns map[string]int
}

// SummarizeGRPO adds up results (nil entries are skipped).
func SummarizeGRPO(results []*GRPOResult) GRPOSummary {
	var s GRPOSummary
	count := func(masked bool, pats []string) {
		s.Segments++
		if masked {
			s.Masked++
		}
		for _, p := range pats {
			if s.Patterns == nil {
				s.Patterns = map[string]int{}
			}
			s.Patterns[p]++
		}
	}
	for _, r := range results {
		if r == nil {
			continue
		}
		s.Tasks++
		if r.Stopped {
			s.Stopped++
		}
		for _, g := range r.Groups {
			s.Groups++
			if g.NonZero {
				s.NonZero++
			}
			if g.Reference != nil {
				s.ReferenceTurns++
			}
			for _, c := range g.Candidates {
				if g.Level == LevelTrajectory {
					for _, ct := range c.Turns {
						count(ct.Masked, ct.Patterns)
					}
					continue
				}
				count(c.Masked, c.Patterns)
			}
		}
	}
	return s
}

// MaskedShare is Masked/Segments in [0, 1]; 0 when there are no segments.
func (s GRPOSummary) MaskedShare() float64 {
	if s.Segments == 0 {
		return 0
	}
	return float64(s.Masked) / float64(s.Segments)
}

// NonZeroShare is NonZero/Groups in [0, 1]; 0 when there are no groups.
func (s GRPOSummary) NonZeroShare() float64 {
	if s.Groups == 0 {
		return 0
	}
	return float64(s.NonZero) / float64(s.Groups)
}
