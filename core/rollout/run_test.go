package rollout

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

func jobsFor(ids []string, k int) []Job {
	var jobs []Job
	for _, id := range ids {
		t := &task.Task{ID: id}
		for s := range k {
			jobs = append(jobs, Job{Task: t, View: task.ViewAgentic, Harness: "react", Policy: "scripted", Sample: s, Seed: uint64(1000*len(jobs) + s)})
		}
	}
	return jobs
}

func ok(s float64) *Outcome {
	return &Outcome{Score: &s, Session: "s", Turns: 3, ToolCalls: 2, Termination: "done",
		Checkpoints: []verify.Checkpoint{{Name: verify.Overall, Score: s}}}
}

func retryable(kind failure.Kind) error {
	return &InfraError{Kind: kind, Message: "down", Retryable: true}
}

func TestKey(t *testing.T) {
	j := Job{Task: &task.Task{ID: "tau2-retail:12"}, View: "agentic", Harness: "react", Policy: "qwen3-8b", Sample: 3}
	if got := j.Key(); got != "tau2-retail:12/agentic/react/qwen3-8b/3" {
		t.Fatalf("Key = %q", got)
	}
	if again := j; again.Key() != "tau2-retail:12/agentic/react/qwen3-8b/3" {
		t.Fatal("key not stable")
	}
	a := Job{Task: &task.Task{ID: "a/b"}, View: "c", Harness: "h", Policy: "p"}
	b := Job{Task: &task.Task{ID: "a"}, View: "b/c", Harness: "h", Policy: "p"}
	if a.Key() == b.Key() || a.Key() != "a%2Fb/c/h/p/0" || b.Key() != "a/b%2Fc/h/p/0" {
		t.Fatalf("escaping: %q %q", a.Key(), b.Key())
	}
	if got := (Job{Task: &task.Task{ID: "50%"}}).Key(); got != "50%25////0" {
		t.Fatalf("percent: %q", got)
	}
	if got := (Job{View: "v"}).Key(); got != "/v///0" {
		t.Fatalf("nil task: %q", got)
	}
}

func TestInfraError(t *testing.T) {
	e := &InfraError{Kind: "plugin_crash", Message: "exit 2", Retryable: true}
	if e.Error() != "infra plugin_crash (retryable): exit 2" {
		t.Fatalf("Error() = %q", e.Error())
	}
	if (&InfraError{Kind: "internal"}).Error() != "infra internal" {
		t.Fatal("Error() without message")
	}
	wrapped := fmt.Errorf("episode 3: %w", e)
	got, isInfra := IsInfra(wrapped)
	if !isInfra || got != e {
		t.Fatalf("IsInfra(wrapped) = %v, %v", got, isInfra)
	}
	if _, isInfra := IsInfra(errors.New("x")); isInfra {
		t.Fatal("plain error is not infra")
	}
	if _, isInfra := IsInfra(nil); isInfra {
		t.Fatal("nil is not infra")
	}
}

func TestRunRetriesThenSucceeds(t *testing.T) {
	var attempts []int
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		attempts = append(attempts, attempt)
		if attempt <= 2 {
			return nil, fmt.Errorf("wrapped: %w", retryable(failure.Kind(fmt.Sprintf("endpoint_%d", attempt))))
		}
		return ok(1), nil
	})
	outs, err := Run(context.Background(), jobsFor([]string{"t"}, 1), ex, Options{Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	if o.Attempts != 3 || len(o.InfraErrors) != 2 || o.Score == nil || *o.Score != 1 || !o.Passed || o.Infra != nil {
		t.Fatalf("outcome: %+v", o)
	}
	if o.InfraErrors[0].Code() != "endpoint_1" || o.InfraErrors[1].Code() != "endpoint_2" {
		t.Fatalf("infra errors out of order: %+v", o.InfraErrors)
	}
	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Fatalf("attempt numbers %v", attempts)
	}
	if o.Key != "t/agentic/react/scripted/0" || o.TaskID != "t" || o.Session != "s" || o.Turns != 3 || o.Termination != "done" {
		t.Fatalf("identity/executor fields: %+v", o)
	}
}

func TestRunNonRetryable(t *testing.T) {
	calls := 0
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		calls++
		return &Outcome{Session: "sess-9", Ledger: "/tmp/l", Turns: 4}, &InfraError{Kind: "module_trap", Message: "trap"}
	})
	outs, err := Run(context.Background(), jobsFor([]string{"t"}, 1), ex, Options{Retries: 5})
	if err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	if calls != 1 || o.Attempts != 1 || o.Score != nil || o.Passed {
		t.Fatalf("calls %d outcome %+v", calls, o)
	}
	if o.Infra == nil || o.Infra.Code() != "module_trap" || o.Infra.Retryable || len(o.InfraErrors) != 1 {
		t.Fatalf("infra: %+v %+v", o.Infra, o.InfraErrors)
	}
	if o.Session != "sess-9" || o.Ledger != "/tmp/l" || o.Turns != 4 || o.Termination != "infra" {
		t.Fatalf("partial fields not kept: %+v", o)
	}
}

func TestRunExhaustion(t *testing.T) {
	calls := 0
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		calls++
		// A partial outcome with a score must not leak a score into an
		// infra outcome.
		return ok(0), retryable(failure.Kind(fmt.Sprintf("crash_%d", attempt)))
	})
	outs, err := Run(context.Background(), jobsFor([]string{"t"}, 1), ex, Options{Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	o := outs[0]
	if calls != 3 || o.Attempts != 3 || o.Score != nil || o.Passed || o.Checkpoints != nil {
		t.Fatalf("calls %d outcome %+v", calls, o)
	}
	if o.Infra == nil || o.Infra.Code() != "crash_3" || len(o.InfraErrors) != 3 || o.InfraErrors[2].Code() != "crash_3" {
		t.Fatalf("infra: %+v %+v", o.Infra, o.InfraErrors)
	}
	if o.DurationMs < 2 {
		t.Fatalf("duration %d ms must include two 1ms backoffs", o.DurationMs)
	}
	b, _ := json.Marshal(o)
	if !strings.Contains(string(b), `"score":null`) {
		t.Fatalf("infra score must encode as null, never 0: %s", b)
	}
}

func TestRunInternalFailures(t *testing.T) {
	nan := 0.0
	nan = nan / nan
	cases := []struct {
		name string
		ex   ExecutorFunc
		kind failure.Kind
	}{
		{"plain error", func(context.Context, Job, int) (*Outcome, error) { return nil, errors.New("boom") }, KindInternal},
		{"nil outcome", func(context.Context, Job, int) (*Outcome, error) { return nil, nil }, KindInternal},
		{"no score", func(context.Context, Job, int) (*Outcome, error) { return &Outcome{}, nil }, KindInternal},
		{"score above 1", func(context.Context, Job, int) (*Outcome, error) { return ok(1.5), nil }, KindInternal},
		{"score NaN", func(context.Context, Job, int) (*Outcome, error) { return ok(nan), nil }, KindInternal},
		{"panic", func(context.Context, Job, int) (*Outcome, error) { panic("bad plugin") }, KindInternal},
		{"infra in outcome", func(context.Context, Job, int) (*Outcome, error) {
			return &Outcome{Infra: &InfraError{Kind: "endpoint"}}, nil
		}, "endpoint"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			ex := ExecutorFunc(func(ctx context.Context, j Job, a int) (*Outcome, error) {
				calls++
				return tc.ex(ctx, j, a)
			})
			outs, err := Run(context.Background(), jobsFor([]string{"t"}, 1), ex, Options{Retries: 3})
			if err != nil {
				t.Fatal(err)
			}
			o := outs[0]
			if calls != 1 || o.Score != nil || o.Infra == nil || o.Infra.Code() != string(tc.kind) || o.Infra.Retryable {
				t.Fatalf("calls %d outcome %+v infra %+v", calls, o, o.Infra)
			}
		})
	}
}

func TestRunEpisodeTimeout(t *testing.T) {
	calls := 0
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		calls++
		if _, has := ctx.Deadline(); !has {
			return nil, errors.New("no deadline on the attempt ctx")
		}
		if attempt == 1 || j.Sample == 1 {
			<-ctx.Done() // a hung episode; returns only when the deadline fires
			return nil, ctx.Err()
		}
		return ok(0.5), nil
	})
	outs, err := Run(context.Background(), jobsFor([]string{"t"}, 2), ex, Options{Retries: 1, EpisodeTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Sample 0: deadline, then success.
	o := outs[0]
	if o.Attempts != 2 || o.Score == nil || *o.Score != 0.5 || o.Passed || len(o.InfraErrors) != 1 || o.InfraErrors[0].Code() != string(KindDeadline) || !o.InfraErrors[0].Retryable {
		t.Fatalf("sample 0: %+v", o)
	}
	// Sample 1: deadline twice, infra.
	o = outs[1]
	if o.Attempts != 2 || o.Score != nil || o.Infra == nil || o.Infra.Code() != string(KindDeadline) || len(o.InfraErrors) != 2 {
		t.Fatalf("sample 1: %+v", o)
	}
	if calls != 4 {
		t.Fatalf("calls %d", calls)
	}
}

func TestRunCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls int
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		calls++
		if j.Sample == 3 {
			cancel()
			<-ctx.Done()
			return nil, retryable("endpoint") // failing because ctx ended: not recorded, not retried
		}
		return ok(1), nil
	})
	var progress []int
	outs, err := Run(ctx, jobsFor([]string{"t"}, 10), ex, Options{Retries: 3, Progress: func(p Progress) { progress = append(progress, p.Done) }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if len(outs) != 10 || calls != 4 {
		t.Fatalf("len %d calls %d", len(outs), calls)
	}
	for i, o := range outs {
		if (i < 3) != (o != nil) {
			t.Fatalf("outcome %d: %+v", i, o)
		}
	}
	if fmt.Sprint(progress) != "[1 2 3]" {
		t.Fatalf("progress %v", progress)
	}

	// Already cancelled: nothing runs.
	outs, err = Run(ctx, jobsFor([]string{"t"}, 3), ExecutorFunc(func(context.Context, Job, int) (*Outcome, error) {
		t.Error("executor called after cancel")
		return ok(1), nil
	}), Options{Concurrency: 4})
	if !errors.Is(err, context.Canceled) || len(outs) != 3 || outs[0] != nil || outs[1] != nil || outs[2] != nil {
		t.Fatalf("pre-cancelled: %v %v", outs, err)
	}
}

func TestRunCancelDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failed := make(chan struct{})
	go func() { <-failed; cancel() }()
	calls := 0
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		calls++
		close(failed)
		return nil, retryable("endpoint")
	})
	start := time.Now()
	outs, err := Run(ctx, jobsFor([]string{"t"}, 1), ex, Options{Retries: 1, Backoff: time.Hour})
	if !errors.Is(err, context.Canceled) || outs[0] != nil || calls != 1 {
		t.Fatalf("outs %v err %v calls %d", outs, err, calls)
	}
	if time.Since(start) > time.Minute {
		t.Fatal("backoff did not stop on cancel")
	}
}

func TestRunConcurrencyCap(t *testing.T) {
	for _, tc := range []struct{ conc, want int }{{0, 1}, {1, 1}, {4, 4}, {7, 7}} {
		t.Run(fmt.Sprint(tc.conc), func(t *testing.T) {
			var inFlight, peak, calls atomic.Int64
			full := make(chan struct{})
			var once sync.Once
			ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
				calls.Add(1)
				n := inFlight.Add(1)
				defer inFlight.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				if n == int64(tc.want) {
					once.Do(func() { close(full) })
				}
				// The first jobs wait until the cap is reached, so the
				// peak is exactly the cap, not merely at most it.
				select {
				case <-full:
				case <-time.After(10 * time.Second):
					return nil, errors.New("cap never reached")
				}
				if j.Sample%5 == 0 {
					time.Sleep(time.Millisecond)
				}
				if attempt == 1 && j.Sample%3 == 0 {
					return nil, retryable("flaky")
				}
				return ok(1), nil
			})
			outs, err := Run(context.Background(), jobsFor([]string{"a", "b"}, 20), ex, Options{Concurrency: tc.conc, Retries: 1})
			if err != nil {
				t.Fatal(err)
			}
			if got := peak.Load(); got != int64(tc.want) {
				t.Fatalf("peak in flight %d, want %d", got, tc.want)
			}
			if calls.Load() != 40+14 { // samples 0,3,...,18 (7 per task) retried once
				t.Fatalf("calls %d", calls.Load())
			}
			for i, o := range outs {
				if o == nil || o.Score == nil || !o.Passed {
					t.Fatalf("outcome %d: %+v", i, o)
				}
			}
		})
	}
}

func TestRunSkipAndProgress(t *testing.T) {
	jobs := jobsFor([]string{"a", "b"}, 3)
	skip := map[string]bool{jobs[0].Key(): true, jobs[4].Key(): true}
	var called sync.Map
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		called.Store(j.Key(), true)
		switch j.Sample {
		case 1:
			return nil, &InfraError{Kind: "endpoint"}
		case 2:
			return ok(0.5), nil
		}
		return ok(1), nil
	})
	var (
		ps      []Progress
		running atomic.Int32
	)
	outs, err := Run(context.Background(), jobs, ex, Options{
		Concurrency: 8,
		Skip:        func(k string) bool { return skip[k] },
		Progress: func(p Progress) {
			if running.Add(1) != 1 {
				t.Error("Progress called concurrently")
			}
			time.Sleep(time.Millisecond)
			ps = append(ps, p)
			running.Add(-1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		_, ran := called.Load(jobs[i].Key())
		if skip[jobs[i].Key()] {
			if o != nil || ran {
				t.Fatalf("skipped job %d ran or has an outcome", i)
			}
			continue
		}
		if o == nil || o.Key != jobs[i].Key() || !ran {
			t.Fatalf("job %d: %+v", i, o)
		}
	}
	if len(ps) != 4 {
		t.Fatalf("progress calls %d", len(ps))
	}
	for i, p := range ps {
		if p.Done != i+1 || p.Total != 4 || p.Skipped != 2 || p.Outcome == nil {
			t.Fatalf("progress %d: %+v", i, p)
		}
	}
	// Ran: a/1 (infra), a/2 (0.5), b/0 (pass), b/2 (0.5).
	last := ps[3]
	if last.Infra != 1 || last.Passed != 1 {
		t.Fatalf("final counts %+v", last)
	}

	// Everything skipped: no calls, all nil, no error.
	outs, err = Run(context.Background(), jobs, ex, Options{Skip: func(string) bool { return true }})
	if err != nil || len(outs) != 6 {
		t.Fatal(outs, err)
	}
	for _, o := range outs {
		if o != nil {
			t.Fatal("outcome for skipped job")
		}
	}
}

// TestRunDeterministic: the same jobs give the same outcomes whether run
// one at a time or sixteen at a time, with jobs finishing out of order.
func TestRunDeterministic(t *testing.T) {
	jobs := jobsFor([]string{"x", "y", "z"}, 8)
	ex := ExecutorFunc(func(ctx context.Context, j Job, attempt int) (*Outcome, error) {
		time.Sleep(time.Duration(j.Seed%3) * time.Millisecond)
		if j.Seed%4 == 1 && attempt == 1 {
			return nil, retryable("flaky")
		}
		if j.Seed%7 == 0 {
			return nil, &InfraError{Kind: "endpoint"}
		}
		o := ok(float64(j.Seed%3) / 2)
		o.Key = "executor's key is overridden"
		o.Passed = true // recomputed from Score
		return o, nil
	})
	enc := func(conc int) string {
		outs, err := Run(context.Background(), jobs, ex, Options{Concurrency: conc, Retries: 1})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range outs {
			o.DurationMs = 0
		}
		b, err := json.Marshal(outs)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	one, many := enc(1), enc(16)
	if one != many {
		t.Fatalf("outcomes depend on scheduling:\n%s\n%s", one, many)
	}
	var outs []*Outcome
	if err := json.Unmarshal([]byte(one), &outs); err != nil {
		t.Fatal(err)
	}
	for i, o := range outs {
		if o.Key != jobs[i].Key() || o.Seed != jobs[i].Seed {
			t.Fatalf("outcome %d identity: %+v", i, o)
		}
		if o.Score != nil && o.Passed != (*o.Score == 1) {
			t.Fatalf("outcome %d: Passed %v with score %v", i, o.Passed, *o.Score)
		}
	}
	st := Summarize(outs, []int{1, 4})
	if len(st) != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRunInvalid(t *testing.T) {
	ex := ExecutorFunc(func(context.Context, Job, int) (*Outcome, error) { return ok(1), nil })
	jobs := jobsFor([]string{"t"}, 2)
	cases := map[string]struct {
		jobs []Job
		ex   Executor
		opts Options
	}{
		"nil executor":    {jobs, nil, Options{}},
		"neg concurrency": {jobs, ex, Options{Concurrency: -1}},
		"neg retries":     {jobs, ex, Options{Retries: -1}},
		"neg timeout":     {jobs, ex, Options{EpisodeTimeout: -time.Second}},
		"neg backoff":     {jobs, ex, Options{Backoff: -time.Second}},
		"nil task":        {[]Job{{View: "agentic"}}, ex, Options{}},
		"neg sample":      {[]Job{{Task: &task.Task{ID: "t"}, Sample: -1}}, ex, Options{}},
		"duplicate key":   {append(jobsFor([]string{"t"}, 2), jobs[1]), ex, Options{}},
		"duplicate job":   {[]Job{{Task: &task.Task{ID: "a"}, View: "b"}, {Task: &task.Task{ID: "a"}, View: "b"}}, ex, Options{}},
	}
	for name, tc := range cases {
		if outs, err := Run(context.Background(), tc.jobs, tc.ex, tc.opts); err == nil || outs != nil {
			t.Errorf("%s: want error, got %v %v", name, outs, err)
		}
	}
	if outs, err := Run(context.Background(), nil, ex, Options{}); err != nil || len(outs) != 0 {
		t.Fatalf("no jobs: %v %v", outs, err)
	}
}
