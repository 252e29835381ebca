package hosts

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// Buffered describes one request function of a host library that answers
// with the result-buffer protocol (docs/abi.md, "Host libraries"), and its
// take: weft_sql_v1 query, weft_sql_v2 batch, weft_fs_v1 call.
type Buffered struct {
	// Namespace and Name name the request function in errors
	// ("weft_sql_v1.query"); Name is also its export name.
	Namespace, Name string
	// MaxRequest is the largest request accepted, bytes; a larger one
	// traps the guest.
	MaxRequest uint32
	// CopyRequest copies the request out of guest memory before Serve
	// runs (Serve writes into the output buffer, which the request must
	// not alias); false hands Serve a view of guest memory, for a Serve
	// that copies the request itself before writing the output.
	CopyRequest bool
	// Serve answers the request (Deliver's protocol: it returns the
	// answer's length and writes it into out when it fits).
	Serve func(ctx context.Context, req, out []byte) uint32
}

// AddBuffered adds the request function of f and take to b:
//
//	<f.Name>(req_ptr, req_len, out_ptr, out_cap i32) -> len i32
//	take(out_ptr, out_cap i32) -> len i32
//
// A region outside guest memory, or a request over f.MaxRequest, traps the
// guest with an error naming the function; take delivers the call's
// pending result (Call.Take of the environment bound to ctx).
func AddBuffered(b wazero.HostModuleBuilder, f Buffered) wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	return b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
			outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
			if reqLen > f.MaxRequest {
				panic(fmt.Errorf("%s.%s: request of %d bytes exceeds %d", f.Namespace, f.Name, reqLen, f.MaxRequest))
			}
			req := GuestBytes(m, f.Namespace, f.Name, reqPtr, reqLen)
			if f.CopyRequest {
				req = append([]byte(nil), req...)
			}
			out := GuestBytes(m, f.Namespace, f.Name, outPtr, outCap)
			stack[0] = api.EncodeU32(f.Serve(ctx, req, out))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "out_ptr", "out_cap").
		Export(f.Name).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			out := GuestBytes(m, f.Namespace, "take", api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
			stack[0] = api.EncodeU32(From(ctx).Take(out))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").
		Export("take")
}

// GuestBytes is the region [ptr, ptr+n) of m's memory (a view, not a
// copy); a region outside it panics (traps the guest) with an error naming
// namespace.fn.
func GuestBytes(m api.Module, namespace, fn string, ptr, n uint32) []byte {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("%s.%s: buffer [%d, +%d) out of guest memory", namespace, fn, ptr, n))
	}
	return b
}
