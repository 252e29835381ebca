package megamcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
)

// FirstGeneration is a new session's generation. Generations start at 1 so
// that 0 can mean "not fenced" in requests: a client that read a session's
// generation before a restore is always fenced after it.
const FirstGeneration = 1

// Session is one weft session: a lifecycle group's modules over a private
// workspace, with a generation, a virtual clock, a seed and a ledger.
type Session struct {
	id      string
	srv     *Server
	group   *Group
	base    string // version the session was created from
	created time.Time
	meta    sessionMeta

	mu     ctxMutex // one call or admin operation at a time
	ws     *state.Workspace
	ms     *module.Session
	clock  *module.VirtualClock
	gen    uint64
	anchor *state.Version // version of creation or of the last restore
	wal    *wal
	nrec   uint64 // ledger records
	calls  uint64 // tool-call records
	ck     checkpointInfo
	closed bool
	// ephemeral sessions (made by an MCP client on /mcp) are deleted when
	// their MCP session ends.
	ephemeral bool
	// replayMismatches: calls whose replay at recovery gave another result
	// than the acknowledged one (see Server.replayMismatch).
	replayMismatches uint64
}

// sessionMeta is sessions/<id>/meta.json: what recovery needs to rebuild a
// session before its checkpoint and ledger are applied.
type sessionMeta struct {
	ID        string    `json:"id"`
	Modules   []string  `json:"modules"` // references as given
	Digests   []string  `json:"digests"` // what they resolved to
	Seed      uint64    `json:"seed"`
	Version   string    `json:"version"` // initial version id
	Clock     int64     `json:"clock_ns"`
	Created   time.Time `json:"created"`
	Ephemeral bool      `json:"ephemeral,omitempty"`
	// LedgerFormat is 1 for ledgers that start with walMagic (0: older
	// ledgers, read as they are).
	LedgerFormat int `json:"ledger_format,omitempty"`
}

// ledgerFormat is the format of the ledgers new sessions get.
const ledgerFormat = 1

// CreateOptions describes a new session.
type CreateOptions struct {
	// Modules are the references (name[:tag] or sha256:digest) of the
	// lifecycle group's modules; at least one.
	Modules []string `json:"modules"`
	// Version is the id of the state to fork; "" is the group's seed state
	// (the merged seeds of its modules).
	Version string `json:"version,omitempty"`
	// Seed seeds the random streams of the session's calls.
	Seed uint64 `json:"seed,omitempty"`
	// Clock is the virtual clock's start; zero is module.DefaultEpoch,
	// outside [MinClock, MaxClock] an ErrBadRequest.
	Clock time.Time `json:"clock,omitzero"`

	ephemeral bool
	id        string // preset id (an ephemeral session takes its MCP session's id)
}

// SessionInfo describes a session (the admin API's session object).
type SessionInfo struct {
	ID         string    `json:"id"`
	Modules    []string  `json:"modules"`
	Digests    []string  `json:"digests"`
	Version    string    `json:"version"` // the version the session was created from
	Generation uint64    `json:"generation"`
	Seed       uint64    `json:"seed"`
	Clock      time.Time `json:"clock"`
	Calls      uint64    `json:"calls"`  // tool calls in the ledger
	Ledger     uint64    `json:"ledger"` // ledger records
	Hash       string    `json:"hash"`   // hash of the current state
	Tools      []string  `json:"tools"`  // exposed tool names
	Created    time.Time `json:"created"`
	Checkpoint uint64    `json:"checkpoint"` // ledger records covered by the last checkpoint
	// ReplayMismatches counts the calls whose replay when the session was
	// recovered gave another result than the one acknowledged (a
	// nondeterministic module): the state may differ from what clients saw.
	ReplayMismatches uint64 `json:"replay_mismatches,omitempty"`
}

// Create makes a session: the group of opts.Modules over a workspace forked
// from opts.Version. Errors: ErrNoSuchModule, ErrNoSuchVersion,
// ErrBadRequest, ErrClosed.
func (s *Server) Create(ctx context.Context, opts CreateOptions) (*SessionInfo, error) {
	ss, err := s.create(ctx, opts)
	if err != nil {
		return nil, err
	}
	return ss.Info(), nil
}

func (s *Server) create(ctx context.Context, opts CreateOptions) (*Session, error) {
	start := time.Now()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return nil, ErrClosed
	}
	g, err := s.group(ctx, opts.Modules)
	if err != nil {
		return nil, err
	}
	var v *state.Version
	vid := opts.Version
	if vid == "" {
		v = g.seed
		if vid, err = s.putVersion(ctx, v); err != nil {
			return nil, err
		}
	} else if v, err = s.Version(ctx, vid); err != nil {
		return nil, err
	}
	if err := g.checkReads(v); err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock.IsZero() {
		clock = module.DefaultEpoch
	} else if err := checkClock(clock); err != nil {
		return nil, err
	}
	digests := make([]string, len(g.modules))
	for i, m := range g.modules {
		digests[i] = m.digest
	}
	ss := &Session{
		id: opts.id, srv: s, group: g, base: vid, created: time.Now().UTC(),
		ws: s.store.Fork(v), anchor: v, clock: module.NewVirtualClock(clock.UTC()), gen: FirstGeneration,
		ephemeral: opts.ephemeral,
	}
	if ss.id == "" {
		ss.id = newID()
	}
	ss.meta = sessionMeta{ID: ss.id, Modules: opts.Modules, Digests: digests, Seed: opts.Seed,
		Version: vid, Clock: clock.UTC().UnixNano(), Created: ss.created, Ephemeral: opts.ephemeral,
		LedgerFormat: ledgerFormat}
	ss.ms = &module.Session{Workspace: ss.ws, Seed: opts.Seed, Clock: ss.clock, Tables: g.tables.Names}
	if err := s.checkCapacity(opts.ephemeral); err != nil {
		return nil, err
	}
	if s.cfg.DataDir != "" {
		w, err := s.createSessionFiles(ss)
		if err != nil {
			// Nothing of the session was acknowledged: leave nothing that
			// a restart would take for a live session.
			_ = os.RemoveAll(ss.dir())
			return nil, err
		}
		ss.wal = w
	} else {
		ss.wal = newMemWAL()
	}
	s.mu.Lock()
	if err := s.capacityLocked(opts.ephemeral); err != nil {
		s.mu.Unlock()
		_ = ss.wal.close()
		if s.cfg.DataDir != "" {
			_ = os.RemoveAll(ss.dir())
		}
		return nil, err
	}
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	if s.met != nil {
		s.met.sessionsCreated.Inc()
		s.met.sessions.Inc()
		s.met.createSeconds.Observe(time.Since(start).Seconds())
	}
	s.log.Debug("session created", "session", ss.id, "modules", opts.Modules, "version", vid)
	return ss, nil
}

// createSessionFiles makes the session's directory: the ledger (with its
// magic, durable) first, then meta.json, written atomically, which marks
// the creation complete. Recovery removes a directory without meta.json
// whose ledger holds no record (a creation that never finished); it never
// removes one with records.
func (s *Server) createSessionFiles(ss *Session) (*wal, error) {
	dir := ss.dir()
	if err := s.fault("mkdir", dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lp := filepath.Join(dir, "ledger.wal")
	if err := s.fault("create", lp); err != nil {
		return nil, err
	}
	w, _, _, _, err := openWAL(lp, s.cfg.Fsync, true)
	if err != nil {
		return nil, err
	}
	if err := s.writeFile(filepath.Join(dir, "meta.json"), mustJSON(ss.meta)); err != nil {
		w.close()
		return nil, err
	}
	if s.cfg.Fsync == FsyncAlways {
		// The new directory entries (ledger.wal and meta.json in the
		// session's directory, the directory in sessions/) must be durable
		// before any call of the session is acknowledged.
		if err := errors.Join(syncDir(dir), syncDir(filepath.Dir(dir))); err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

func (ss *Session) dir() string { return filepath.Join(ss.srv.cfg.DataDir, "sessions", ss.id) }

// ID returns the session id.
func (ss *Session) ID() string { return ss.id }

// Group returns the session's lifecycle group.
func (ss *Session) Group() *Group { return ss.group }

// Info describes the session.
func (ss *Session) Info() *SessionInfo {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.infoLocked()
}

func (ss *Session) infoLocked() *SessionInfo {
	tools := make([]string, len(ss.group.tools))
	for i, t := range ss.group.tools {
		tools[i] = t.Name
	}
	return &SessionInfo{
		ID: ss.id, Modules: ss.meta.Modules, Digests: ss.meta.Digests, Version: ss.base,
		Generation: ss.gen, Seed: ss.meta.Seed, Clock: ss.clock.Now(), Calls: ss.calls,
		Ledger: ss.nrec, Hash: ss.ws.Hash().String(), Tools: tools, Created: ss.created,
		Checkpoint: ss.ck.Index, ReplayMismatches: ss.replayMismatches,
	}
}

// Session returns a live session. Errors: ErrNoSuchSession.
func (s *Server) Session(id string) (*Session, error) {
	s.mu.RLock()
	ss := s.sessions[id]
	s.mu.RUnlock()
	if ss == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchSession, id)
	}
	return ss, nil
}

// lock takes the session's lock (giving up, with an error matching
// module.ErrCanceled, when ctx ends first) and checks it is live and, when
// gen > 0, that gen is its generation.
func (ss *Session) lock(ctx context.Context, gen uint64) error {
	if err := ss.mu.LockContext(ctx); err != nil {
		return fmt.Errorf("%w: waiting for session %s: %w", module.ErrCanceled, ss.id, err)
	}
	if ss.closed {
		ss.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoSuchSession, ss.id)
	}
	if gen != 0 && gen != ss.gen {
		cur := ss.gen
		ss.mu.Unlock()
		if ss.srv.met != nil {
			ss.srv.met.fenced.Inc()
		}
		return &FencedError{Session: ss.id, Generation: gen, Current: cur}
	}
	return nil
}

// appendLocked writes rec as the session's next ledger record.
func (ss *Session) appendLocked(rec *Record) error {
	rec.Index = ss.nrec
	rec.Session = ss.id
	rec.Time = time.Now().UTC()
	if err := ss.wal.append(rec); err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			ss.srv.noteWrite(err)
		}
		return fmt.Errorf("%w: %v", ErrLedger, err)
	}
	if !ss.wal.mem {
		ss.srv.noteWrite(nil)
	}
	ss.nrec++
	if rec.Kind == KindCall {
		ss.calls++
	}
	return nil
}

// MaxArgumentsBytes bounds a tool call's JSON arguments (4 MiB, the MCP Go
// SDK's request limit): larger ones are refused as invalid arguments and
// recorded without their bytes.
const MaxArgumentsBytes = 4 << 20

// CallRequest is one tool call.
type CallRequest struct {
	// Generation, when non-zero, must equal the session's generation, else
	// the call is refused with a *FencedError and changes nothing.
	Generation uint64
	// Tool is the exposed tool name (see Group).
	Tool string
	// Arguments is the JSON arguments object ("" or null: {}).
	Arguments json.RawMessage
	// Log and Progress receive the module's log records and progress
	// notifications during the call; nil drops them.
	Log      func(level int, msg string)
	Progress func(progress, total float64, msg string)
}

// CallResult is the outcome of a tool call that ran (or was refused for bad
// arguments or an unknown tool, which are tool errors: Result.IsError).
type CallResult struct {
	Result      *module.Result `json:"result"`
	Seq         uint64         `json:"seq"`
	Generation  uint64         `json:"generation"`
	Index       uint64         `json:"index"` // ledger index of the call's record
	RowsChanged int            `json:"rows_changed"`
}

// Call runs a tool in the session: fence check, argument validation, the
// module call in a unit of work on the session's workspace (commit on
// success, rollback on a tool error or failure), ledger append, result. The
// call is acknowledged (returned) only after its record is in the ledger;
// if the append fails the call's changes are undone and the error is
// ErrLedger.
//
// An unknown tool or invalid arguments give a result with IsError (the
// policy's mistake, recorded); a trap, deadline, memory cap or malformed
// output give a *module.CallError (an infrastructure failure, also
// recorded); a stale generation gives a *FencedError (not recorded).
func (s *Server) Call(ctx context.Context, id string, req CallRequest) (*CallResult, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	return ss.Call(ctx, req)
}

// Call is Server.Call on this session.
func (ss *Session) Call(ctx context.Context, req CallRequest) (*CallResult, error) {
	if err := ss.lock(ctx, req.Generation); err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	return ss.callLocked(ctx, req)
}

func (ss *Session) callLocked(ctx context.Context, req CallRequest) (*CallResult, error) {
	start := time.Now()
	met := ss.srv.met
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || bytes.Equal(args, []byte("null")) {
		args = json.RawMessage("{}")
	}
	rec := &Record{Kind: KindCall, Generation: ss.gen, Seq: ss.ms.Seq(), Tool: req.Tool,
		Arguments: args, Clock: ss.clock.Now().UnixNano()}
	tooLarge := len(args) > MaxArgumentsBytes
	if tooLarge {
		rec.Arguments = mustJSON(map[string]int{"weft/omitted_bytes": len(args)})
	}
	// validated: module.Call decoded args once (its schema check), so they
	// are JSON and need no scan of their own here.
	validated := false
	before, _ := ss.ws.Snapshot()
	var res *module.Result
	var callErr error
	ti, ok := ss.group.byName[req.Tool]
	if tooLarge {
		callErr = &module.ArgumentError{Tool: req.Tool, Message: fmt.Sprintf("the arguments are %d bytes, over the %d-byte limit", len(args), MaxArgumentsBytes)}
	} else if !ok {
		callErr = fmt.Errorf("%w: %q%s", module.ErrUnknownTool, req.Tool, ss.group.didYouMean(req.Tool))
	} else {
		gt := ss.group.tools[ti]
		rec.Module, rec.Tool = gt.Module, gt.Tool.Name
		if gt.Name != gt.Tool.Name {
			rec.Exposed = gt.Name
		}
		if inj := ss.srv.cfg.Inject; inj != nil {
			if err := inj(ss.id, gt.Module, gt.Tool.Name, rec.Seq); err != nil {
				callErr = &module.CallError{Tool: gt.Tool.Name, Kind: module.ErrTrap, Message: "injected fault: " + err.Error()}
			}
		}
		if callErr == nil {
			res, callErr = gt.mod.mod.Call(ctx, ss.ms, gt.Tool.Name, args, module.WithLog(req.Log), module.WithProgress(req.Progress))
			validated = gt.Tool.Name != module.ExportTool &&
				!errors.Is(callErr, module.ErrUnknownTool) && !errors.Is(callErr, module.ErrInvalidArguments)
		}
	}
	if !tooLarge && !validated && !json.Valid(args) {
		rec.Arguments = mustJSON(string(args))
	}
	// A refused call (unknown tool, invalid arguments) is the policy's
	// mistake: an isError result the model can read and correct.
	if callErr != nil && (errors.Is(callErr, module.ErrUnknownTool) || errors.Is(callErr, module.ErrInvalidArguments)) {
		res = module.ErrorResult(callErr.Error())
		rec.Error = &ErrorInfo{Kind: errorKind(callErr), Message: callErr.Error()}
		callErr = nil
	} else if callErr != nil {
		rec.Error = &ErrorInfo{Kind: errorKind(callErr), Message: callErr.Error()}
	}
	rec.Result = res
	if res != nil && rec.Error == nil && !res.IsError {
		after, _ := ss.ws.Snapshot()
		rec.RowsChanged = state.CountChanges(before, after)
	}
	rec.DurationMs = float64(time.Since(start).Microseconds()) / 1000
	if err := ss.appendLocked(rec); err != nil {
		// Not acknowledged: undo the call.
		_ = ss.ws.Restore(before)
		if met != nil {
			met.errors.WithLabelValues("ledger").Inc()
		}
		return nil, err
	}
	if met != nil {
		kind := "ok"
		switch {
		case rec.Error != nil:
			kind = rec.Error.Kind
		case res != nil && res.IsError:
			kind = "tool_error"
		}
		met.calls.WithLabelValues(kind).Inc()
		if kind != "ok" {
			met.errors.WithLabelValues(kind).Inc()
		}
		met.callSeconds.Observe(time.Since(start).Seconds())
	}
	if callErr != nil {
		return nil, callErr
	}
	return &CallResult{Result: res, Seq: rec.Seq, Generation: ss.gen, Index: rec.Index, RowsChanged: rec.RowsChanged}, nil
}

// Snapshot registers the session's current state as a version and returns
// its id (with a DataDir, the version is on disk when Snapshot returns).
// gen > 0 is fenced like calls.
func (s *Server) Snapshot(ctx context.Context, id string, gen uint64) (string, error) {
	ss, err := s.Session(id)
	if err != nil {
		return "", err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return "", err
	}
	v, err := ss.ws.Snapshot()
	ss.mu.Unlock()
	if err != nil {
		return "", err
	}
	return s.putVersion(ctx, v)
}

// Restore sets the session's state to version vid and bumps its
// generation, returning the new one: calls and admin requests carrying an
// older generation are refused from now on (fencing stale attempts of an
// episode that was rolled back). gen > 0 is fenced like calls.
func (s *Server) Restore(ctx context.Context, id string, gen uint64, vid string) (uint64, error) {
	ss, err := s.Session(id)
	if err != nil {
		return 0, err
	}
	v, err := s.Version(ctx, vid)
	if err != nil {
		return 0, err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return 0, err
	}
	defer ss.mu.Unlock()
	before, _ := ss.ws.Snapshot()
	rec := &Record{Kind: KindRestore, Generation: ss.gen + 1, Seq: ss.ms.Seq(), Version: vid, Clock: ss.clock.Now().UnixNano()}
	if err := ss.ws.Restore(v); err != nil {
		return 0, err
	}
	if err := ss.appendLocked(rec); err != nil {
		_ = ss.ws.Restore(before)
		return 0, err
	}
	ss.gen++
	ss.anchor = v
	return ss.gen, nil
}

// SetClock sets the session's virtual clock (recorded in the ledger). A
// time outside [MinClock, MaxClock] is refused with ErrBadRequest, the
// clock and the ledger unchanged.
func (s *Server) SetClock(ctx context.Context, id string, gen uint64, t time.Time) error {
	ss, err := s.Session(id)
	if err != nil {
		return err
	}
	if err := checkClock(t); err != nil {
		return err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return err
	}
	defer ss.mu.Unlock()
	rec := &Record{Kind: KindClock, Generation: ss.gen, Seq: ss.ms.Seq(), Clock: t.UTC().UnixNano()}
	if err := ss.appendLocked(rec); err != nil {
		return err
	}
	ss.clock.Set(t.UTC())
	return nil
}

// Fork makes a new session with the same modules and seed as session id,
// starting from version vid ("" = the session's current state).
func (s *Server) Fork(ctx context.Context, id string, gen uint64, vid string) (*SessionInfo, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if vid == "" {
		if vid, err = s.Snapshot(ctx, id, gen); err != nil {
			return nil, err
		}
	} else if err := ss.lock(ctx, gen); err != nil {
		return nil, err
	} else {
		ss.mu.Unlock()
	}
	return s.Create(ctx, CreateOptions{Modules: ss.meta.Digests, Version: vid, Seed: ss.meta.Seed, Clock: ss.clock.Now()})
}

// Delete ends a session and removes its ledger and checkpoints from disk.
// gen > 0 is fenced like calls.
func (s *Server) Delete(ctx context.Context, id string, gen uint64) error {
	ss, err := s.Session(id)
	if err != nil {
		return err
	}
	if err := ss.lock(ctx, gen); err != nil {
		return err
	}
	ss.closed = true
	if ss.wal != nil {
		_ = ss.wal.close()
	}
	ss.mu.Unlock()
	s.mu.Lock()
	delete(s.sessions, id)
	s.mu.Unlock()
	if s.met != nil {
		s.met.sessions.Dec()
	}
	if s.cfg.DataDir != "" {
		return os.RemoveAll(ss.dir())
	}
	return nil
}

// Ledger returns up to limit (<= 0: all) records of the session starting at
// index from. The read is from disk with a DataDir; ctx is checked before it.
func (s *Server) Ledger(ctx context.Context, id string, from uint64, limit int) ([]Record, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", module.ErrCanceled, err)
	}
	return ss.wal.read(from, limit)
}

// Current returns the session's current committed state as an immutable
// version (cheap: a snapshot of the workspace, not registered as a version
// id). For inspection and verification.
// It waits for a call in progress (or for ctx to end).
func (s *Server) Current(ctx context.Context, id string) (*state.Version, error) {
	ss, err := s.Session(id)
	if err != nil {
		return nil, err
	}
	if err := ss.lock(ctx, 0); err != nil {
		return nil, err
	}
	defer ss.mu.Unlock()
	return ss.ws.Snapshot()
}

// Diff returns the row-level changes from version a to version b. Either
// id may also be "session:<id>", the session's current state.
func (s *Server) Diff(ctx context.Context, a, b string) (*state.Changes, error) {
	va, err := s.resolveState(ctx, a)
	if err != nil {
		return nil, err
	}
	vb, err := s.resolveState(ctx, b)
	if err != nil {
		return nil, err
	}
	return state.Diff(va, vb), nil
}

func (s *Server) resolveState(ctx context.Context, ref string) (*state.Version, error) {
	if id, ok := strings.CutPrefix(ref, "session:"); ok {
		return s.Current(ctx, id)
	}
	return s.Version(ctx, ref)
}

// errSession wraps err with the session id for logs.
func errSession(id string, err error) error { return fmt.Errorf("session %s: %w", id, err) }

// syncDir fsyncs a directory, making the entries created in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
