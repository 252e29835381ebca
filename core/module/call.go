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
	clockhost "github.com/weft-dev/weft/hosts/clock"
	loghost "github.com/weft-dev/weft/hosts/log"
	randhost "github.com/weft-dev/weft/hosts/rand"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
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

// Content is one MCP content item of a tool result or a prompt message.
type Content struct {
	Type     string `json:"type"` // text, image, audio, resource_link, resource
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`     // image, audio: base64
	MimeType string `json:"mimeType,omitempty"` // image, audio, resource_link
	URI      string `json:"uri,omitempty"`      // resource_link
	Name     string `json:"name,omitempty"`     // resource_link
	// Resource is the embedded resource of a "resource" item
	// ({"type": "resource", "resource": {"uri", "mimeType", "text" | "blob"}}).
	Resource *ResourceContents `json:"resource,omitempty"`
}

// check verifies the fields a content type needs: image and audio need data
// and mimeType, resource_link a uri, resource an embedded resource
// (ResourceContents.check). Base64 is passed on unchecked.
func (c *Content) check() error {
	switch c.Type {
	case "text":
	case "image", "audio":
		if c.Data == "" || c.MimeType == "" {
			return fmt.Errorf("%s needs data and mimeType", c.Type)
		}
	case "resource_link":
		if c.URI == "" {
			return errors.New("resource_link needs uri")
		}
	case "resource":
		if c.Resource == nil {
			return errors.New("resource needs an embedded resource")
		}
		if err := c.Resource.check(); err != nil {
			return fmt.Errorf("resource: %v", err)
		}
	default:
		return fmt.Errorf("unknown content type %q", c.Type)
	}
	return nil
}

// Result is the MCP CallToolResult of a tool call. IsError marks a tool
// error (the agent's problem); its SQL writes were rolled back.
type Result struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	// Denied lists the SQL statements the table policy refused during the
	// call (returned to the module as "denied" errors). Not part of MCP.
	Denied []string `json:"-"`
}

type logger struct{ s *Session }

func (l logger) Log(level int, msg string) {
	if l.s.Log != nil {
		l.s.Log(level, msg)
	}
}

func (l logger) Progress(p, total float64, msg string) {
	if l.s.Progress != nil {
		l.s.Progress(p, total, msg)
	}
}

// Call runs tool with args for session s, as one unit of work on
// s.Workspace:
//
//   - the arguments are validated against the tool's input schema first
//     (*ArgumentError, ErrInvalidArguments); an undeclared tool is
//     ErrUnknownTool (ExportTool is allowed when the manifest says export);
//   - a successful result commits the unit;
//   - a tool error (Result.IsError) rolls it back and is returned as the
//     result, with a nil error;
//   - a trap, panic or internalError (ErrTrap), an exceeded deadline
//     (ErrDeadline, ErrCanceled), memory cap (ErrMemoryLimit) or a malformed
//     response (ErrMalformedOutput) roll it back, discard the instance and
//     return a *CallError.
//
// Every call, failed or not, consumes one sequence number of the session.
func (m *Module) Call(ctx context.Context, s *Session, tool string, args json.RawMessage) (*Result, error) {
	if tool == ExportTool {
		if !m.manifest.Export {
			return nil, fmt.Errorf("%w: %s (the module does not export its state)", ErrUnknownTool, tool)
		}
		args = json.RawMessage("{}")
	} else {
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
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	req, err := json.Marshal(struct {
		Tool      string          `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}{tool, args})
	if err != nil {
		return nil, &ArgumentError{Tool: tool, Message: err.Error()}
	}

	seq := s.seq.Add(1) - 1
	unit, err := s.Workspace.Begin()
	if err != nil {
		return nil, err
	}
	leave, err := m.rt.admit(ctx)
	if err != nil {
		_ = unit.Rollback()
		return nil, &CallError{Tool: tool, Kind: ErrCanceled, Message: err.Error(), Err: err}
	}
	defer leave()
	inst, err := m.acquire(ctx)
	if err != nil {
		_ = unit.Rollback()
		return nil, err
	}

	var denied []string
	sqlCall := &sqlhost.Call{Handler: &sqlhost.Handler{
		Exec:   SQLExecutor(unit),
		Policy: m.policy,
		OnDenied: func(d *sqlhost.DeniedError) {
			denied = append(denied, d.Statement)
		},
	}}
	stream := RandStream(s.Seed, seq)
	now := s.now()
	clockFn := func() int64 { return now }
	lg := logger{s}
	inst.b.set(clockFn, stream, lg.Log)

	timeout := m.rt.cfg.CallTimeout
	if s.Timeout > 0 {
		timeout = s.Timeout
	}
	if tool == ExportTool {
		timeout = m.rt.cfg.ExportTimeout
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	callCtx = sqlhost.WithCall(callCtx, sqlCall)
	callCtx = clockhost.WithClock(callCtx, clockhost.Func(clockFn))
	callCtx = randhost.WithSource(callCtx, stream)
	callCtx = loghost.WithLogger(callCtx, lg)

	out, err := inst.invoke(callCtx, req)
	if err != nil {
		_ = unit.Rollback()
		ce := m.classify(ctx, callCtx, inst, tool, err)
		ce.Denied = denied
		inst.close(context.WithoutCancel(ctx))
		return nil, ce
	}
	res, ierr := parseResponse(out)
	if ierr != nil {
		_ = unit.Rollback()
		ierr.Tool, ierr.Denied = tool, denied
		inst.close(context.WithoutCancel(ctx))
		return nil, ierr
	}
	res.Denied = denied
	m.release(ctx, inst)
	if res.IsError && callCtx.Err() != nil {
		// The deadline (or the caller) stopped a host call, e.g. an SQL
		// statement, and the module reported that as its own error: it is
		// an infrastructure failure, not the policy's.
		_ = unit.Rollback()
		kind, msg := ErrDeadline, fmt.Sprintf("no response within the deadline (call timeout %s)", timeout)
		if ctx.Err() != nil && ctx.Err() != context.DeadlineExceeded {
			kind, msg = ErrCanceled, "the caller canceled the call"
		}
		return nil, &CallError{Tool: tool, Kind: kind, Message: msg, Denied: denied}
	}
	if res.IsError {
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

// classify turns a failed guest call into a *CallError.
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
	inst.b.mu.Lock()
	stderr := string(inst.b.stderr.buf)
	inst.b.mu.Unlock()
	limit := uint64(m.rt.cfg.MemoryLimitMiB) << 20
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

// parseResponse decodes a CallToolResult or an internalError.
func parseResponse(out []byte) (*Result, *CallError) {
	malformed := func(format string, a ...any) *CallError {
		return &CallError{Kind: ErrMalformedOutput, Message: fmt.Sprintf(format, a...)}
	}
	var raw struct {
		Content           *[]json.RawMessage `json:"content"`
		StructuredContent json.RawMessage    `json:"structuredContent"`
		IsError           *bool              `json:"isError"`
		InternalError     *string            `json:"internalError"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&raw); err != nil {
		return nil, malformed("response is not a JSON object: %v (%s)", err, excerpt(out))
	}
	if dec.More() {
		return nil, malformed("trailing data after the response (%s)", excerpt(out))
	}
	if raw.InternalError != nil {
		return nil, &CallError{Kind: ErrTrap, Message: "internal error: " + *raw.InternalError}
	}
	if raw.Content == nil {
		return nil, malformed("response has no content array (%s)", excerpt(out))
	}
	res := &Result{Content: make([]Content, 0, len(*raw.Content))}
	for i, c := range *raw.Content {
		var item Content
		if err := json.Unmarshal(c, &item); err != nil {
			return nil, malformed("content[%d]: %v", i, err)
		}
		if err := item.check(); err != nil {
			return nil, malformed("content[%d]: %v", i, err)
		}
		res.Content = append(res.Content, item)
	}
	if sc := bytes.TrimSpace(raw.StructuredContent); len(sc) > 0 && !bytes.Equal(sc, []byte("null")) {
		if sc[0] != '{' {
			return nil, malformed("structuredContent is not an object")
		}
		res.StructuredContent = sc
	}
	if raw.IsError != nil {
		res.IsError = *raw.IsError
	}
	return res, nil
}

func excerpt(b []byte) string {
	if len(b) > 120 {
		return fmt.Sprintf("%q...", b[:120])
	}
	return fmt.Sprintf("%q", b)
}
