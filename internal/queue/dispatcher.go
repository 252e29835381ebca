package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weft-dev/weft/internal/pipeline"
)

// Stats count what a Dispatcher saw; all cumulative over its Dispatch
// calls.
type Stats struct {
	// Published is the jobs published, Results the results passed on.
	Published, Results int
	// Duplicates are results of units already passed on (a redelivered
	// job whose first worker had published its result), dropped.
	Duplicates int
	// Malformed are messages on the run's result subject that did not
	// decode (*MessageError), dropped.
	Malformed int
	// Refusals are workers' refusals of a job (a module digest they could
	// not get); RefusedOut the units recorded as infrastructure failures
	// after Options.MaxRefusals refusals.
	Refusals, RefusedOut int
}

// Dispatcher runs a run's units on the queue; it implements
// pipeline.Dispatcher.
type Dispatcher struct {
	q   *Queue
	run Run
	// OnMalformed, when set, is called with each malformed result message
	// (before it is dropped), from Dispatch's goroutine.
	OnMalformed func(*MessageError)

	mu    sync.Mutex
	stats Stats
	seq   uint64 // the last result's stream sequence read
}

func (d *Dispatcher) lastSeq() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seq
}

// Dispatcher returns the dispatcher of run (run.ID must be a subject
// token: NewRunID).
func (q *Queue) Dispatcher(run Run) *Dispatcher { return &Dispatcher{q: q, run: run} }

// Stats returns the counts so far.
func (d *Dispatcher) Stats() Stats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

func (d *Dispatcher) count(f func(*Stats)) {
	d.mu.Lock()
	f(&d.stats)
	d.mu.Unlock()
}

// Dispatch publishes units as jobs of the run and passes each unit's first
// result to done; see pipeline.Dispatcher. Publishing retries while the
// server is away (until ctx ends). When it returns, the run's jobs still
// in the queue (those of an interrupted dispatch, or refused out) are
// purged.
func (d *Dispatcher) Dispatch(ctx context.Context, units []pipeline.Unit, done func(pipeline.UnitResult) error) error {
	if !validRunID(d.run.ID) {
		return fmt.Errorf("queue: run id %q is not a subject token", d.run.ID)
	}
	pending := map[string]bool{}
	for _, u := range units {
		if pending[u.ID()] {
			return fmt.Errorf("queue: unit %s given twice", u.ID())
		}
		pending[u.ID()] = true
	}
	if len(units) == 0 {
		return nil
	}
	subject := resultsPrefix + d.run.ID
	// The consumer first: no result can come before it reads from the
	// stream's start, and an ordered consumer recreates itself after a
	// server restart.
	cc := jetstream.OrderedConsumerConfig{FilterSubjects: []string{subject}, DeliverPolicy: jetstream.DeliverAllPolicy}
	if last := d.lastSeq(); last > 0 {
		// A later stage of the same run: its results come after the
		// earlier stages' ones.
		cc.DeliverPolicy, cc.OptStartSeq = jetstream.DeliverByStartSequencePolicy, last+1
	}
	cons, err := d.q.js.OrderedConsumer(ctx, ResultsStream, cc)
	if err != nil {
		return fmt.Errorf("queue: results of run %s: %w", d.run.ID, err)
	}
	defer d.purge()
	for _, u := range units {
		b, err := json.Marshal(JobMsg{V: Version, Run: d.run, Unit: u})
		if err != nil {
			return err
		}
		if err := d.q.publish(ctx, jobsPrefix+d.run.ID, b, d.run.ID+"/"+u.ID()); err != nil {
			return err
		}
		d.count(func(s *Stats) { s.Published++ })
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("queue: results of run %s: %w", d.run.ID, err)
	}
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	defer it.Stop()
	refusals := map[string]int{}
	for len(pending) > 0 {
		msg, err := it.Next()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) {
				return fmt.Errorf("queue: results of run %s: %w", d.run.ID, err)
			}
			d.q.log.Warn("queue: reading results", "run", d.run.ID, "err", err)
			time.Sleep(100 * time.Millisecond)
			continue
		}
		var seq uint64
		if md, err := msg.Metadata(); err == nil {
			seq = md.Sequence.Stream
			d.count(func(s *Stats) { d.seq = max(d.seq, seq) })
		}
		m, err := DecodeResult(msg.Subject(), msg.Data())
		if err != nil {
			var me *MessageError
			errors.As(err, &me)
			me.Seq = seq
			d.count(func(s *Stats) { s.Malformed++ })
			d.q.log.Error("queue: dropped a malformed result", "err", me)
			if d.OnMalformed != nil {
				d.OnMalformed(me)
			}
			continue
		}
		if m.Refused != nil {
			id := m.Unit.ID()
			d.count(func(s *Stats) { s.Refusals++ })
			d.q.log.Warn("queue: a worker refused a job", "unit", id, "worker", m.Worker, "err", m.Refused)
			if !pending[id] {
				continue
			}
			refusals[id]++
			if refusals[id] < d.q.opts.MaxRefusals {
				continue
			}
			d.count(func(s *Stats) { s.RefusedOut++ })
			delete(pending, id)
			if err := done(pipeline.UnitResult{Stage: m.Unit.Stage, Key: m.Unit.Key, Infra: m.Refused}); err != nil {
				return err
			}
			continue
		}
		id := m.Result.Unit().ID()
		if !pending[id] {
			d.count(func(s *Stats) { s.Duplicates++ })
			continue
		}
		delete(pending, id)
		d.count(func(s *Stats) { s.Results++ })
		if err := done(*m.Result); err != nil {
			return err
		}
	}
	return nil
}

// purge drops the run's jobs still in the queue.
func (d *Dispatcher) purge() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := d.q.js.Stream(ctx, JobsStream)
	if err == nil {
		err = s.Purge(ctx, jetstream.WithPurgeSubject(jobsPrefix+d.run.ID))
	}
	if err != nil {
		d.q.log.Warn("queue: purging the run's jobs", "run", d.run.ID, "err", err)
	}
}

// publish publishes data to subject with message id msgID, retrying
// (every 250 ms) while the server does not acknowledge it, until ctx ends.
func (q *Queue) publish(ctx context.Context, subject string, data []byte, msgID string) error {
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := q.js.Publish(pctx, subject, data, opts...)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		q.log.Warn("queue: publish failed, retrying", "subject", subject, "err", err)
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
