package rollout

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// Executor runs one attempt of one episode. It is implemented outside core
// (plugins/host). Attempt is 1 for the first call of a job and grows by one
// with each retry.
//
// Its error decides what happens next: an error that is (or wraps) an
// *InfraError with Retryable set is retried (up to Options.Retries times);
// a non-retryable *InfraError ends the job as an infrastructure failure;
// any other error ends it as one of kind "internal". An Outcome returned
// beside an error may carry what the attempt got to (Session, Ledger,
// Turns, Trajectory) and is kept for an outcome that ends as infra; its
// Score is ignored. A nil error with an Outcome whose Infra is set counts
// as that infrastructure failure.
//
// Execute must return soon after ctx ends: the scheduler waits for it, so
// that the number of episodes in flight never exceeds the cap, and the
// per-attempt deadline (Options.EpisodeTimeout) is delivered through ctx.
// Implementations are called concurrently, up to Options.Concurrency at a
// time.
type Executor interface {
	Execute(ctx context.Context, job Job, attempt int) (*Outcome, error)
}

// ExecutorFunc adapts a function to Executor.
type ExecutorFunc func(ctx context.Context, job Job, attempt int) (*Outcome, error)

// Execute calls f.
func (f ExecutorFunc) Execute(ctx context.Context, job Job, attempt int) (*Outcome, error) {
	return f(ctx, job, attempt)
}

// Options configure Run. The zero value runs one episode at a time with no
// retries, no deadline and no backoff.
type Options struct {
	// Concurrency is the hard cap on episodes in flight (executor calls
	// running at once, backoff waits included); 0 means 1. Negative is an
	// error.
	Concurrency int
	// Retries is how many extra attempts a job gets after a retryable
	// infrastructure failure; 0 (the default) means none. Negative is an
	// error.
	Retries int
	// EpisodeTimeout bounds each attempt (0 = none). An attempt that runs
	// past it and fails is an infrastructure failure of kind "deadline",
	// retryable. Negative is an error.
	EpisodeTimeout time.Duration
	// Backoff is the constant wait before each retry (0 = none). Negative
	// is an error.
	Backoff time.Duration
	// Skip, when set, is asked for each job's Key before the run; a job
	// it reports done is not run (resume) and its outcome is nil.
	Skip func(key string) bool
	// Progress, when set, is called after each job that finished (not
	// skipped or interrupted ones), one call at a time, from the goroutine
	// that called Run.
	Progress func(p Progress)
}

// Progress is a snapshot of a run's counts after a job finished.
type Progress struct {
	// Done counts finished jobs, Total the jobs to run (skipped ones
	// excluded), Skipped the jobs Options.Skip removed.
	Done, Total, Skipped int
	// Infra counts finished jobs that ended on an infrastructure failure,
	// Passed those with Score == 1.
	Infra, Passed int
	// Outcome is the job that just finished.
	Outcome *Outcome
}

// Run runs jobs with ex under opts and returns their outcomes.
//
// The result has one entry per job, in job order: outcomes[i] is jobs[i]'s,
// nil when the job was skipped (Options.Skip) or did not finish because ctx
// ended. Outcomes depend only on the jobs and on what the executor returns
// for them, never on the order jobs happened to run in.
//
// At most Options.Concurrency jobs are in flight at any time. When ctx ends
// Run starts no new job or retry, cancels the attempts in flight (through
// their ctx), waits for them and returns what finished with ctx.Err(); an
// attempt that fails because ctx ended is neither retried nor recorded, so
// a resumed run runs that job again. Run's error is otherwise non-nil only
// for invalid arguments: a nil executor, a negative option, a job with no
// task or a negative Sample, two jobs with the same Key. Infrastructure
// failures are outcomes, not errors.
func Run(ctx context.Context, jobs []Job, ex Executor, opts Options) ([]*Outcome, error) {
	if err := validate(jobs, ex, &opts); err != nil {
		return nil, err
	}
	outcomes := make([]*Outcome, len(jobs))
	todo := make([]int, 0, len(jobs))
	for i, j := range jobs {
		if opts.Skip != nil && opts.Skip(j.Key()) {
			continue
		}
		todo = append(todo, i)
	}
	p := Progress{Total: len(todo), Skipped: len(jobs) - len(todo)}
	if len(todo) == 0 {
		return outcomes, nil
	}

	type result struct {
		i int
		o *Outcome
	}
	next := make(chan int)
	results := make(chan result)
	go func() {
		defer close(next)
		for _, i := range todo {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(opts.Concurrency, len(todo)) {
		wg.Go(func() {
			for i := range next {
				if ctx.Err() != nil {
					continue // drain: start nothing after ctx ended
				}
				results <- result{i, runJob(ctx, jobs[i], ex, &opts)}
			}
		})
	}
	go func() {
		wg.Wait()
		close(results)
	}()
	for r := range results {
		if r.o == nil {
			continue // interrupted by ctx
		}
		outcomes[r.i] = r.o
		p.Done++
		if r.o.Score == nil {
			p.Infra++
		} else if r.o.Passed {
			p.Passed++
		}
		if opts.Progress != nil {
			p.Outcome = r.o
			opts.Progress(p)
		}
	}
	if p.Done < p.Total {
		if err := ctx.Err(); err != nil {
			return outcomes, err
		}
	}
	return outcomes, nil
}

func validate(jobs []Job, ex Executor, opts *Options) error {
	switch {
	case ex == nil:
		return errors.New("rollout: nil executor")
	case opts.Concurrency < 0:
		return fmt.Errorf("rollout: negative concurrency %d", opts.Concurrency)
	case opts.Retries < 0:
		return fmt.Errorf("rollout: negative retries %d", opts.Retries)
	case opts.EpisodeTimeout < 0:
		return fmt.Errorf("rollout: negative episode timeout %v", opts.EpisodeTimeout)
	case opts.Backoff < 0:
		return fmt.Errorf("rollout: negative backoff %v", opts.Backoff)
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = 1
	}
	seen := make(map[string]int, len(jobs))
	for i, j := range jobs {
		if j.Task == nil {
			return fmt.Errorf("rollout: job %d has no task", i)
		}
		if j.Sample < 0 {
			return fmt.Errorf("rollout: job %d (%s) has negative sample %d", i, j.Key(), j.Sample)
		}
		k := j.Key()
		if prev, dup := seen[k]; dup {
			return fmt.Errorf("rollout: jobs %d and %d have the same key %q", prev, i, k)
		}
		seen[k] = i
	}
	return nil
}

// runJob runs a job's attempts; nil means ctx ended before it finished.
func runJob(ctx context.Context, job Job, ex Executor, opts *Options) *Outcome {
	start := time.Now()
	var (
		failures []InfraError
		partial  *Outcome
	)
	attempts := 0
	for attempts < 1+opts.Retries {
		if attempts > 0 && opts.Backoff > 0 {
			t := time.NewTimer(opts.Backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		attempts++
		out, ie, interrupted := attempt(ctx, job, ex, attempts, opts.EpisodeTimeout)
		if interrupted {
			return nil
		}
		if ie == nil {
			o := *out
			score := *out.Score
			o.Score = &score
			o.Passed = score == 1
			o.Infra = nil
			o.InfraErrors = failures
			return finish(&o, job, attempts, start)
		}
		failures = append(failures, *ie)
		partial = out
		if !ie.Retryable {
			break
		}
	}
	o := &Outcome{}
	if partial != nil {
		o.Session = partial.Session
		o.Ledger = partial.Ledger
		o.Termination = partial.Termination
		o.Turns = partial.Turns
		o.ToolCalls = partial.ToolCalls
		o.Trajectory = partial.Trajectory
		o.Attributions = partial.Attributions
		o.Faults = partial.Faults
	}
	if o.Termination == "" {
		o.Termination = "infra"
	}
	last := failures[len(failures)-1]
	o.Infra = &last
	o.InfraErrors = failures
	return finish(o, job, attempts, start)
}

func finish(o *Outcome, job Job, attempts int, start time.Time) *Outcome {
	o.Key = job.Key()
	o.TaskID = job.Task.ID
	o.View = job.View
	o.Harness = job.Harness
	o.Policy = job.Policy
	o.Sample = job.Sample
	o.Seed = job.Seed
	o.Attempts = attempts
	o.DurationMs = time.Since(start).Milliseconds()
	return o
}

// attempt runs one executor call and classifies it: a usable outcome
// (ie nil), an infrastructure failure (ie set, out possibly partial), or
// interrupted (the caller's ctx ended and the call failed).
func attempt(ctx context.Context, job Job, ex Executor, n int, timeout time.Duration) (out *Outcome, ie *InfraError, interrupted bool) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, timeout)
	}
	defer cancel()
	out, err := safeExecute(actx, job, ex, n)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, nil, true
		case timeout > 0 && errors.Is(actx.Err(), context.DeadlineExceeded):
			return out, &InfraError{
				Component: failure.Scheduler,
				Kind:      KindDeadline,
				Message:   fmt.Sprintf("attempt %d ran past %v: %v", n, timeout, err),
				Retryable: true,
			}, false
		}
		if e, ok := IsInfra(err); ok {
			c := *e
			return out, &c, false
		}
		return out, &InfraError{Component: failure.Scheduler, Kind: KindInternal, Message: err.Error()}, false
	}
	switch {
	case out == nil:
		return nil, &InfraError{Component: failure.Scheduler, Kind: KindInternal, Message: "executor returned no outcome and no error"}, false
	case out.Infra != nil:
		c := *out.Infra
		return out, &c, false
	case out.Score == nil:
		return out, &InfraError{Component: failure.Scheduler, Kind: KindInternal, Message: "executor returned an outcome with no score and no error"}, false
	case math.IsNaN(*out.Score) || *out.Score < 0 || *out.Score > 1:
		return out, &InfraError{Component: failure.Scheduler, Kind: KindInternal, Message: fmt.Sprintf("executor returned score %v outside [0, 1]", *out.Score)}, false
	}
	return out, nil, false
}

// safeExecute turns an executor panic into an error, so that one bad
// episode does not take the run down.
func safeExecute(ctx context.Context, job Job, ex Executor, n int) (out *Outcome, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("executor panicked: %v", r)
		}
	}()
	return ex.Execute(ctx, job, n)
}
