package module

import (
	"context"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// NewNativeServer returns a Module serving a synthesized server (sdk/spec)
// with the shared interpreter's Go code run natively (sdk/interp), as
// NewNative runs a Go module: the server's manifest (spec.Server.Manifest),
// arguments checked against its schemas, each call on the session's
// workspace under the tool's own table policy (its reads and writes, as
// Runtime.LoadServer), the program passed by digest once compiled. Internal
// errors classify as LoadServer's do. A spec that does not validate is a *ModuleError naming the
// server, tool and field (ErrInvalidModule).
func NewNativeServer(s *spec.Server, cfg Config) (*Module, error) {
	layer, err := newServerLayer(s)
	if err != nil {
		return nil, &ModuleError{Digest: "server:" + s.Name, Reason: "program", Err: err}
	}
	in := interp.New(interp.Options{})
	dispatch := func(ctx context.Context, h abi.Host, request []byte) []byte {
		suffix := layer.byDigest
		if !in.Has(layer.digest) {
			suffix = layer.withSource
		}
		req, err := layer.request(request, suffix)
		if err != nil {
			b, _ := abi.Marshal(abi.InternalError{Message: "malformed call request: " + err.Error()})
			return b
		}
		return in.Dispatch(ctx, h, req)
	}
	m, err := serverModule(s, nil)
	if err != nil {
		return nil, err
	}
	n, err := NewNative(m.manifestJSON, dispatch, cfg)
	if err != nil {
		return nil, err
	}
	n.toolPolicy = m.toolPolicy
	return n, nil
}
