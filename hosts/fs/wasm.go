package fshost

import (
	"context"

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

// HostModule returns the builder of the weft_fs_v1 host module: call(req_ptr,
// req_len, out_ptr, out_cap) -> len and take(out_ptr, out_cap) -> len. The
// request is copied out of guest memory before it is served.
func HostModule(r wazero.Runtime) wazero.HostModuleBuilder {
	return hosts.AddBuffered(r.NewHostModuleBuilder(ModuleName), hosts.Buffered{
		Namespace: ModuleName, Name: "call", MaxRequest: MaxRequest, CopyRequest: true, Serve: Call,
	})
}

// Instantiate instantiates weft_fs_v1 in r.
func Instantiate(ctx context.Context, r wazero.Runtime) (api.Module, error) {
	return HostModule(r).Instantiate(ctx)
}
