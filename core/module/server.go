package module

import (
	"context"
	"encoding/json"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// NewNativeServer returns a Module serving a synthesized server (sdk/spec)
// with the shared interpreter's Go code run natively (sdk/interp), as
// NewNative runs a Go module: the server's manifest (spec.Server.Manifest),
// arguments checked against its schemas, each call on the session's
// workspace under the server's table policy, the program passed with each
// request. A spec that does not validate is a *ModuleError naming the
// server, tool and field (ErrInvalidModule).
func NewNativeServer(s *spec.Server, cfg Config) (*Module, error) {
	if err := s.Validate(); err != nil {
		return nil, &ModuleError{Digest: "server:" + s.Name, Reason: "invalid server spec", Err: err}
	}
	man, err := json.Marshal(s.Manifest())
	if err != nil {
		return nil, &ModuleError{Digest: "server:" + s.Name, Reason: "manifest", Err: err}
	}
	prog := s.ProgramRef()
	in := interp.New(interp.Options{})
	dispatch := func(ctx context.Context, h abi.Host, request []byte) []byte {
		var req abi.CallRequest
		if err := json.Unmarshal(request, &req); err != nil {
			b, _ := abi.Marshal(abi.InternalError{Message: "malformed call request: " + err.Error()})
			return b
		}
		req.Program = &prog
		b, err := abi.Marshal(req)
		if err != nil {
			b, _ = abi.Marshal(abi.InternalError{Message: err.Error()})
			return b
		}
		return in.Dispatch(ctx, h, b)
	}
	return NewNative(man, dispatch, cfg)
}
