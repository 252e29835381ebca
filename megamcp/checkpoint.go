package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
)

// checkpointInfo is sessions/<id>/checkpoint.json: the session's state after
// its first Index ledger records, as a delta (state.ExportDelta) against
// Anchor, the version it was created from or last restored to.
type checkpointInfo struct {
	Index      uint64          `json:"index"`
	Generation uint64          `json:"generation"`
	Seq        uint64          `json:"seq"`
	Calls      uint64          `json:"calls"`
	Clock      int64           `json:"clock_ns"`
	Anchor     string          `json:"anchor"`
	Hash       string          `json:"hash"` // state hash, checked on recovery
	Delta      json.RawMessage `json:"delta,omitempty"`
	Time       time.Time       `json:"time"`
}

func (s *Server) checkpointLoop() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.CheckpointInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			if err := s.checkpointAll(false); err != nil {
				s.log.Error("checkpoint", "err", err)
			}
		}
	}
}

// checkpointAll checkpoints every session with ledger records newer than
// its last checkpoint.
func (s *Server) checkpointAll(final bool) error {
	s.mu.RLock()
	list := make([]*Session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.RUnlock()
	sort.Slice(list, func(i, j int) bool { return list[i].id < list[j].id })
	var (
		errs []error
		lag  uint64
		mu   sync.Mutex
		wg   sync.WaitGroup
	)
	work := make(chan *Session)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ss := range work {
				err := ss.checkpoint(context.Background())
				ss.mu.Lock()
				l := ss.nrec - ss.ck.Index
				ss.mu.Unlock()
				mu.Lock()
				if err != nil {
					errs = append(errs, errSession(ss.id, err))
				}
				lag += l
				mu.Unlock()
			}
		}()
	}
	for _, ss := range list {
		work <- ss
	}
	close(work)
	wg.Wait()
	if s.met != nil {
		s.met.checkpointLag.Set(float64(lag))
	}
	return errors.Join(errs...)
}

// checkpoint writes the session's checkpoint if it has new records. The
// session is locked only to take the snapshot (O(tables)); the delta is
// computed and written outside the lock.
func (ss *Session) checkpoint(ctx context.Context) error {
	ss.mu.Lock()
	if ss.closed || ss.nrec == ss.ck.Index {
		ss.mu.Unlock()
		return nil
	}
	v, err := ss.ws.Snapshot()
	if err != nil {
		ss.mu.Unlock()
		return err
	}
	info := checkpointInfo{Index: ss.nrec, Generation: ss.gen, Seq: ss.ms.Seq(), Calls: ss.calls,
		Clock: ss.clock.Now().UnixNano(), Hash: v.Hash().String()}
	anchor := ss.anchor
	ss.mu.Unlock()

	start := time.Now()
	aid, err := ss.srv.putVersion(ctx, anchor)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := v.ExportDelta(&buf, anchor); err != nil {
		// The schema changed: checkpoint the whole state as a version.
		if aid, err = ss.srv.putVersion(ctx, v); err != nil {
			return err
		}
		buf.Reset()
		if err := v.ExportDelta(&buf, v); err != nil {
			return err
		}
	}
	info.Anchor = aid
	info.Delta = bytes.TrimSpace(buf.Bytes())
	info.Time = time.Now().UTC()
	if err := ss.srv.writeFile(filepath.Join(ss.dir(), "checkpoint.json"), mustJSON(info)); err != nil {
		return err
	}
	ss.mu.Lock()
	if info.Index > ss.ck.Index {
		info.Delta = nil // not needed in memory
		ss.ck = info
	}
	ss.mu.Unlock()
	if m := ss.srv.met; m != nil {
		m.checkpoints.Inc()
		m.checkpointSeconds.Observe(time.Since(start).Seconds())
	}
	return nil
}

// ReplayCallTimeout is the per-call deadline of replayed calls (recovery
// and Replay): a call acknowledged once must not fail on a slower or busier
// machine, so it is far above the default call timeout; it still stops a
// module that no longer terminates.
const ReplayCallTimeout = 60 * time.Second

// replayer re-runs ledger records on a workspace: recovery after the
// session's checkpoint, and Replay from its initial version.
type replayer struct {
	srv    *Server
	group  *Group
	ws     *state.Workspace
	ms     *module.Session
	clock  *module.VirtualClock
	gen    uint64
	anchor *state.Version
	calls  uint64
	// mismatches counts replayed calls whose result differs from the one
	// recorded (a nondeterministic module; see replayMismatch).
	mismatches uint64
	session    string
}

func (s *Server) newReplayer(g *Group, v *state.Version, meta sessionMeta) *replayer {
	clock := module.NewVirtualClock(time.Unix(0, meta.Clock).UTC())
	ws := s.store.Fork(v)
	return &replayer{srv: s, group: g, ws: ws, clock: clock, anchor: v, gen: FirstGeneration, session: meta.ID,
		ms: &module.Session{Workspace: ws, Seed: meta.Seed, Clock: clock, Timeout: ReplayCallTimeout, Tables: g.tables.Names}}
}

// apply re-runs one record. Only calls that committed changes are run again
// (read-only and failed calls left no trace); each runs with its recorded
// sequence number and clock, so its result is the one first acknowledged.
func (r *replayer) apply(ctx context.Context, rec *Record) error {
	switch rec.Kind {
	case KindClock:
		r.clock.Set(time.Unix(0, rec.Clock).UTC())
		r.ms.SetSeq(max(r.ms.Seq(), rec.Seq))
	case KindRestore:
		v, err := r.srv.Version(ctx, rec.Version)
		if err != nil {
			return err
		}
		if err := r.ws.Restore(v); err != nil {
			return err
		}
		r.gen, r.anchor = rec.Generation, v
		r.ms.SetSeq(max(r.ms.Seq(), rec.Seq))
	case KindCall:
		r.calls++
		consumed := rec.Error == nil || (rec.Error.Kind != "unknown_tool" && rec.Error.Kind != "invalid_arguments")
		next := rec.Seq
		if consumed {
			next++
		}
		if rec.committed() {
			var mod *module.Module
			for _, m := range r.group.modules {
				if m.mod.Manifest().Name == rec.Module {
					mod = m.mod
				}
			}
			if mod == nil {
				return fmt.Errorf("record %d: module %q is not in the session's group", rec.Index, rec.Module)
			}
			r.clock.Set(time.Unix(0, rec.Clock).UTC())
			r.ms.SetSeq(rec.Seq)
			res, err := mod.Call(ctx, r.ms, rec.Tool, rec.Arguments)
			if err != nil {
				return fmt.Errorf("record %d (%s): replay failed: %w", rec.Index, rec.Tool, err)
			}
			if res.IsError {
				return fmt.Errorf("record %d (%s): replay gave a tool error where the original call succeeded: the module is not deterministic", rec.Index, rec.Tool)
			}
			if why := resultMismatch(rec.Result, res); why != "" {
				r.mismatches++
				r.srv.replayMismatch(r.session, rec, why)
			}
		}
		r.ms.SetSeq(max(r.ms.Seq(), next))
	default:
		return fmt.Errorf("record %d: unknown kind %q", rec.Index, rec.Kind)
	}
	return nil
}

// resultMismatch says how a replayed call's result differs from the one the
// ledger recorded ("" when equal as JSON).
func resultMismatch(recorded, replayed *module.Result) string {
	a, _ := json.Marshal(recorded)
	b, _ := json.Marshal(replayed)
	if bytes.Equal(a, b) {
		return ""
	}
	return fmt.Sprintf("recorded result %s, replayed %s", excerptJSON(a), excerptJSON(b))
}

func excerptJSON(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// replayMismatch reports a replayed call whose result differs from the
// acknowledged one: never silently (issue 15): an error log line, the
// weft_replay_mismatches_total metric, and the session's
// SessionInfo.ReplayMismatches (for recovery; see recover).
func (s *Server) replayMismatch(session string, rec *Record, why string) {
	s.log.Error("replay mismatch: the module is not deterministic; the recovered state may differ from the acknowledged one",
		"session", session, "record", rec.Index, "module", rec.Module, "tool", rec.Tool, "seq", rec.Seq, "diff", why)
	if s.met != nil {
		s.met.replayMismatches.Inc()
	}
}

// ReplayResult compares a replay of a session's ledger with the session.
type ReplayResult struct {
	Records    uint64 `json:"records"`     // ledger records replayed
	ReplayHash string `json:"replay_hash"` // state after replaying them from the initial version
	Hash       string `json:"hash"`        // the session's state after the same records
	// Equal: the replayed state equals the session's and every replayed
	// call gave its acknowledged result.
	Equal bool `json:"equal"`
	// MismatchedCalls counts replayed calls whose result differed from the
	// acknowledged one (each also logged and counted in
	// weft_replay_mismatches_total).
	MismatchedCalls uint64 `json:"mismatched_calls"`
}

// Replay re-runs the session's ledger from its initial version on a scratch
// workspace and compares the resulting state hash with the session's: the
// check the crash test makes. The ledger length and the session's hash are
// read together under the session's lock, so calls arriving during the
// replay do not disturb the comparison.
func (s *Server) Replay(ctx context.Context, id string) (*ReplayResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, 0); err != nil {
		return nil, err
	}
	n := ss.nrec
	live := ss.ws.Hash().String()
	ss.mu.Unlock()
	recs, err := ss.wal.read(0, int(n))
	if err != nil {
		return nil, err
	}
	if uint64(len(recs)) != n {
		return nil, fmt.Errorf("session %s: ledger has %d records, expected %d", id, len(recs), n)
	}
	v, err := s.Version(ctx, ss.meta.Version)
	if err != nil {
		return nil, err
	}
	r := s.newReplayer(ss.group, v, ss.meta)
	for i := range recs {
		if err := r.apply(ctx, &recs[i]); err != nil {
			return nil, err
		}
	}
	rh := r.ws.Hash().String()
	return &ReplayResult{Records: n, ReplayHash: rh, Hash: live, Equal: rh == live && r.mismatches == 0, MismatchedCalls: r.mismatches}, nil
}
