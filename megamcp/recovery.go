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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
)

// ErrRecovery: Open found sessions it could not recover now but that are
// intact on disk (a configuration error such as a registry without their
// modules, or a transient error that outlasted the retries). Nothing was
// renamed or removed; fix the cause and start again. The error lists the
// sessions and their causes.
var ErrRecovery = errors.New("sessions not recovered")

// recoveryClass is how recovery treats a session's error (docs/api.md,
// "Recovery policy"):
//
//   - classTransient (too many open files, out of memory, a replay over
//     its deadline, an interrupted system call): retried with backoff,
//     Config.RecoveryAttempts times; if it persists, Open refuses to start
//     and the session stays as it is for the next start.
//   - classConfig (a module the registry does not have or cannot compile,
//     an unreadable data directory): Open refuses to start, naming the
//     sessions; nothing is renamed.
//   - classDamage (a ledger damaged before its end, an emptied or missing
//     ledger, unreadable meta.json, a replay that fails or differs): the
//     session is set aside as sessions/<id>.failed, whole, for an operator;
//     the others are recovered.
type recoveryClass int

const (
	classDamage recoveryClass = iota
	classTransient
	classConfig
)

func (c recoveryClass) String() string {
	switch c {
	case classTransient:
		return "transient"
	case classConfig:
		return "configuration"
	}
	return "damage"
}

// configError marks an error recovery must not blame on the session.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

func classify(err error) recoveryClass {
	var ce *configError
	switch {
	case errors.As(err, &ce):
		return classConfig
	case errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE), errors.Is(err, syscall.ENOMEM),
		errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EINTR), errors.Is(err, syscall.ENOBUFS),
		errors.Is(err, module.ErrDeadline), errors.Is(err, context.DeadlineExceeded):
		return classTransient
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return classConfig
	}
	return classDamage
}

// recoveryOutcome is one session's result.
type recoveryOutcome struct {
	name     string
	replayed int // records replayed (k >= 0)
	removed  bool
	empty    bool // recovered with no ledger record
	err      error
	class    recoveryClass
	attempts int
}

// recover rebuilds every session found in the data directory, classifying
// failures (see recoveryClass). It returns an ErrRecovery error when any
// session was kept for the next start.
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
		return fmt.Errorf("%w: %v", ErrDataDir, err)
	}
	start := time.Now()
	var (
		mu   sync.Mutex
		outs []recoveryOutcome
		wg   sync.WaitGroup
	)
	work := make(chan string)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for name := range work {
				o := s.recoverWithRetry(ctx, filepath.Join(root, name))
				o.name = name
				mu.Lock()
				outs = append(outs, o)
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
	sort.Slice(outs, func(i, j int) bool { return outs[i].name < outs[j].name })

	var n, replayed, aside, removed, empty int
	var kept []string
	for _, o := range outs {
		switch {
		case o.err == nil && o.removed:
			removed++
			s.countRecovery("removed_incomplete")
		case o.err == nil:
			n++
			replayed += o.replayed
			if o.empty {
				empty++
			}
			s.countRecovery("recovered")
		case o.class == classDamage:
			// Damage to this session only: set it aside, whole, for an
			// operator, and go on with the others.
			aside++
			dir := filepath.Join(root, o.name)
			to := setAsideName(dir)
			s.log.Error("session not recovered (damaged); set aside", "session", o.name, "dir", to, "err", o.err)
			if err := os.Rename(dir, to); err != nil {
				kept = append(kept, fmt.Sprintf("%s: %v (and setting it aside failed: %v)", o.name, o.err, err))
			}
			s.countRecovery("set_aside")
		default:
			s.log.Error("session not recovered; kept for the next start", "session", o.name, "class", o.class.String(), "attempts", o.attempts, "err", o.err)
			kept = append(kept, fmt.Sprintf("%s (%s error after %d attempt(s)): %v", o.name, o.class, o.attempts, o.err))
			s.countRecovery("kept_" + o.class.String())
		}
	}
	if n > 0 || aside > 0 || removed > 0 || len(kept) > 0 {
		s.log.Info("sessions recovered", "sessions", n, "set_aside", aside, "kept", len(kept), "removed_incomplete", removed,
			"empty_ledgers", empty, "records_replayed", replayed, "seconds", time.Since(start).Seconds())
	}
	if len(kept) > 0 {
		return fmt.Errorf("%w: %d session(s) kept on disk, untouched, for the next start (fix the cause: --registry, file-descriptor limit, memory): %s",
			ErrRecovery, len(kept), strings.Join(kept, "; "))
	}
	return nil
}

// setAsideName is dir + ".failed", or ".failed.N" when that exists.
func setAsideName(dir string) string {
	to := dir + ".failed"
	for i := 2; ; i++ {
		if _, err := os.Lstat(to); errors.Is(err, os.ErrNotExist) {
			return to
		}
		to = fmt.Sprintf("%s.failed.%d", dir, i)
	}
}

func (s *Server) countRecovery(outcome string) {
	if s.met != nil {
		s.met.recovered.WithLabelValues(outcome).Inc()
	}
}

// recoverWithRetry runs recoverSession, again after a transient error
// (backoff 50 ms, 200 ms, 800 ms, ...).
func (s *Server) recoverWithRetry(ctx context.Context, dir string) recoveryOutcome {
	var o recoveryOutcome
	wait := 50 * time.Millisecond
	for o.attempts = 1; ; o.attempts++ {
		k, removed, err := s.recoverSession(ctx, dir)
		if err == nil {
			o.replayed, o.removed, o.err = k, removed, nil
			o.empty = !removed && s.sessionLen(filepath.Base(dir)) == 0
			return o
		}
		o.err, o.class = err, classify(err)
		if o.class != classTransient || o.attempts >= s.cfg.RecoveryAttempts || ctx.Err() != nil {
			return o
		}
		s.log.Warn("session recovery failed with a transient error; retrying", "session", filepath.Base(dir), "attempt", o.attempts, "err", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return o
		}
		wait *= 4
	}
}

func (s *Server) sessionLen(id string) uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if ss := s.sessions[id]; ss != nil {
		return ss.nrec
	}
	return 0
}

// recoverSession rebuilds the session in dir and returns the number of
// ledger records replayed, or removed for a directory of a creation that
// never finished (no meta.json and no ledger record: nothing acknowledged).
func (s *Server) recoverSession(ctx context.Context, dir string) (replayed int, removed bool, err error) {
	id := filepath.Base(dir)
	mp := filepath.Join(dir, "meta.json")
	raw, err := s.readFile(mp)
	if errors.Is(err, os.ErrNotExist) {
		return s.recoverWithoutMeta(dir)
	}
	if err != nil {
		return 0, false, err
	}
	var meta sessionMeta
	if err := json.Unmarshal(raw, &meta); err != nil {
		return 0, false, fmt.Errorf("meta.json: %w", err)
	}
	if meta.ID != id {
		return 0, false, fmt.Errorf("meta.json names session %q, its directory %q", meta.ID, id)
	}
	g, err := s.group(ctx, meta.Digests)
	if err != nil {
		if classify(err) == classTransient {
			return 0, false, err
		}
		return 0, false, &configError{fmt.Errorf("modules %v: %w", meta.Digests, err)}
	}
	lp := filepath.Join(dir, "ledger.wal")
	if err := s.fault("open", lp); err != nil {
		return 0, false, err
	}
	w, recs, cut, magic, err := openWAL(lp, s.cfg.Fsync, false)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, fmt.Errorf("%w: ledger.wal is missing", ErrCorruptLedger)
	}
	if err != nil {
		return 0, false, err
	}
	if meta.LedgerFormat >= 1 && !magic {
		w.close()
		return 0, false, fmt.Errorf("%w: ledger.wal lost its header (emptied or overwritten: %d bytes)", ErrCorruptLedger, cut.Offset+cut.Bytes)
	}
	base, err := s.Version(ctx, meta.Version)
	if err != nil {
		w.close()
		return 0, false, err
	}
	r := s.newReplayer(g, base, meta)
	var ck checkpointInfo
	var ahead *checkpointAheadError
	staleCheckpoint := false
	if c, v, anchor, err := s.loadCheckpoint(ctx, dir, meta, recs); errors.As(err, &ahead) && cut.Bytes > 0 {
		// A torn last frame that the checkpoint covers: that append was
		// acknowledged, and a crash or a full disk tore it afterwards. Its
		// loss is the torn record alone: the checkpoint (which holds its
		// effect) is refused and removed, the complete records before it
		// are replayed.
		s.log.Error("ledger: torn tail covered by the checkpoint: the torn records were acknowledged and are lost; replaying the complete records", "session", id,
			"checkpoint_covers", ahead.covers, "records_kept", ahead.has, "records_lost", ahead.covers-ahead.has)
		if s.met != nil {
			s.met.checkpointsRefused.Inc()
		}
		staleCheckpoint = true
	} else if errors.Is(err, ErrCorruptLedger) {
		w.close()
		return 0, false, err
	} else if err != nil && classify(err) == classTransient {
		w.close()
		return 0, false, err
	} else if err != nil {
		// The ledger is the source of truth: a damaged or impossible
		// checkpoint only costs a longer replay.
		s.log.Warn("checkpoint refused; replaying the whole ledger", "session", id, "err", err)
		if s.met != nil {
			s.met.checkpointsRefused.Inc()
		}
	} else if c != nil {
		if err := r.ws.Restore(v); err != nil {
			w.close()
			return 0, false, err
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
			return 0, false, err
		}
	}
	if err := w.cutTail(); err != nil {
		w.close()
		return 0, false, err
	}
	if staleCheckpoint {
		if err := os.Remove(filepath.Join(dir, "checkpoint.json")); err != nil {
			w.close()
			return 0, false, err
		}
	}
	if cut.Bytes > 0 {
		s.log.Warn("ledger: torn tail cut (an append that was never acknowledged)", "session", id,
			"offset", cut.Offset, "bytes", cut.Bytes, "records_cut", cut.Records, "records_kept", len(recs))
		if s.met != nil {
			s.met.tailCutRecords.Add(float64(cut.Records))
			s.met.tailCutBytes.Add(float64(cut.Bytes))
		}
	}
	ss := &Session{id: meta.ID, srv: s, group: g, base: meta.Version, created: meta.Created, meta: meta,
		ws: r.ws, ms: r.ms, clock: r.clock, gen: r.gen, anchor: r.anchor, wal: w,
		nrec: uint64(len(recs)), calls: r.calls, ck: ck, ephemeral: meta.Ephemeral, replayMismatches: r.mismatches}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if s.met != nil {
		s.met.sessions.Inc()
	}
	return len(recs) - int(ck.Index), false, nil
}

// recoverWithoutMeta handles a session directory without meta.json: a
// creation that never finished (meta.json is written last) when its ledger
// holds no record — removed, nothing in it was acknowledged — and damage
// otherwise: a ledger with records is acknowledged data and is never
// deleted (the directory is set aside).
func (s *Server) recoverWithoutMeta(dir string) (int, bool, error) {
	lp := filepath.Join(dir, "ledger.wal")
	if err := s.fault("open", lp); err != nil {
		return 0, false, err
	}
	f, err := os.Open(lp)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return 0, false, err
	default:
		_, serr := walStart(f)
		recs, _, rerr := readFrames(f)
		f.Close()
		if serr != nil {
			return 0, false, serr
		}
		if rerr != nil || len(recs) > 0 {
			return 0, false, missingMetaError(len(recs), rerr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint.json")); err == nil {
		return 0, false, fmt.Errorf("%w: meta.json is missing but a checkpoint exists: kept for an operator", ErrCorruptLedger)
	}
	s.log.Info("removed the directory of a session creation that never finished (no meta.json, no ledger record)", "dir", dir)
	return 0, true, os.RemoveAll(dir)
}

// readFile is os.ReadFile behind the fault hook.
func (s *Server) readFile(p string) ([]byte, error) {
	if err := s.fault("read", p); err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// loadCheckpoint reads dir's checkpoint.json and rebuilds the state it
// records: nil without a checkpoint, an error for one that is damaged or
// does not fit the ledger recs (ErrCorruptLedger when it covers records
// the ledger no longer has: acknowledged records are missing).
func (s *Server) loadCheckpoint(ctx context.Context, dir string, meta sessionMeta, recs []Record) (*checkpointInfo, *state.Version, *state.Version, error) {
	b, err := s.readFile(filepath.Join(dir, "checkpoint.json"))
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
	if ck.Index > uint64(len(recs)) {
		return nil, nil, nil, &checkpointAheadError{covers: ck.Index, has: uint64(len(recs))}
	}
	if err := checkpointFits(&ck, meta, recs[:ck.Index]); err != nil {
		return nil, nil, nil, fmt.Errorf("checkpoint.json: %w", err)
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

// checkpointAheadError: the checkpoint covers more records than the
// ledger has (acknowledged records are missing). It is ErrCorruptLedger,
// except after a torn tail (see recoverSession).
type checkpointAheadError struct{ covers, has uint64 }

func (e *checkpointAheadError) Error() string {
	return fmt.Sprintf("%v: the checkpoint covers %d records but the ledger has %d: acknowledged records are missing", ErrCorruptLedger, e.covers, e.has)
}

func (e *checkpointAheadError) Unwrap() error { return ErrCorruptLedger }

// checkpointFits checks a checkpoint's bookkeeping against the ledger
// records it claims to cover: the number of tool calls, the generation,
// the next sequence number and the anchor must be what those records
// give. A checkpoint with a valid state hash but impossible content (a
// sequence number or generation going backwards, calls counted twice, an
// anchor the ledger never restored to) is refused.
func checkpointFits(ck *checkpointInfo, meta sessionMeta, recs []Record) error {
	var calls, seq, lastSeq uint64
	gen := uint64(FirstGeneration)
	anchor := meta.Version
	for i := range recs {
		r := &recs[i]
		switch r.Kind {
		case KindCall:
			calls++
			lastSeq = max(lastSeq, r.Seq)
			next := r.Seq
			if r.Error == nil || (r.Error.Kind != "unknown_tool" && r.Error.Kind != "invalid_arguments") {
				next++
			}
			seq = max(seq, next)
		case KindRestore:
			gen, anchor = r.Generation, r.Version
			seq = max(seq, r.Seq)
		case KindClock:
			seq = max(seq, r.Seq)
		}
	}
	var bad []string
	if ck.Calls != calls {
		bad = append(bad, fmt.Sprintf("%d calls, the ledger's first %d records hold %d", ck.Calls, ck.Index, calls))
	}
	if ck.Generation != gen {
		bad = append(bad, fmt.Sprintf("generation %d, the ledger gives %d", ck.Generation, gen))
	}
	// A call refused before running consumes no number; one failed by an
	// injected fault neither (replay counts it as consumed): the next
	// number lies between the last recorded one and the replay's.
	if ck.Seq > seq || (calls > 0 && ck.Seq < lastSeq) {
		bad = append(bad, fmt.Sprintf("next sequence number %d, the ledger gives %d..%d", ck.Seq, lastSeq, seq))
	}
	// A checkpoint whose delta could not be taken against the anchor (the
	// schema changed) is anchored on its own state.
	if ck.Anchor != anchor && ck.Anchor != ck.Hash {
		bad = append(bad, fmt.Sprintf("anchor %.12s, the ledger's last restore (or the initial version) is %.12s", ck.Anchor, anchor))
	}
	if len(bad) > 0 {
		return fmt.Errorf("impossible for the ledger it covers: %s", strings.Join(bad, "; "))
	}
	return nil
}

// missingMetaError is ErrCorruptLedger for a session directory without
// meta.json whose ledger holds n records, with the ledger's read error
// (rerr, nil when the ledger read cleanly) after them.
func missingMetaError(n int, rerr error) error {
	msg := fmt.Sprintf("meta.json is missing but the ledger holds %d record(s)", n)
	if rerr != nil {
		msg += fmt.Sprintf(" and is unreadable after them (%v)", rerr)
	}
	return fmt.Errorf("%w: %s: kept for an operator", ErrCorruptLedger, msg)
}
