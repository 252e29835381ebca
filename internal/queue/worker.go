package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/sdk/failure"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Name identifies the worker in results and logs (default
	// "HOST/PID").
	Name string
	// Concurrency caps the jobs the worker runs at once (0 = 1); it takes
	// no more jobs from the queue than it has free slots.
	Concurrency int
	// Runtime runs the modules (required; the caller closes it).
	Runtime *module.Runtime
	// Registry is where the worker looks modules up by digest (required).
	Registry *module.Registry
	// Pull, when set, fetches a module bundle the registry has not (a
	// `weft serve` registry: megamcp/registry.Client.Pull) and returns its
	// tar; the worker stores it after checking its digest.
	Pull func(ctx context.Context, digest string) ([]byte, error)
	// Log receives build output of modules (nil = discarded).
	BuildLog io.Writer
	// OnMalformed, when set, is called with each malformed job message
	// (it is terminated: not redelivered).
	OnMalformed func(*MessageError)
	// MaxJobs, when positive, makes Run return after that many jobs were
	// acked (tests, one-shot workers).
	MaxJobs int
	// MaxBuilt caps the distinct experiments (run configs) the worker
	// keeps built between jobs (0 = DefaultMaxBuilt): a new one closes the
	// least recently used experiment no job is running on (its MegaMCP
	// server and plugin processes); a later job of it builds it again.
	MaxBuilt int
}

// WorkerStats count what a Worker did.
type WorkerStats struct {
	// Done are jobs whose result was published and acked; Refused jobs
	// handed back for a missing module; Malformed jobs dropped; Requeued
	// jobs handed back because the worker stopped while running them.
	Done, Refused, Malformed, Requeued int
	// Built is how many experiments the worker holds built now; Evicted
	// how many it closed to stay within WorkerOptions.MaxBuilt.
	Built, Evicted int
}

// Worker takes jobs from the queue and runs them.
type Worker struct {
	q *Queue
	o WorkerOptions

	mu     sync.Mutex
	built  *builtCache // by Run.buildKey
	stats  WorkerStats
	closed bool
}

// Worker returns a worker on q.
func (q *Queue) Worker(o WorkerOptions) *Worker {
	if o.Name == "" {
		h, _ := os.Hostname()
		o.Name = fmt.Sprintf("%s/%d", h, os.Getpid())
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 1
	}
	return &Worker{q: q, o: o, built: newBuiltCache(o.MaxBuilt)}
}

// Stats returns the counts so far.
func (w *Worker) Stats() WorkerStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Built = len(w.built.m)
	return s
}

// Run takes and runs jobs until ctx ends (or MaxJobs were done), then
// hands back the jobs it was running (NAK: another worker takes them at
// once), closes what it built (servers, plugin processes) and returns nil.
// Its error is a consumer it cannot read from.
func (w *Worker) Run(ctx context.Context) error {
	if w.o.Runtime == nil || w.o.Registry == nil {
		return errors.New("queue: a worker needs a module runtime and a registry")
	}
	defer w.close()
	cons, err := w.q.js.Consumer(ctx, JobsStream, WorkersConsumer)
	if err != nil {
		return fmt.Errorf("queue: consumer %s: %w", WorkersConsumer, err)
	}
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, w.o.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for jctx.Err() == nil {
		// Take one free slot (waiting for it), then every other free one:
		// the worker fetches no more jobs than it can start now, so no job
		// waits in its buffer while another worker idles.
		select {
		case slots <- struct{}{}:
		case <-jctx.Done():
			return nil
		}
		held := 1
		for more := true; more && held < w.o.Concurrency; {
			select {
			case slots <- struct{}{}:
				held++
			default:
				more = false
			}
		}
		batch, err := cons.Fetch(held, jetstream.FetchMaxWait(time.Second))
		got := 0
		if err == nil {
			for msg := range batch.Messages() {
				got++
				wg.Go(func() {
					defer func() { <-slots }()
					if w.handle(jctx, msg) && w.o.MaxJobs > 0 && w.Stats().Done >= w.o.MaxJobs {
						cancel()
					}
				})
			}
			err = batch.Error()
		}
		for range held - got {
			<-slots
		}
		if err != nil && !errors.Is(err, jetstream.ErrNoMessages) && jctx.Err() == nil {
			w.q.log.Warn("queue: fetching jobs", "worker", w.o.Name, "err", err)
			select {
			case <-time.After(250 * time.Millisecond):
			case <-jctx.Done():
			}
		}
	}
	return nil
}

// handle runs one job message; it reports whether the job was done
// (result published, job acked).
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) bool {
	var seq uint64
	if md, err := msg.Metadata(); err == nil {
		seq = md.Sequence.Stream
	}
	job, err := DecodeJob(msg.Subject(), msg.Data())
	if err != nil {
		var me *MessageError
		errors.As(err, &me)
		me.Seq = seq
		w.q.log.Error("queue: dropped a malformed job", "worker", w.o.Name, "err", me)
		w.count(func(s *WorkerStats) { s.Malformed++ })
		if w.o.OnMalformed != nil {
			w.o.OnMalformed(me)
		}
		_ = msg.Term()
		return false
	}
	// Keep the job ours while it runs (and while its Spec is built).
	hb := time.NewTicker(max(w.q.opts.AckWait/3, 10*time.Millisecond))
	beat := make(chan struct{})
	go func() {
		for {
			select {
			case <-hb.C:
				_ = msg.InProgress()
			case <-beat:
				return
			}
		}
	}()
	defer func() { hb.Stop(); close(beat) }()

	runner, release, ie := w.runner(ctx, &job.Run)
	if ie != nil {
		if ctx.Err() != nil {
			w.requeue(msg)
			return false
		}
		w.refuse(ctx, msg, job, ie)
		return false
	}
	defer release()
	var res *pipeline.UnitResult
	if job.Run.Batch != nil {
		runner, err = runner.WithBatch(job.Run.Batch, os.Getenv)
	}
	if err == nil {
		res, err = runner.Run(ctx, job.Unit)
	}
	if err != nil {
		if ctx.Err() != nil {
			w.requeue(msg)
			return false
		}
		// A unit this experiment has not: the coordinator's and the
		// worker's builds of the config differ. Nothing retries that.
		res = &pipeline.UnitResult{Stage: job.Unit.Stage, Key: job.Unit.Key, Infra: &rollout.InfraError{
			Component: failure.Scheduler, Kind: failure.Internal, Message: fmt.Sprintf("worker %s: %v", w.o.Name, err)}}
	}
	b, err := json.Marshal(ResultMsg{V: Version, Run: job.Run.ID, Worker: w.o.Name, Result: res})
	if err != nil {
		w.q.log.Error("queue: encoding a result", "unit", job.Unit.ID(), "err", err)
		w.requeue(msg)
		return false
	}
	if err := w.q.publish(ctx, resultsPrefix+job.Run.ID, b, job.Run.ID+"/"+job.Unit.ID()); err != nil {
		w.requeue(msg) // ctx ended: the result is not durable, the job goes back
		return false
	}
	// The result is durable: only now the ack. An ack lost here (server
	// restarting) redelivers the job, and its second result is dropped
	// as a duplicate.
	actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		w.q.log.Warn("queue: ack not confirmed (the job may run again)", "unit", job.Unit.ID(), "err", err)
	}
	w.count(func(s *WorkerStats) { s.Done++ })
	return true
}

func (w *Worker) count(f func(*WorkerStats)) {
	w.mu.Lock()
	f(&w.stats)
	w.mu.Unlock()
}

func (w *Worker) requeue(msg jetstream.Msg) {
	w.count(func(s *WorkerStats) { s.Requeued++ })
	_ = msg.Nak()
}

// refuse publishes the worker's refusal of job and hands the job back,
// after a short delay, for another worker.
func (w *Worker) refuse(ctx context.Context, msg jetstream.Msg, job *JobMsg, ie *rollout.InfraError) {
	w.count(func(s *WorkerStats) { s.Refused++ })
	w.q.log.Warn("queue: refusing a job", "worker", w.o.Name, "unit", job.Unit.ID(), "err", ie)
	u := job.Unit
	if b, err := json.Marshal(ResultMsg{V: Version, Run: job.Run.ID, Worker: w.o.Name, Unit: &u, Refused: ie}); err == nil {
		_ = w.q.publish(ctx, resultsPrefix+job.Run.ID, b, "")
	}
	_ = msg.NakWithDelay(200 * time.Millisecond)
}

// runner returns the unit runner of run, building its Spec once per
// distinct config (the worker's own MegaMCP server, launcher and plugin
// processes). A module digest the worker cannot get is a refusal: an
// infrastructure failure of component module, kind no_such_module,
// retryable elsewhere; so is a config that does not build here.
//
// release hands the experiment back when the job is done (it may then be
// closed to keep within WorkerOptions.MaxBuilt).
func (w *Worker) runner(ctx context.Context, run *Run) (_ *pipeline.UnitRunner, release func(), _ *rollout.InfraError) {
	for name, d := range run.Modules {
		if err := w.module(ctx, d); err != nil {
			return nil, nil, &rollout.InfraError{Component: failure.Module, Kind: failure.NoSuchModule, Retryable: true,
				Message: fmt.Sprintf("worker %s cannot get module %q (%s): %v", w.o.Name, name, d, err)}
		}
	}
	key := run.buildKey()
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, nil, &rollout.InfraError{Component: failure.Scheduler, Kind: failure.Canceled, Retryable: true, Message: "worker stopping"}
	}
	bd, evicted := w.built.take(key)
	w.stats.Evicted += len(evicted)
	w.mu.Unlock()
	closeBuilt(evicted)
	bd.once.Do(func() { bd.b, bd.runner, bd.err = w.build(ctx, run) })
	if bd.err != nil {
		err := bd.err
		w.mu.Lock()
		w.built.drop(key, bd) // built again for the next job
		w.mu.Unlock()
		return nil, nil, &rollout.InfraError{Component: failure.Scheduler, Kind: failure.Start, Retryable: true,
			Message: fmt.Sprintf("worker %s cannot build the run's experiment: %v", w.o.Name, err)}
	}
	release = func() {
		w.mu.Lock()
		evicted := w.built.release(bd)
		w.stats.Evicted += len(evicted)
		w.mu.Unlock()
		closeBuilt(evicted)
	}
	return bd.runner, release, nil
}

// module makes sure the registry holds digest, pulling it when it can.
func (w *Worker) module(ctx context.Context, digest string) error {
	if _, _, err := w.o.Registry.Get(digest); err == nil {
		return nil
	} else if w.o.Pull == nil {
		return err
	}
	tar, err := w.o.Pull(ctx, digest)
	if err != nil {
		return err
	}
	_, err = w.o.Registry.PutTar(tar, digest)
	return err
}

// build rebuilds the run's experiment from its config with every module
// pinned to the run's digest (nothing is compiled or synthesized again).
func (w *Worker) build(ctx context.Context, run *Run) (*pipeline.Built, *pipeline.UnitRunner, error) {
	cfg, diags := config.Parse(run.Config, run.File, config.LoadOptions{Vars: run.Vars})
	if cfg == nil {
		return nil, nil, fmt.Errorf("config %s: %s", run.File, diags.Error())
	}
	for i, m := range cfg.Modules {
		if d, ok := run.Modules[m.Name]; ok {
			cfg.Modules[i] = config.Module{Name: m.Name, Digest: d}
		}
	}
	b, err := pipeline.FromConfig(ctx, cfg, pipeline.Env{Runtime: w.o.Runtime, Registry: w.o.Registry, Log: w.o.BuildLog})
	if err != nil {
		return nil, nil, err
	}
	return b, pipeline.NewUnitRunner(b.Spec), nil
}

func (w *Worker) close() {
	w.mu.Lock()
	w.closed = true
	all := w.built.all()
	w.mu.Unlock()
	closeBuilt(all)
}
