package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/failure"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
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
// a *HostError keeps its service and kind (model/timeout); a context
// deadline is harness/deadline; anything else harness/error (the plugin's
// own failure).
func FailureFromError(err error) *Failure {
	if err == nil {
		return nil
	}
	var he *HostError
	switch {
	case errors.As(err, &he):
		return NewFailure(he.Service, he.Kind, he.Message)
	case errors.Is(err, context.DeadlineExceeded):
		return NewFailure(failure.Harness, failure.Deadline, err.Error())
	default:
		return NewFailure(failure.Harness, failure.OwnError, err.Error())
	}
}

// NewFailure builds the protocol Failure of component c and kind k. A kind
// the protocol's FailureKind enum does not list is sent as unspecified
// with the kind's word at the start of the message.
func NewFailure(c failure.Component, k failure.Kind, msg string) *Failure {
	f := &Failure{Message: msg}
	f.Component = pluginpb.Component(pluginpb.Component_value["COMPONENT_"+strings.ToUpper(string(c))])
	if v, ok := pluginpb.FailureKind_value["FAILURE_KIND_"+strings.ToUpper(string(k))]; ok {
		f.Kind = pluginpb.FailureKind(v)
	} else if k != "" {
		f.Message = string(k) + ": " + msg
	}
	return f
}

// FailureParts returns the component and kind of a protocol Failure (""
// for unspecified values).
func FailureParts(f *Failure) (failure.Component, failure.Kind) {
	var c failure.Component
	var k failure.Kind
	if f.GetComponent() != pluginpb.Component_COMPONENT_UNSPECIFIED {
		c = failure.Component(strings.ToLower(strings.TrimPrefix(f.GetComponent().String(), "COMPONENT_")))
	}
	if f.GetKind() != pluginpb.FailureKind_FAILURE_KIND_UNSPECIFIED {
		k = failure.Kind(strings.ToLower(strings.TrimPrefix(f.GetKind().String(), "FAILURE_KIND_")))
	}
	return c, k
}
