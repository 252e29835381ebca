package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"

	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// sftLine is one line of sft.jsonl: one task's rejection sampling in one
// mode.
type sftLine struct {
	Key    string              `json:"key"` // mode/task id
	Result *train.SampleResult `json:"result"`
}

// grpoLine is one line of grpo.jsonl: one task's GRPO groups.
type grpoLine struct {
	Key    string            `json:"key"` // task id
	Result *train.GRPOResult `json:"result"`
}

func (r *runner) trainEnv(policy string) *host.TrainEnv {
	return r.spec.TrainEnvFor(r.spec.Policies[policy].Turn, &r.refs)
}

// Failure is a task a training stage could not finish: an infrastructure
// failure that outlived its retries, or an error of the task itself. The
// task is not in the stage's journal, so a rerun tries it again.
type Failure struct {
	Stage   string `json:"stage"`
	TaskID  string `json:"task_id"`
	Kind    string `json:"kind"` // the InfraError kind, or "error"
	Message string `json:"message"`
}

// eligible are the spec's tasks a training stage runs: those with atomic
// tasks (a task with only reads and an answer has no turn to sample or
// branch at) that keep says to keep.
func (r *runner) eligible(keep func(*task.Task) bool) []*task.Task {
	var out []*task.Task
	for _, t := range r.spec.Tasks {
		if len(t.Atomic) > 0 && keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// forTasks runs fn over the tasks not done yet, at most conc at a time,
// reporting progress under stage. A retryable infrastructure failure is
// retried up to Rollout.Retries times with Rollout.Backoff between
// attempts; a task that still fails is recorded in r.failures and the
// stage goes on. When ctx ends it stops starting tasks and returns ctx's
// error.
func (r *runner) forTasks(ctx context.Context, stage string, conc int, tasks []*task.Task, done func(t *task.Task) bool, fn func(ctx context.Context, t *task.Task) error) error {
	var todo []*task.Task
	for _, t := range tasks {
		if !done(t) {
			todo = append(todo, t)
		}
	}
	skipped := len(tasks) - len(todo)
	r.event(Event{Stage: stage, Total: len(todo), Skipped: skipped})
	sem := make(chan struct{}, max(1, conc))
	var wg sync.WaitGroup
	var mu sync.Mutex
	n := 0
	for _, t := range todo {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(t *task.Task) {
			defer wg.Done()
			defer func() { <-sem }()
			err := r.retryTask(ctx, func(ctx context.Context) error { return fn(ctx, t) })
			mu.Lock()
			defer mu.Unlock()
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				r.failures = append(r.failures, taskFailure(stage, t, err))
			}
			n++
			r.event(Event{Stage: stage, Done: n, Total: len(todo), Skipped: skipped})
		}(t)
	}
	wg.Wait()
	r.event(Event{Stage: stage, End: true, Stopped: ctx.Err() != nil})
	return ctx.Err()
}

// checkResume fails the stage once, before any task, when its harness
// cannot resume a conversation (every task would fail the same way).
func (r *runner) checkResume(ctx context.Context, stage, name string) error {
	h, err := r.spec.harness(ctx, name)
	if err != nil {
		return fmt.Errorf("%s: harness %q: %w", stage, name, err)
	}
	var d plugin.DescribeResponse
	if err := h.Describe(ctx, &plugin.DescribeRequest{}, &d); err != nil {
		return fmt.Errorf("%s: harness %q: describe: %w", stage, name, err)
	}
	if !slices.Contains(d.Capabilities, plugin.CapabilityResume) {
		return fmt.Errorf("%s: harness %q (%s) does not declare the %q capability: turn-by-turn sampling resumes conversations (RunEpisodeRequest.history); use a built-in harness or add resume support (docs/plugins.md)", stage, name, d.Name, plugin.CapabilityResume)
	}
	return nil
}

func otherMode(mode string) string {
	if mode == train.ModeEndToEnd {
		return train.ModePrefix
	}
	return train.ModeEndToEnd
}

func (r *runner) sft(ctx context.Context) error {
	sp := r.spec.SFT
	j, err := openJournal(r.path(FileSFT), "key", func(string, []byte) error { return nil })
	if err != nil {
		return err
	}
	defer j.close()
	if err := r.checkResume(ctx, StageSFT, sp.Harness); err != nil {
		return err
	}
	modes := r.sftModes()
	done := func(t *task.Task) bool {
		for _, m := range modes {
			if !j.has(m + "/" + t.ID) {
				return false
			}
		}
		return true
	}
	all := func(*task.Task) bool { return true }
	if r.opts.Dispatcher != nil {
		return r.dispatchTasks(ctx, StageSFT, r.eligible(all), done, j.has, j.add)
	}
	return r.forTasks(ctx, StageSFT, sp.Concurrency, r.eligible(all), done, func(ctx context.Context, t *task.Task) error {
		return r.sftTask(ctx, t, j.add, j.has)
	})
}

func (r *runner) sftModes() []string {
	sp := r.spec.SFT
	modes := []string{sp.Mode}
	if sp.Compare {
		modes = append(modes, otherMode(sp.Mode))
	}
	return modes
}

// sftTask is one task's rejection sampling in every mode whose line has
// not: each finished mode's sft.jsonl line goes to write.
func (r *runner) sftTask(ctx context.Context, t *task.Task, write func(key string, v any) error, has func(string) bool) error {
	sp := r.spec.SFT
	env := r.trainEnv(sp.Policy)
	for _, m := range r.sftModes() {
		key := m + "/" + t.ID
		if has(key) {
			continue
		}
		res, err := train.RejectionSample(ctx, env, t, SamplingConfigFor(sp, m, t.ID))
		if err != nil {
			return err
		}
		if err := write(key, sftLine{Key: key, Result: res}); err != nil {
			return err
		}
	}
	return nil
}

func (r *runner) grpo(ctx context.Context) error {
	gp := r.spec.GRPO
	j, err := openJournal(r.path(FileGRPO), "key", func(string, []byte) error { return nil })
	if err != nil {
		return err
	}
	defer j.close()
	if err := r.checkResume(ctx, StageGRPO, gp.Harness); err != nil {
		return err
	}
	keep, err := r.filterTasks()
	if err != nil {
		return err
	}
	r.kept = keep
	done := func(t *task.Task) bool { return j.has(t.ID) }
	if r.opts.Dispatcher != nil {
		return r.dispatchTasks(ctx, StageGRPO, r.eligible(keep), done, j.has, j.add)
	}
	return r.forTasks(ctx, StageGRPO, gp.Concurrency, r.eligible(keep), done, func(ctx context.Context, t *task.Task) error {
		return r.grpoTask(ctx, t, j.add, nil)
	})
}

// grpoTask is one task's whole GRPO run; its grpo.jsonl line goes to
// write.
func (r *runner) grpoTask(ctx context.Context, t *task.Task, write func(key string, v any) error, _ func(string) bool) error {
	gp := r.spec.GRPO
	res, err := train.GRPO(ctx, r.trainEnv(gp.Policy), t, GRPOConfigFor(gp, t.ID))
	if err != nil {
		return err
	}
	return write(t.ID, grpoLine{Key: t.ID, Result: res})
}

// filterTasks applies the task–verifier consistency filter (train.Filter)
// to the tasks whose rollout episodes carry rubric scores from a judge
// (Spec.Judge), records every decision in filter.json, and returns which
// tasks the grpo stage keeps. Tasks without rubric scores are not judged
// and kept ("not judged: ..." in filter.json).
func (r *runner) filterTasks() (func(*task.Task) bool, error) {
	gp := r.spec.GRPO
	if gp.Filter == nil {
		return func(*task.Task) bool { return true }, nil
	}
	byTask := map[string]*train.TaskScores{}
	for _, e := range r.loadEpisodesOnly() {
		if e.Score == nil || e.RubricScore == nil {
			continue
		}
		ts := byTask[e.Task]
		if ts == nil {
			ts = &train.TaskScores{TaskID: e.Task}
			byTask[e.Task] = ts
		}
		ts.Scores = append(ts.Scores, train.ScorePair{Executable: *e.Score, Rubric: *e.RubricScore})
	}
	var in []train.TaskScores
	for _, t := range r.spec.Tasks {
		if ts := byTask[t.ID]; ts != nil {
			in = append(in, *ts)
		}
	}
	decisions := train.Filter(in, *gp.Filter)
	drop := map[string]bool{}
	type record struct {
		TaskID      string   `json:"task_id"`
		Keep        bool     `json:"keep"`
		Judged      bool     `json:"judged"`
		Reason      string   `json:"reason,omitempty"`
		Correlation *float64 `json:"correlation"`
		Agreement   *float64 `json:"agreement"`
		N           int      `json:"rollouts"`
	}
	judged := map[string]train.Decision{}
	for _, d := range decisions {
		judged[d.TaskID] = d
		if !d.Keep {
			drop[d.TaskID] = true
		}
	}
	var out []record
	for _, t := range r.spec.Tasks {
		d, ok := judged[t.ID]
		if !ok {
			out = append(out, record{TaskID: t.ID, Keep: true, Reason: "not judged: no rollout of this task has a rubric score (the task has no rubric items, or no judge is configured)"})
			continue
		}
		out = append(out, record{TaskID: t.ID, Keep: d.Keep, Judged: true, Reason: d.Reason, Correlation: finite(d.Correlation), Agreement: finite(d.Agreement), N: d.N})
	}
	if err := writeJSON(r.path(FileFilter), out); err != nil {
		return nil, err
	}
	return func(t *task.Task) bool { return !drop[t.ID] }, nil
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func (r *runner) loadEpisodesOnly() []report.Episode {
	var out []report.Episode
	openJournalRead(r.path(FileEpisodes), func(line []byte) error {
		var e report.Episode
		if err := json.Unmarshal(line, &e); err == nil {
			out = append(out, e)
		}
		return nil
	})
	return out
}

func (r *runner) loadSFT() (main, other []*train.SampleResult, err error) {
	if r.spec.SFT == nil {
		return nil, nil, nil
	}
	by := map[string]*train.SampleResult{}
	if _, err := openJournalRead(r.path(FileSFT), func(line []byte) error {
		var l sftLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		by[l.Key] = l.Result
		return nil
	}); err != nil {
		return nil, nil, err
	}
	mode := r.spec.SFT.Mode
	for _, t := range r.spec.Tasks {
		if res := by[mode+"/"+t.ID]; res != nil {
			main = append(main, res)
		}
		if res := by[otherMode(mode)+"/"+t.ID]; res != nil {
			other = append(other, res)
		}
	}
	return main, other, nil
}

func (r *runner) loadGRPO() ([]*train.GRPOResult, error) {
	by := map[string]*train.GRPOResult{}
	if _, err := openJournalRead(r.path(FileGRPO), func(line []byte) error {
		var l grpoLine
		if err := json.Unmarshal(line, &l); err != nil {
			return err
		}
		by[l.Key] = l.Result
		return nil
	}); err != nil {
		return nil, err
	}
	var out []*train.GRPOResult
	for _, t := range r.spec.Tasks {
		if r.kept != nil && !r.kept(t) {
			continue // dropped by the consistency filter (of this run)
		}
		if res := by[t.ID]; res != nil {
			out = append(out, res)
		}
	}
	return out, nil
}

// Reward names of the grpo block.
const (
	RewardBinary = "binary"
	// RewardScore is the mean checkpoint score after the turn.
	RewardScore = "score"
)

var ftrlVariants = map[string]train.Variant{
	"ftrl_f1": train.SolveF1, "ftrl_p": train.SolveP, "ftrl_r": train.SolveR, "ftrl_precision": train.SolvePrecision,
}

// rewardFunc maps a reward name to the GRPO candidate reward; nil for
// "binary" (TurnResult.Reward). The FTRL rewards are train.FTRLTurnScores
// (weft's default FTRL mode) without FTRL sample state: the atomic task is
// the turn's only sub-question, q = 1 when the turn completed it
// (TurnResult.Reward == 1), p = the turn's tool calls, t = 1 unsolved
// before the turn, the answer correct when the atomic task was completed.
func rewardFunc(name string) func(*train.TurnResult) float64 {
	if name == RewardScore {
		return func(tr *train.TurnResult) float64 {
			if len(tr.Checkpoints) == 0 {
				return tr.Reward
			}
			sum := 0.0
			for _, c := range tr.Checkpoints {
				sum += c.Score
			}
			return sum / float64(len(tr.Checkpoints))
		}
	}
	v, ok := ftrlVariants[name]
	if !ok {
		return nil
	}
	return func(tr *train.TurnResult) float64 {
		r, err := train.FTRLTurnScores(context.Background(), tr, nil, train.FTRLDefault)
		if err != nil { // only an invalid mode, which FTRLDefault is not
			panic(err)
		}
		return r.Scores.Get(v)
	}
}

// RewardNames lists the accepted grpo reward names.
func RewardNames() []string {
	out := []string{RewardBinary, RewardScore}
	for n := range ftrlVariants {
		out = append(out, n)
	}
	sort.Strings(out[2:])
	return out
}
