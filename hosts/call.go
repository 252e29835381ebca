package hosts

import (
	"context"
	"io"
	"time"
)

// Call is the environment of one guest call: what the host libraries and
// the instance's WASI binding read while the call runs. The runtime creates
// one per call and binds it with With; its fields do not change during the
// call. The zero Call is valid: the epoch, zero random bytes, no log, no
// SQL. A Call serves one guest call at a time.
type Call struct {
	// Now is the session's virtual clock for the call, nanoseconds since the
	// Unix epoch: weft_clock_v1.now and WASI clock_time_get (realtime and
	// monotonic) read it.
	Now int64
	// Rand is the call's deterministic random stream (weft_rand_v1.fill,
	// WASI random_get); nil reads zero bytes.
	Rand io.Reader
	// Log receives the call's log records (weft_log_v1.write, WASI stdout at
	// info and stderr at warn); level 0 debug .. 3 error. nil drops them.
	Log func(level int, msg string)
	// Progress receives the call's MCP progress notifications
	// (weft_log_v1.progress; total 0 = unknown). nil drops them.
	Progress func(progress, total float64, msg string)
	// SQL serves one weft_sql_v1 query request (JSON) and returns the
	// response JSON; nil answers every query with an error response.
	SQL func(ctx context.Context, req []byte) []byte
	// SQLBatch serves one weft_sql_v2 request (several statements, the
	// compact binary encoding of sdk/abi) and returns the response; nil
	// answers every request with an error result.
	SQLBatch func(ctx context.Context, req []byte) []byte
	// FS serves one weft_fs_v1 request (JSON) on the call's workspace files
	// and returns the response JSON; nil answers every request with an
	// error response.
	FS func(ctx context.Context, req []byte) []byte
	// Deadline is when the call's time is up (zero: none). The context of
	// the guest call carries the same deadline.
	Deadline time.Time

	pending []byte // a result of the result-buffer protocol waiting for Take
}

type ctxKey struct{}

// With binds c to the guest calls made with the returned context.
func With(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// From returns the environment bound to ctx, or nil.
func From(ctx context.Context) *Call {
	c, _ := ctx.Value(ctxKey{}).(*Call)
	return c
}

// Deliver applies the result-buffer protocol (docs/abi.md, "Host
// libraries") to resp: when it fits in out it is copied there and any
// pending result dropped; otherwise it is kept pending for Take and out is
// left alone. It returns len(resp). A nil Call keeps nothing.
func (c *Call) Deliver(resp, out []byte) uint32 {
	if len(resp) <= len(out) {
		copy(out, resp)
		if c != nil {
			c.pending = nil
		}
	} else if c != nil {
		c.pending = resp
	}
	return uint32(len(resp))
}

// Take delivers the pending result into out if it fits (and clears it),
// returning its length; 0 when nothing is pending. A buffer that is still
// too small gets nothing and the result stays pending.
func (c *Call) Take(out []byte) uint32 {
	if c == nil || c.pending == nil {
		return 0
	}
	n := len(c.pending)
	if n <= len(out) {
		copy(out, c.pending)
		c.pending = nil
	}
	return uint32(n)
}

// Reset drops any pending result.
func (c *Call) Reset() {
	if c != nil {
		c.pending = nil
	}
}
