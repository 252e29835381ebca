package fshost

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/hosts"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_fs_v1"

var errNoCall = []byte(`{"error":{"kind":"other","message":"no workspace bound to this call"}}`)

// Call serves one request with the FS handler of the call environment
// bound to ctx (hosts.With) and applies the result-buffer protocol (as
// weft_sql_v1.query): it returns the response length n; when n <=
// len(out) the response is in out[:n], otherwise it is kept for Take. With
// no environment or no handler the response is an "other" error, never a
// trap.
func Call(ctx context.Context, req, out []byte) uint32 {
	env := hosts.From(ctx)
	resp := errNoCall
	if env != nil && env.FS != nil {
		resp = env.FS(ctx, req)
	}
	return env.Deliver(resp, out)
}

// Take delivers the call's pending result into out if it fits (and clears
// it), returning its length; 0 when nothing is pending.
func Take(ctx context.Context, out []byte) uint32 { return hosts.From(ctx).Take(out) }

func guestBytes(m api.Module, fn string, ptr, n uint32) []byte {
	b, ok := m.Memory().Read(ptr, n)
	if !ok {
		panic(fmt.Errorf("%s.%s: buffer [%d, +%d) out of guest memory", ModuleName, fn, ptr, n))
	}
	return b
}

// HostModule returns the builder of the weft_fs_v1 host module: call(req_ptr,
// req_len, out_ptr, out_cap) -> len and take(out_ptr, out_cap) -> len.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	return r.NewHostModuleBuilder(ModuleName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
			outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
			if reqLen > MaxRequest {
				panic(fmt.Errorf("%s.call: request of %d bytes exceeds %d", ModuleName, reqLen, MaxRequest))
			}
			req := append([]byte(nil), guestBytes(m, "call", reqPtr, reqLen)...)
			out := guestBytes(m, "call", outPtr, outCap)
			stack[0] = api.EncodeU32(Call(ctx, req, out))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "out_ptr", "out_cap").
		Export("call").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			out := guestBytes(m, "take", api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
			stack[0] = api.EncodeU32(Take(ctx, out))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").
		Export("take")
}

// Instantiate instantiates weft_fs_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
