package synth

import (
	"context"
	"encoding/json"

	"github.com/weft-dev/weft/sdk/spec"
)

// ServingCall is one tool call of a server that succeeded on its seed
// state: the call a serving benchmark makes on a new session of the
// server (core/synth/cmd/synthscale).
type ServingCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	ReadOnly  bool            `json:"read_only"`
}

// ValidateServing is Validate, also returning a call of the server that
// succeeded in the normal stage (arguments drawn from the seed): the first
// read-only tool's in documentation order, else the first tool's; nil
// when no normal call succeeded.
func ValidateServing(ctx context.Context, s *spec.Server, opts ValidateOptions) (*Report, *ServingCall, error) {
	r, v, err := validate(ctx, s, opts)
	if err != nil {
		return nil, nil, err
	}
	var call *ServingCall
	for _, nc := range v.normals {
		if nc.out == nil || !nc.out.ok() {
			continue
		}
		c := &ServingCall{Tool: nc.tool.Name, Arguments: nc.out.args, ReadOnly: nc.tool.ReadOnly}
		if c.ReadOnly {
			return r, c, nil
		}
		if call == nil {
			call = c
		}
	}
	return r, call, nil
}
