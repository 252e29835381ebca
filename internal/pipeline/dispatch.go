package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/failure"
)

// Unit is one job of a work stage, the grain a Dispatcher moves: Stage
// StageRollout with Key a rollout.Job's Key ("task/view/harness/policy/
// sample", one episode); StageSFT with Key a task id (the task's rejection
// sampling in every configured mode); StageGRPO with Key a task id (the
// task's whole GRPO run: its turn groups are sequential, each continuing
// from the previous group's candidate, and a group's forks share one
// session, so it is one unit).
type Unit struct {
	Stage string `json:"stage"`
	Key   string `json:"key"`
}

// ID is "stage/key", a unit's identity within a run (results are
// deduplicated by it).
func (u Unit) ID() string { return u.Stage + "/" + u.Key }

// Line is one journal line a training unit produced: its key in the
// stage's journal (sft.jsonl: "mode/task id"; grpo.jsonl: the task id) and
// the line's JSON, written as is.
type Line struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// UnitResult is what running a Unit gave. Exactly one of Outcome (a
// rollout unit's outcome, as rollout.Run returns it), Lines (a training
// unit that finished), Failure (a training unit that did not: the same
// record the in-process stage keeps) or Infra (the unit could not run on
// any worker: a module digest none has, say) is set.
type UnitResult struct {
	Stage   string              `json:"stage"`
	Key     string              `json:"key"`
	Outcome *rollout.Outcome    `json:"outcome,omitempty"`
	Lines   []Line              `json:"lines,omitempty"`
	Failure *Failure            `json:"failure,omitempty"`
	Infra   *rollout.InfraError `json:"infra,omitempty"`
}

// Unit is r's identity.
func (r *UnitResult) Unit() Unit { return Unit{Stage: r.Stage, Key: r.Key} }

// Check reports a result that is not usable: an unknown stage, no key, or
// not exactly one of Outcome, Lines, Failure and Infra set (a rollout
// outcome must carry its key).
func (r *UnitResult) Check() error {
	switch r.Stage {
	case StageRollout, StageSFT, StageGRPO:
	default:
		return fmt.Errorf("unit result: unknown stage %q", r.Stage)
	}
	if r.Key == "" {
		return fmt.Errorf("unit result: %s unit with no key", r.Stage)
	}
	n := 0
	for _, set := range []bool{r.Outcome != nil, len(r.Lines) > 0, r.Failure != nil, r.Infra != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("unit result %s: %d of outcome, lines, failure and infra set, want exactly 1", r.Unit().ID(), n)
	}
	if r.Outcome != nil && (r.Stage != StageRollout || r.Outcome.Key != r.Key) {
		return fmt.Errorf("unit result %s: outcome of %s job %q", r.Unit().ID(), r.Stage, r.Outcome.Key)
	}
	if len(r.Lines) > 0 && r.Stage == StageRollout {
		return fmt.Errorf("unit result %s: journal lines for a rollout unit", r.Unit().ID())
	}
	return nil
}

// Dispatcher runs a stage's units somewhere else than the coordinator's
// process (a work queue of weft worker processes: internal/queue). Run
// uses it when Options.Dispatcher is set; nil runs everything in process.
//
// Dispatch runs units (all of one stage, each ID distinct) and calls done
// once per unit that finished, one call at a time, in any order; a result
// delivered twice (a worker that died after publishing it) is passed to
// done once. It returns when every unit has been passed to done (nil), or
// when ctx ends (ctx's error: units not passed to done run again on a
// rerun), or when done returns an error (that error).
type Dispatcher interface {
	Dispatch(ctx context.Context, units []Unit, done func(UnitResult) error) error
}

// UnitRunner runs units of one Spec in this process: what a worker does
// with the jobs it takes. It uses the Spec's server, launcher, policies
// and harnesses, and nothing of a run folder.
type UnitRunner struct {
	r    *runner
	jobs map[string]rollout.Job
	err  error
}

// NewUnitRunner returns a runner of spec's units. spec is the same
// experiment as the coordinator's (built from the same config), so a
// rollout unit's key names the same job with the same seed.
func NewUnitRunner(spec *Spec) *UnitRunner {
	u := &UnitRunner{r: newRunner(spec, Options{})}
	if spec.has(StageRollout) && len(spec.Mix) > 0 {
		jobs, err := u.r.jobs()
		u.err = err
		u.jobs = map[string]rollout.Job{}
		for _, j := range jobs {
			u.jobs[j.Key()] = j
		}
	}
	return u
}

// Run runs unit and returns its result. Its error is ctx's when ctx ended
// before the unit finished (no result: the unit is to run again), or
// names a unit this spec has not (an unknown stage, job key or task id).
func (u *UnitRunner) Run(ctx context.Context, unit Unit) (*UnitResult, error) {
	res := &UnitResult{Stage: unit.Stage, Key: unit.Key}
	s := u.r.spec
	switch unit.Stage {
	case StageRollout:
		if u.err != nil {
			return nil, u.err
		}
		job, ok := u.jobs[unit.Key]
		if !ok {
			return nil, fmt.Errorf("pipeline: no rollout job %q in this experiment", unit.Key)
		}
		outs, err := rollout.Run(ctx, []rollout.Job{job}, u.r.executor(), rollout.Options{
			Retries: s.Rollout.Retries, EpisodeTimeout: s.Rollout.EpisodeTimeout, Backoff: s.Rollout.Backoff})
		if err != nil {
			return nil, err
		}
		if outs[0] == nil {
			return nil, ctx.Err()
		}
		res.Outcome = outs[0]
		return res, nil
	case StageSFT, StageGRPO:
		t := u.r.task(unit.Key)
		if t == nil {
			return nil, fmt.Errorf("pipeline: no task %q in this experiment", unit.Key)
		}
		if unit.Stage == StageSFT && s.SFT == nil || unit.Stage == StageGRPO && s.GRPO == nil {
			return nil, fmt.Errorf("pipeline: the experiment has no %s block", unit.Stage)
		}
		run := u.r.sftTask
		if unit.Stage == StageGRPO {
			run = u.r.grpoTask
		}
		var lines []Line
		err := u.r.retryTask(ctx, func(ctx context.Context) error {
			lines = nil
			return run(ctx, t, func(key string, v any) error {
				b, err := json.Marshal(v)
				if err != nil {
					return err
				}
				lines = append(lines, Line{Key: key, Value: b})
				return nil
			}, func(string) bool { return false })
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			f := taskFailure(unit.Stage, t, err)
			res.Failure = &f
			return res, nil
		}
		res.Lines = lines
		return res, nil
	}
	return nil, fmt.Errorf("pipeline: unknown stage %q", unit.Stage)
}

func (r *runner) task(id string) *task.Task {
	if i, ok := r.taskIndex[id]; ok {
		return r.spec.Tasks[i]
	}
	return nil
}

// infraOutcome is the outcome of a rollout job that could not run on any
// worker (UnitResult.Infra).
func infraOutcome(job rollout.Job, ie *rollout.InfraError) *rollout.Outcome {
	return &rollout.Outcome{Key: job.Key(), TaskID: job.Task.ID, View: job.View, Harness: job.Harness,
		Policy: job.Policy, Sample: job.Sample, Seed: job.Seed, Termination: "infra",
		Infra: ie, InfraErrors: []rollout.InfraError{*ie}}
}

// dispatchRollout sends the rollout jobs not finished to the dispatcher
// and records each outcome as the in-process stage does.
func (r *runner) dispatchRollout(ctx context.Context, jobs []rollout.Job, finished func(string) bool, record func(rollout.Progress)) error {
	byKey := map[string]rollout.Job{}
	var units []Unit
	for _, j := range jobs {
		if !finished(j.Key()) {
			byKey[j.Key()] = j
			units = append(units, Unit{Stage: StageRollout, Key: j.Key()})
		}
	}
	p := rollout.Progress{Total: len(units), Skipped: len(jobs) - len(units)}
	if len(units) == 0 {
		return nil
	}
	return r.opts.Dispatcher.Dispatch(ctx, units, func(res UnitResult) error {
		job, ok := byKey[res.Key]
		if !ok || res.Stage != StageRollout {
			return nil // not one of ours (Dispatch passes only its units)
		}
		o := res.Outcome
		if o == nil {
			ie := res.Infra
			if ie == nil {
				ie = &rollout.InfraError{Component: failure.Scheduler, Kind: failure.Internal, Message: "worker result with no outcome"}
			}
			o = infraOutcome(job, ie)
		}
		p.Done++
		if o.Score == nil {
			p.Infra++
		} else if o.Passed {
			p.Passed++
		}
		p.Outcome = o
		record(p)
		return nil
	})
}

// dispatchTasks is forTasks through the dispatcher: each task not done is
// one unit of stage; write adds a journal line not already there.
func (r *runner) dispatchTasks(ctx context.Context, stage string, tasks []*task.Task, done func(*task.Task) bool, has func(string) bool, write func(key string, v any) error) error {
	var units []Unit
	for _, t := range tasks {
		if !done(t) {
			units = append(units, Unit{Stage: stage, Key: t.ID})
		}
	}
	skipped := len(tasks) - len(units)
	r.event(Event{Stage: stage, Total: len(units), Skipped: skipped})
	n := 0
	err := r.opts.Dispatcher.Dispatch(ctx, units, func(res UnitResult) error {
		t := r.task(res.Key)
		if t == nil || res.Stage != stage {
			return nil
		}
		switch {
		case res.Failure != nil:
			r.failures = append(r.failures, *res.Failure)
		case res.Infra != nil:
			r.failures = append(r.failures, taskFailure(stage, t, res.Infra))
		default:
			for _, l := range res.Lines {
				if has(l.Key) {
					continue
				}
				if err := write(l.Key, l.Value); err != nil {
					return err
				}
			}
		}
		n++
		r.event(Event{Stage: stage, Done: n, Total: len(units), Skipped: skipped})
		return nil
	})
	r.event(Event{Stage: stage, End: true, Stopped: ctx.Err() != nil})
	return err
}

// taskFailure is the Failure record of a training task that ended on err.
func taskFailure(stage string, t *task.Task, err error) Failure {
	f := Failure{Stage: stage, TaskID: t.ID, Kind: "error", Message: err.Error()}
	if ie, ok := rollout.IsInfra(err); ok {
		f.Kind = ie.Code()
	}
	return f
}

// retryTask runs fn, again after a retryable infrastructure failure, up
// to Rollout.Retries times with Rollout.Backoff between attempts.
func (r *runner) retryTask(ctx context.Context, fn func(ctx context.Context) error) error {
	retries, backoff := max(0, r.spec.Rollout.Retries), r.spec.Rollout.Backoff
	var err error
	for attempt := 0; ; attempt++ {
		if err = fn(ctx); err == nil || ctx.Err() != nil {
			return err
		}
		ie, infra := rollout.IsInfra(err)
		if !infra || !ie.Retryable || attempt >= retries {
			return err
		}
		if backoff > 0 {
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
		}
	}
}

// Batch is a rollout-service batch's GRPO settings and policy, carried by
// a grpo unit's job (queue.Run.Batch) so a worker runs the task against
// the trainer's endpoint rather than the config's grpo block and policies.
type Batch struct {
	// GRPO are the group settings; its Policy field is ignored.
	GRPO GRPOSpec `json:"grpo"`
	// Endpoint and Sampling are the trainer's inference server. The API
	// key never travels: Endpoint.APIKeyEnv names the variable the worker
	// reads it from.
	Endpoint config.Endpoint `json:"endpoint"`
	Sampling config.Sampling `json:"sampling"`
	// SFT, when set, is the batch's rejection sampling (its Mode only;
	// Policy and Compare are ignored): the sft unit of a task runs it.
	SFT *SFTSpec `json:"sft,omitempty"`
}

// batchPolicy is the name the batch's endpoint policy takes in the spec
// of WithBatch.
const batchPolicy = "rollout-service"

// WithBatch returns a runner of u's spec whose grpo stage (and sft stage,
// when b.SFT is set) is b's: b's settings and an endpoint policy of b.Endpoint and b.Sampling (the API
// key read with getenv). Its error is the endpoint's (an invalid base URL
// or model).
func (u *UnitRunner) WithBatch(b *Batch, getenv func(string) string) (*UnitRunner, error) {
	pol, err := EndpointPolicy(&b.Endpoint, b.Sampling, getenv)
	if err != nil {
		return nil, err
	}
	s := *u.r.spec
	s.Policies = make(map[string]Policy, len(u.r.spec.Policies)+1)
	for k, v := range u.r.spec.Policies {
		s.Policies[k] = v
	}
	s.Policies[batchPolicy] = pol
	gp := b.GRPO
	gp.Policy = batchPolicy
	s.GRPO = &gp
	if b.SFT != nil {
		sp := *b.SFT
		sp.Policy, sp.Compare = batchPolicy, false
		s.SFT = &sp
	}
	return &UnitRunner{r: newRunner(&s, Options{}), jobs: u.jobs, err: u.err}, nil
}
