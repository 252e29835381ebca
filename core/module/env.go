package module

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/hosts"
	fshost "github.com/weft-dev/weft/hosts/fs"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

// callEnv is the environment of one module call (a tool call, a resource
// read, a prompt get, or one native call through NativeHost), created once
// per call by newCallEnv. Its hosts.Call is the one value the host
// libraries (hosts/sql, clock, rand, log: through the call's context) and
// the instance's WASI binding (clocks, random_get, stdio) read: the
// session's virtual clock at the start of the call, the random stream of
// the call's sequence number, the log and progress sinks, the SQL handler
// of the call's unit of work under the module's table policy, and the
// deadline.
type callEnv struct {
	hosts.Call
	timeout time.Duration

	mu     sync.Mutex
	denied []string // statements the table policy refused
	// sb is the call's SQL sandbox: the table policy checked by the
	// engine, the clock (Call.Now, which a guest's sleep advances), the SQL
	// random stream and the budget (docs/design/015-sql-sandbox.md).
	sb *state.Sandbox
}

// CallOption adjusts one call of Module.Call, ReadResource or GetPrompt.
type CallOption func(*callEnv)

// WithLog sends the call's log records to fn instead of the session's Log
// (nil drops them): a server routes each call's records to the request that
// made it without touching the shared Session.
func WithLog(fn func(level int, msg string)) CallOption {
	return func(e *callEnv) { e.Log = fn }
}

// WithProgress sends the call's progress notifications to fn instead of the
// session's Progress (nil drops them).
func WithProgress(fn func(progress, total float64, msg string)) CallOption {
	return func(e *callEnv) { e.Progress = fn }
}

// newCallEnv creates the environment of one call of session s with
// sequence number seq (its random stream is RandStream(s.Seed, seq)): SQL on
// x under policy, the session's clock now, the session's Log and Progress
// unless opts replace them, and timeout as the call's time limit. The
// statements of module resolve table names through s.Tables[module].
func newCallEnv(s *Session, module string, x StateSQL, policy sqlhost.Policy, files fshost.Policy, seq uint64, timeout time.Duration, opts []CallOption) *callEnv {
	e := &callEnv{timeout: timeout}
	e.sb = callSandbox(policy, func() int64 { return e.Call.Now }, s.Seed, seq)
	e.sb.Names = s.Tables[module]
	h := &sqlhost.Handler{Exec: SandboxedSQL(x, e.sb), Policy: policy, OnDenied: e.deny}
	e.Call = hosts.Call{Now: s.now(), Rand: &lazyStream{seed: s.Seed, seq: seq}, Log: s.Log, Progress: s.Progress, SQL: h.Handle, SQLBatch: h.HandleBatch}
	if fx, ok := x.(StateFiles); ok {
		fh := &fshost.Handler{Exec: FilesExecutor(fx), Policy: files, OnDenied: e.denyFile}
		e.Call.FS = fh.Handle
	}
	for _, o := range opts {
		o(e)
	}
	return e
}

// denyFile records a file operation the files policy refused, as
// "weft_fs_v1 OP PATH" among the call's denied statements.
func (e *callEnv) denyFile(op, path string) {
	e.mu.Lock()
	e.denied = append(e.denied, fshost.ModuleName+" "+op+" "+path)
	e.mu.Unlock()
}

func (e *callEnv) deny(d *sqlhost.DeniedError) {
	e.mu.Lock()
	e.denied = append(e.denied, d.Statement)
	e.mu.Unlock()
}

// Denied returns the statements the table policy refused so far.
func (e *callEnv) Denied() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.denied...)
}

// bind returns the context of the guest call: ctx bounded by the call's
// timeout (when > 0) and carrying the environment (hosts.With); the
// environment's Deadline is the context's.
func (e *callEnv) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if e.timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, e.timeout)
	}
	e.Deadline, _ = ctx.Deadline()
	return hosts.With(ctx, &e.Call), cancel
}

// lazyStream is a call's random stream, keyed when first read: most calls
// never read the guest's stream or SQL's, and keying one (sha256, then
// ChaCha8's key schedule) is a fixed cost of every call otherwise. It reads
// the same bytes as the stream it stands for.
type lazyStream struct {
	seed, seq uint64
	sql       bool // SQLRandStream, else RandStream
	r         io.Reader
}

func (l *lazyStream) Read(p []byte) (int, error) {
	if l.r == nil {
		if l.sql {
			l.r = SQLRandStream(l.seed, l.seq)
		} else {
			l.r = RandStream(l.seed, l.seq)
		}
	}
	return l.r.Read(p)
}
