package module

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

// DefaultEpoch is the time of a Session without a Clock.
var DefaultEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// VirtualClock is a session's clock: it moves only when told to. Safe for
// concurrent use.
type VirtualClock struct {
	mu sync.Mutex
	t  time.Time
}

// NewVirtualClock returns a clock reading t.
func NewVirtualClock(t time.Time) *VirtualClock { return &VirtualClock{t: t} }

// Now returns the clock's time.
func (c *VirtualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *VirtualClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set sets the clock.
func (c *VirtualClock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// Session is the caller-side context of tool calls: the SQL state they act
// on, the seed of their random streams, their clock and where their log
// records go. Calls of one session must not overlap (its workspace holds one
// unit of work at a time: state.ErrUnitInProgress).
type Session struct {
	Workspace *state.Workspace
	Seed      uint64
	Clock     *VirtualClock // nil: DefaultEpoch, never moving
	// Log receives the module's log records (weft_log_v1.write, stdout at
	// info, stderr at warn); nil drops them.
	Log func(level int, msg string)
	// Progress receives the module's progress notifications; nil drops them.
	Progress func(progress, total float64, msg string)
	// Timeout, if > 0, replaces the runtime's CallTimeout for this
	// session's tool calls (replay and recovery use a generous one: a call
	// that was acknowledged once must not fail on a slower machine).
	Timeout time.Duration
	// Tables maps a module name to the stored names of its tables in the
	// session's state (GroupTables.Names of a namespaced group): a call of
	// that module resolves its statements' table names through it
	// (state.Sandbox.Names). nil: every name as written.
	Tables map[string]map[string]string

	seq atomic.Uint64
}

// Seq returns the number of calls made in the session so far; the next call
// runs with sequence number Seq().
func (s *Session) Seq() uint64 { return s.seq.Load() }

// SetSeq sets the sequence number of the session's next call: replay and
// recovery re-run a ledger's calls with the numbers they first had.
func (s *Session) SetSeq(n uint64) { s.seq.Store(n) }

func (s *Session) now() int64 {
	if s.Clock == nil {
		return DefaultEpoch.UnixNano()
	}
	return s.Clock.Now().UnixNano()
}

// RandStream returns the deterministic random stream of call number seq of a
// session seeded with seed: ChaCha8 keyed by sha256(seed || seq), both
// little-endian uint64.
func RandStream(seed, seq uint64) *rand.ChaCha8 {
	var in [16]byte
	binary.LittleEndian.PutUint64(in[:8], seed)
	binary.LittleEndian.PutUint64(in[8:], seq)
	return rand.NewChaCha8(sha256.Sum256(in[:]))
}

// Content is one MCP content item of a tool result or a prompt message:
// the wire type abi.Content (type text, image, audio, resource_link or
// resource; Check verifies the members its type needs).
type Content = abi.Content

// Result is the MCP CallToolResult of a tool call (abi.CallResult: Content,
// StructuredContent, IsError). IsError marks a tool error (the agent's
// problem); its SQL writes were rolled back.
type Result struct {
	abi.CallResult
	// Denied lists the SQL statements the table policy refused during the
	// call (returned to the module as "denied" errors). Not part of MCP.
	Denied []string `json:"-"`
}

// ErrorResult is the tool-error result whose one text content is text: how
// a caller reports a call refused before the module ran (an unknown tool,
// invalid arguments) to an agent that can read and correct it.
func ErrorResult(text string) *Result {
	return &Result{CallResult: abi.CallResult{Content: []Content{abi.Text(text)}, IsError: true}}
}

// Call runs tool with args for session s, as one unit of work on
// s.Workspace:
//
//   - the arguments are validated against the tool's input schema first
//     (*ArgumentError, ErrInvalidArguments); an undeclared tool is
//     ErrUnknownTool (ExportTool is allowed when the manifest says export,
//     ExportChangedTool with abi.ExportChangedArgs when it says
//     export_changed);
//   - a successful result commits the unit;
//   - a tool error (Result.IsError) rolls it back and is returned as the
//     result, with a nil error (unless the manifest says
//     errors_keep_state: then it commits, as a success does);
//   - a trap, panic or internalError (ErrTrap), an exceeded deadline
//     (ErrDeadline, ErrCanceled), memory cap (ErrMemoryLimit; also a call
//     whose SQL went over its budget, docs/abi.md "SQL limits") or a malformed
//     response (ErrMalformedOutput) roll it back, discard the instance and
//     return a *CallError.
//
// The call runs in one environment (the session's clock when the call
// starts, the random stream of its sequence number, the session's Log and
// Progress unless opts replace them, SQL in the unit of work), read by the
// WASI binding and the host libraries alike. Every call, failed or not,
// consumes one sequence number of the session.
func (m *Module) Call(ctx context.Context, s *Session, tool string, args json.RawMessage, opts ...CallOption) (*Result, error) {
	switch {
	case tool == ExportTool:
		if !m.manifest.Export {
			return nil, fmt.Errorf("%w: %s (the module does not export its state)", ErrUnknownTool, tool)
		}
		args = json.RawMessage("{}")
	case tool == ExportChangedTool:
		if !m.manifest.ExportChanged {
			return nil, fmt.Errorf("%w: %s (the module does not export changed records)", ErrUnknownTool, tool)
		}
		var a abi.ExportChangedArgs
		if err := json.Unmarshal(args, &a); err != nil || a.Changed == nil {
			return nil, &ArgumentError{Tool: tool, Message: "want {\"changed\": {table: [key, ...]}}"}
		}
	default:
		sch, ok := m.schemas[tool]
		if !ok {
			return nil, fmt.Errorf("%w: %q in module %s", ErrUnknownTool, tool, m.manifest.Name)
		}
		if err := validateArgs(tool, sch, args); err != nil {
			return nil, err
		}
	}
	if s == nil || s.Workspace == nil {
		return nil, errors.New("module: Call needs a Session with a Workspace")
	}
	req := callRequest(tool, args)

	seq := s.seq.Add(1) - 1
	unit, err := s.Workspace.Begin()
	if err != nil {
		return nil, err
	}
	timeout := m.rt.cfg.CallTimeout
	if s.Timeout > 0 {
		timeout = s.Timeout
	}
	if tool == ExportTool || tool == ExportChangedTool {
		timeout = m.rt.cfg.ExportTimeout
	}
	env := newCallEnv(s, m.manifest.Name, unit, m.policyFor(tool), m.manifest.FilesPolicy(), seq, timeout, opts)
	out, ans, stopped, finish, err := m.run(ctx, env, tool, req)
	if lerr := env.sb.Exceeded(); lerr != nil && !stopped {
		// The call's SQL went over its budget: a typed failure of the
		// call, whatever the module made of the SQL error.
		if finish != nil {
			finish(err == nil)
		}
		_ = unit.Rollback()
		return nil, &CallError{Tool: tool, Kind: ErrMemoryLimit, Message: "SQL budget: " + lerr.Error(), Denied: env.Denied()}
	}
	if err != nil {
		_ = unit.Rollback()
		return nil, err
	}
	res, ierr := parseResponse(out, ans)
	if ierr != nil {
		finish(false)
		_ = unit.Rollback()
		ierr.Tool, ierr.Denied = tool, env.Denied()
		return nil, ierr
	}
	res.Denied = env.Denied()
	finish(true)
	if res.IsError && stopped {
		// The deadline (or the caller) stopped a host call, e.g. an SQL
		// statement, and the module reported that as its own error: it is
		// an infrastructure failure, not the policy's.
		_ = unit.Rollback()
		kind, msg := ErrDeadline, fmt.Sprintf("no response within the deadline (call timeout %s)", timeout)
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			kind, msg = ErrCanceled, "the caller canceled the call"
		}
		return nil, &CallError{Tool: tool, Kind: kind, Message: msg, Denied: res.Denied}
	}
	if res.IsError && !m.manifest.ErrorsKeepState {
		if err := unit.Rollback(); err != nil {
			return nil, err
		}
		return res, nil
	}
	if err := unit.Commit(); err != nil {
		return nil, err
	}
	return res, nil
}

// run runs the request req (label names it in errors) in env: on a warm
// instance whose WASI binding reads env, or natively for a module of
// NewNative, within one of the runtime's call slots and env's timeout. It
// returns the guest's answer, whether the call's context was done by then
// (stopped), and finish, which the caller must call once it has checked the
// answer: finish(true) returns the instance to the pool, finish(false)
// discards it (a malformed answer). On a failed guest call (trap, deadline,
// memory cap) the error is a *CallError with the refused statements and the
// instance is already discarded; a failure to get an instance is returned as
// is.
func (m *Module) run(ctx context.Context, env *callEnv, label string, req []byte) (out []byte, ans *abi.Answer, stopped bool, finish func(keep bool), err error) {
	if err := ctx.Err(); err != nil {
		// Done before the guest starts: a short guest would not reach a
		// deadline check (interrupt.go) before it answers.
		return nil, nil, true, nil, m.classify(ctx, ctx, nil, label, err)
	}
	leave, err := m.rt.admit(ctx)
	if err != nil {
		return nil, nil, false, nil, &CallError{Tool: label, Kind: ErrCanceled, Message: err.Error(), Err: err}
	}
	var inst *instance
	if m.native != nil {
		// The SDK runs native calls one at a time: queue here, so that the
		// call's deadline starts when it runs.
		m.nativeMu.Lock()
		defer m.nativeMu.Unlock()
	} else {
		if inst, err = m.acquire(ctx); err != nil {
			leave()
			return nil, nil, false, nil, err
		}
		inst.b.set(&env.Call)
	}
	callCtx, cancel := env.bind(ctx)
	if inst == nil {
		out, err = m.runNative(callCtx, env, req)
	} else {
		out, ans, err = m.invoke(callCtx, inst, req)
	}
	stopped = callCtx.Err() != nil
	if err != nil {
		ce := m.classify(ctx, callCtx, inst, label, err)
		ce.Denied = env.Denied()
		if inst != nil {
			inst.close(context.WithoutCancel(ctx))
		}
		cancel()
		leave()
		return nil, nil, stopped, nil, ce
	}
	finish = func(keep bool) {
		switch {
		case inst == nil:
		case keep:
			m.release(ctx, inst)
		default:
			inst.close(context.WithoutCancel(ctx))
		}
		cancel()
		leave()
	}
	return out, ans, stopped, finish, nil
}

// classify turns a failed guest call into a *CallError; inst is nil for a
// native call.
func (m *Module) classify(ctx, callCtx context.Context, inst *instance, tool string, err error) *CallError {
	ce := &CallError{Tool: tool, Kind: ErrTrap, Message: err.Error(), Err: err}
	var oe *outputError
	if errors.As(err, &oe) {
		ce.Kind, ce.Err = ErrMalformedOutput, nil
		return ce
	}
	var exit *sys.ExitError
	isExit := errors.As(err, &exit)
	switch {
	case isExit && exit.ExitCode() == sys.ExitCodeDeadlineExceeded,
		callCtx.Err() == context.DeadlineExceeded && ctx.Err() == nil,
		ctx.Err() == context.DeadlineExceeded:
		ce.Kind, ce.Message = ErrDeadline, fmt.Sprintf("no response within the deadline (call timeout %s, export timeout %s)", m.rt.cfg.CallTimeout, m.rt.cfg.ExportTimeout)
		return ce
	case isExit && exit.ExitCode() == sys.ExitCodeContextCanceled, ctx.Err() != nil:
		ce.Kind, ce.Message = ErrCanceled, "the caller canceled the call"
		return ce
	}
	if inst == nil {
		return ce
	}
	inst.b.mu.Lock()
	stderr := string(inst.b.stderr.buf)
	inst.b.mu.Unlock()
	// A grow the cap refused during the call decides (whatever the guest
	// did next: the Go runtime's fatal error, an abort); the stderr and
	// memory-size tests remain for a guest that died before asking.
	limit := m.rt.memoryLimit()
	if want := inst.lin.takeRefused(); want > 0 {
		ce.Kind = ErrMemoryLimit
		ce.Message = fmt.Sprintf("memory cap of %d MiB exceeded: the module asked to grow its memory from %d MiB to %d MiB",
			m.rt.cfg.MemoryLimitMiB, memSize(inst)>>20, want>>20)
		return ce
	}
	if strings.Contains(stderr, "out of memory") ||
		(inst.mem != nil && uint64(inst.mem.Size())+16*pageSize > limit) {
		ce.Kind = ErrMemoryLimit
		ce.Message = fmt.Sprintf("memory cap of %d MiB exceeded (memory %d MiB)", m.rt.cfg.MemoryLimitMiB, memSize(inst)>>20)
		return ce
	}
	if i := strings.Index(stderr, "panic: "); i >= 0 {
		msg := stderr[i:]
		if j := strings.Index(msg, "\n\n"); j >= 0 {
			msg = msg[:j]
		}
		ce.Message = msg
	} else if isExit {
		ce.Message = fmt.Sprintf("module exited with code %d", exit.ExitCode())
	}
	return ce
}

func memSize(inst *instance) uint64 {
	if inst.mem == nil {
		return 0
	}
	return uint64(inst.mem.Size())
}

// parseResponse decodes a CallToolResult or an internalError; ans, when
// not nil, is out already decoded (Module.invoke).
func parseResponse(out []byte, ans *abi.Answer) (*Result, *CallError) {
	malformed := func(format string, a ...any) *CallError {
		return &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf(format, a...)}
	}
	if ans == nil {
		var err error
		if ans, err = abi.DecodeAnswer(out); err != nil {
			return nil, malformed("%v (%s)", err, excerpt(out))
		}
	}
	if ans.InternalError != nil {
		return nil, &CallError{Kind: internalKind(ans.Code), Code: ans.Code, Message: "internal error: " + *ans.InternalError}
	}
	if ans.Content == nil {
		return nil, malformed("response has no content array (%s)", excerpt(out))
	}
	res := &Result{CallResult: abi.CallResult{Content: make([]Content, 0, len(ans.Content)), IsError: ans.IsError}}
	for i, c := range ans.Content {
		item, err := abi.DecodeContent(c)
		if err != nil {
			return nil, malformed("content[%d]: %v", i, err)
		}
		if err := item.Check(); err != nil {
			return nil, malformed("content[%d]: %v", i, err)
		}
		res.Content = append(res.Content, item)
	}
	if sc := bytes.TrimSpace(ans.StructuredContent); len(sc) > 0 && !bytes.Equal(sc, []byte("null")) {
		if sc[0] != '{' {
			return nil, malformed("structuredContent is not an object")
		}
		res.StructuredContent = sc
	}
	return res, nil
}

func excerpt(b []byte) string {
	if len(b) > 120 {
		return fmt.Sprintf("%q...", b[:120])
	}
	return fmt.Sprintf("%q", b)
}

// callRequest encodes the guest's abi.CallRequest for tool with args,
// which Call has decoded once already (validateArgs, or the export hooks'
// own check): the arguments are copied byte for byte, not parsed and
// compacted again as json.Marshal of a json.RawMessage would.
func callRequest(tool string, args json.RawMessage) []byte {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req := make([]byte, 0, len(`{"tool":"","arguments":}`)+len(tool)+len(args))
	req = append(req, `{"tool":`...)
	req = appendJSONString(req, tool)
	req = append(req, `,"arguments":`...)
	req = append(req, args...)
	return append(req, '}')
}

// appendJSONString appends s as a JSON string, as json.Marshal writes it.
func appendJSONString(b []byte, s string) []byte { return abi.AppendJSONString(b, s, true) }
