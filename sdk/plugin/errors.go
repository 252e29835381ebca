package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/failure"
)

// HostError is a failure of a host service as a plugin sees it: the model
// endpoint is down, a tool module trapped, the session is gone. It is an
// infrastructure failure, never the policy's doing: a harness ends the
// episode with it (FailureFromError) and the host reports it apart from
// scores.
//
// Service is failure.Model, Env, User or State. Kind is a kind of the one
// failure vocabulary (sdk/failure: unavailable, timeout, rate_limited,
// trap, deadline, no_such_session, no_such_version, bad_response, ...).
type HostError struct {
	Service failure.Component
	Kind    failure.Kind
	Message string
}

// FailureKind returns e.Kind (failure.Of classifies a HostError by it).
func (e *HostError) FailureKind() failure.Kind { return e.Kind }

func (e *HostError) Error() string {
	return fmt.Sprintf("host %s service: %s: %s", e.Service, e.Kind, e.Message)
}

// FailureFromError turns err into the Failure a plugin response carries:
// a *HostError keeps its service as Kind prefix ("model_timeout"); a
// context deadline is "deadline"; anything else is "plugin".
func FailureFromError(err error) *Failure {
	if err == nil {
		return nil
	}
	var he *HostError
	switch {
	case errors.As(err, &he):
		return &Failure{Kind: failure.Code("", he.Service, he.Kind), Message: he.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &Failure{Kind: "deadline", Message: err.Error()}
	default:
		return &Failure{Kind: "plugin", Message: err.Error()}
	}
}

// hostServices are the components a harness's Failure can name.
var hostServices = []failure.Component{failure.Model, failure.Env, failure.User, failure.State}

// FailureParts reads the component and kind of a Failure a plugin
// returned: "<service>_<kind>" (a host service's failure, the service one
// of model, env, user, state), "deadline" (the plugin's own deadline:
// component harness, kind deadline) or "plugin" (the plugin's own error:
// component harness, kind error). Anything else is component harness with
// the whole string as its kind. This is the only place the v1 protocol's
// joined string is taken apart (weft.plugin.v2 carries both as enums).
func FailureParts(f *Failure) (failure.Component, failure.Kind) {
	switch k := f.GetKind(); k {
	case "plugin":
		return failure.Harness, failure.OwnError
	case "deadline":
		return failure.Harness, failure.Deadline
	default:
		for _, c := range hostServices {
			if rest, ok := strings.CutPrefix(k, string(c)+"_"); ok {
				return c, failure.Kind(rest)
			}
		}
		return failure.Harness, failure.Kind(k)
	}
}
