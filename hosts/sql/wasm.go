package sqlhost

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/hosts"
	"github.com/weft-dev/weft/sdk/abi"
)

// ModuleName is the import namespace of this library.
const ModuleName = "weft_sql_v1"

// MaxRequest is the largest query request accepted from a guest.
const MaxRequest = 16 << 20

var errNoCall = []byte(`{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"other","message":"no SQL session bound to this call"}}`)

// Query serves one request with the SQL handler of the call environment
// bound to ctx (hosts.With) and applies the result-buffer protocol: it
// returns the response length n and, when n <= len(out), the response is in
// out[:n]; otherwise it is kept pending for Take. With no environment or no
// handler the response is an "other" error, never a trap.
func Query(ctx context.Context, req, out []byte) uint32 {
	env := hosts.From(ctx)
	resp := errNoCall
	if env != nil && env.SQL != nil {
		resp = env.SQL(ctx, req)
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

// HostModule returns the builder of the weft_sql_v1 host module; each call
// is served by the environment bound to the call's context (hosts.With).
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
			stack[0] = api.EncodeU32(Query(ctx, req, out))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "out_ptr", "out_cap").
		Export("query").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			out := guestBytes(m, "take", api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
			stack[0] = api.EncodeU32(Take(ctx, out))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").
		Export("take")
}

// ModuleNameV2 is the import namespace of the batched, compact library
// (docs/abi.md, "weft_sql_v2"); the same "sql" library of a manifest's
// hosts, version "v2", which provides weft_sql_v1 too.
const ModuleNameV2 = "weft_sql_v2"

var errNoCallV2 = abi.SQLFailure(KindOther, "no SQL session bound to this call")

// Batch serves one weft_sql_v2 request with the SQL batch handler of the
// call environment bound to ctx, with the result-buffer protocol of Query
// (the pending result is the call's one, shared with weft_sql_v1.take).
func Batch(ctx context.Context, req, out []byte) uint32 {
	env := hosts.From(ctx)
	resp := errNoCallV2
	if env != nil && env.SQLBatch != nil {
		resp = env.SQLBatch(ctx, req)
	}
	return env.Deliver(resp, out)
}

// HostModuleV2 returns the builder of the weft_sql_v2 host module: batch
// (req_ptr, req_len, out_ptr, out_cap) -> len and take (out_ptr, out_cap)
// -> len, the result-buffer protocol of weft_sql_v1.
func HostModuleV2(r wazero.Runtime) wazero.HostModuleBuilder {
	i32 := api.ValueTypeI32
	return r.NewHostModuleBuilder(ModuleNameV2).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			reqPtr, reqLen := api.DecodeU32(stack[0]), api.DecodeU32(stack[1])
			outPtr, outCap := api.DecodeU32(stack[2]), api.DecodeU32(stack[3])
			if reqLen > MaxRequest {
				panic(fmt.Errorf("%s.batch: request of %d bytes exceeds %d", ModuleNameV2, reqLen, MaxRequest))
			}
			// DecodeSQLBatch copies the request (one string) before the
			// output buffer is written.
			req := guestBytes(m, "batch", reqPtr, reqLen)
			out := guestBytes(m, "batch", outPtr, outCap)
			stack[0] = api.EncodeU32(Batch(ctx, req, out))
		}), []api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("req_ptr", "req_len", "out_ptr", "out_cap").
		Export("batch").
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, m api.Module, stack []uint64) {
			out := guestBytes(m, "take", api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
			stack[0] = api.EncodeU32(Take(ctx, out))
		}), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("out_ptr", "out_cap").
		Export("take")
}

// Instantiate instantiates weft_sql_v1 and weft_sql_v2 in r, returning
// weft_sql_v1.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	m, err := HostModule(r).Instantiate(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := HostModuleV2(r).Instantiate(ctx); err != nil {
		return nil, err
	}
	return m, nil
}
