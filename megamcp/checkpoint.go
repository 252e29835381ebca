package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	if err := writeFileAtomic(filepath.Join(ss.dir(), "checkpoint.json"), mustJSON(info), ss.srv.cfg.Fsync == FsyncAlways); err != nil {
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
}

func (s *Server) newReplayer(g *Group, v *state.Version, meta sessionMeta) *replayer {
	clock := module.NewVirtualClock(time.Unix(0, meta.Clock).UTC())
	ws := s.store.Fork(v)
	return &replayer{srv: s, group: g, ws: ws, clock: clock, anchor: v, gen: FirstGeneration,
		ms: &module.Session{Workspace: ws, Seed: meta.Seed, Clock: clock, Timeout: ReplayCallTimeout}}
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
		}
		r.ms.SetSeq(max(r.ms.Seq(), next))
	default:
		return fmt.Errorf("record %d: unknown kind %q", rec.Index, rec.Kind)
	}
	return nil
}

// ReplayResult compares a replay of a session's ledger with the session.
type ReplayResult struct {
	Records    uint64 `json:"records"`     // ledger records replayed
	ReplayHash string `json:"replay_hash"` // state after replaying them from the initial version
	Hash       string `json:"hash"`        // the session's state after the same records
	Equal      bool   `json:"equal"`
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
	return &ReplayResult{Records: n, ReplayHash: rh, Hash: live, Equal: rh == live}, nil
}

// recover rebuilds every session found in the data directory.
func (s *Server) recover(ctx context.Context) error {
	root := filepath.Join(s.cfg.DataDir, "sessions")
	// Temporary files of atomic writes a crash interrupted (versions,
	// meta.json, checkpoint.json): never renamed, never read.
	for _, pat := range []string{filepath.Join(s.cfg.DataDir, "versions", "*.tmp"), filepath.Join(root, "*", "*.tmp")} {
		tmps, _ := filepath.Glob(pat)
		for _, f := range tmps {
			_ = os.Remove(f)
		}
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return err
	}
	start := time.Now()
	var (
		mu                 sync.Mutex
		n, replayed, broke int
		wg                 sync.WaitGroup
	)
	work := make(chan string)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				dir := filepath.Join(root, name)
				k, err := s.recoverSession(ctx, dir)
				mu.Lock()
				switch {
				case err != nil:
					// One broken session must not keep the others down: set
					// it aside for an operator and go on.
					broke++
					aside := dir + ".failed"
					s.log.Error("session not recovered; set aside", "session", name, "dir", aside, "err", err)
					_ = os.Rename(dir, aside)
				case k >= 0:
					n++
					replayed += k
				}
				mu.Unlock()
			}
		}()
	}
	for _, e := range ents {
		if e.IsDir() && validID(e.Name()) {
			work <- e.Name()
		}
	}
	close(work)
	wg.Wait()
	if n > 0 || broke > 0 {
		s.log.Info("sessions recovered", "sessions", n, "failed", broke, "records_replayed", replayed, "seconds", time.Since(start).Seconds())
	}
	return nil
}

// recoverSession returns the number of ledger records replayed, or -1 for a
// directory without metadata (a create that never finished: removed).
func (s *Server) recoverSession(ctx context.Context, dir string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return -1, os.RemoveAll(dir)
	}
	if err != nil {
		return 0, err
	}
	var meta sessionMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return 0, fmt.Errorf("meta.json: %w", err)
	}
	g, err := s.group(ctx, meta.Digests)
	if err != nil {
		return 0, err
	}
	w, recs, err := openWAL(filepath.Join(dir, "ledger.wal"), s.cfg.Fsync)
	if err != nil {
		return 0, err
	}
	base, err := s.Version(ctx, meta.Version)
	if err != nil {
		w.close()
		return 0, err
	}
	r := s.newReplayer(g, base, meta)
	var ck checkpointInfo
	if c, v, anchor, err := s.loadCheckpoint(ctx, dir, len(recs)); errors.Is(err, ErrCorruptLedger) {
		w.close()
		return 0, err
	} else if err != nil {
		// The ledger is the source of truth: a damaged checkpoint only costs
		// a longer replay.
		s.log.Warn("checkpoint unusable; replaying the whole ledger", "session", meta.ID, "err", err)
	} else if c != nil {
		if err := r.ws.Restore(v); err != nil {
			w.close()
			return 0, err
		}
		ck = *c
		r.anchor, r.gen, r.calls = anchor, ck.Generation, ck.Calls
		r.ms.SetSeq(ck.Seq)
		r.clock.Set(time.Unix(0, ck.Clock).UTC())
		ck.Delta = nil
	}
	for i := ck.Index; i < uint64(len(recs)); i++ {
		if err := r.apply(ctx, &recs[i]); err != nil {
			w.close()
			return 0, err
		}
	}
	ss := &Session{id: meta.ID, srv: s, group: g, base: meta.Version, created: meta.Created, meta: meta,
		ws: r.ws, ms: r.ms, clock: r.clock, gen: r.gen, anchor: r.anchor, wal: w,
		nrec: uint64(len(recs)), calls: r.calls, ck: ck, ephemeral: meta.Ephemeral}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if s.met != nil {
		s.met.sessions.Inc()
	}
	return len(recs) - int(ck.Index), nil
}

// loadCheckpoint reads dir's checkpoint.json and rebuilds the state it
// records: nil without a checkpoint, an error for one that is damaged or
// does not fit the ledger (nrecs records).
func (s *Server) loadCheckpoint(ctx context.Context, dir string, nrecs int) (*checkpointInfo, *state.Version, *state.Version, error) {
	b, err := os.ReadFile(filepath.Join(dir, "checkpoint.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	var ck checkpointInfo
	if err := json.Unmarshal(b, &ck); err != nil {
		return nil, nil, nil, fmt.Errorf("checkpoint.json: %w", err)
	}
	if ck.Index > uint64(nrecs) {
		return nil, nil, nil, fmt.Errorf("%w: the checkpoint covers %d records but the ledger has %d: acknowledged records are missing", ErrCorruptLedger, ck.Index, nrecs)
	}
	anchor, err := s.Version(ctx, ck.Anchor)
	if err != nil {
		return nil, nil, nil, err
	}
	v, err := s.store.ImportDelta(ctx, anchor, bytes.NewReader(ck.Delta))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("checkpoint.json: %w", err)
	}
	if v.Hash().String() != ck.Hash {
		return nil, nil, nil, fmt.Errorf("checkpoint.json: state hash %s, recorded %s", v.Hash(), ck.Hash)
	}
	return &ck, v, anchor, nil
}
