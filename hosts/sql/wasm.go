package sqlhost

import (
	"context"

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

// HostModule returns the builder of the weft_sql_v1 host module: query
// (req_ptr, req_len, out_ptr, out_cap) -> len and take (out_ptr, out_cap)
// -> len; each call is served by the environment bound to the call's
// context (hosts.With). The request is copied out of guest memory: it must
// not alias the output buffer.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	return hosts.AddBuffered(r.NewHostModuleBuilder(ModuleName), hosts.Buffered{
		Namespace: ModuleName, Name: "query", MaxRequest: MaxRequest, CopyRequest: true, Serve: Query,
	})
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
	// DecodeSQLBatch copies the request (one string) before the output
	// buffer is written: no copy here.
	return hosts.AddBuffered(r.NewHostModuleBuilder(ModuleNameV2), hosts.Buffered{
		Namespace: ModuleNameV2, Name: "batch", MaxRequest: MaxRequest, Serve: Batch,
	})
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
