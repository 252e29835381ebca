package sqlhost

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_sql_v1"

// MaxRequest is the largest query request accepted from a guest.
const MaxRequest = 16 << 20

// Call is the per-call binding of weft_sql_v1: the handler that serves the
// call's queries and the pending-result slot of the result-buffer protocol.
// A Call serves one guest call at a time.
type Call struct {
	Handler *Handler
	pending []byte
}

type ctxKey struct{}

// WithCall binds c to the guest calls made with the returned context.
func WithCall(ctx context.Context, c *Call) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// CallFrom returns the binding of ctx, or nil.
func CallFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(ctxKey{}).(*Call)
	return c
}

var errNoCall = []byte(`{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"other","message":"no SQL session bound to this call"}}`)

// Query serves one request and applies the result-buffer protocol: it
// returns the response length n and, when n <= len(out), the response is in
// out[:n]; otherwise it is kept pending for Take.
func (c *Call) Query(ctx context.Context, req, out []byte) uint32 {
	var resp []byte
	if c == nil || c.Handler == nil {
		resp = errNoCall
	} else {
		resp = c.Handler.Handle(ctx, req)
	}
	return c.deliver(resp, out)
}

func (c *Call) deliver(resp, out []byte) uint32 {
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
// returning its length; 0 when nothing is pending.
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
func (c *Call) Reset() { c.pending = nil }

func guestBytes(m api.Module, fn string, ptr, n uint32) []byte {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("%s.%s: buffer [%d, +%d) out of guest memory", ModuleName, fn, ptr, n))
	}
	return b
}

// HostModule returns the builder of the weft_sql_v1 host module; each call
// is served by the *Call bound to the call's context (WithCall).
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
			outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
			if reqLen > MaxRequest {
				panic(fmt.Errorf("%s.query: request of %d bytes exceeds %d", ModuleName, reqLen, MaxRequest))
			}
			// copy: the request must not alias the output buffer.
			req := append([]byte(nil), guestBytes(m, "query", reqPtr, reqLen)...)
			out := guestBytes(m, "query", outPtr, outCap)
			stack[0] = api.EncodeU32(CallFrom(ctx).Query(ctx, req, out))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "out_ptr", "out_cap").
		Export("query").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			out := guestBytes(m, "take", api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
			stack[0] = api.EncodeU32(CallFrom(ctx).Take(out))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").
		Export("take")
}

// Instantiate instantiates weft_sql_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
