package plugin

import (
	"context"
	"errors"
	"fmt"
)

// HostError is a failure of a host service as a plugin sees it: the model
// endpoint is down, a tool module trapped, the session is gone. It is an
// infrastructure failure, never the policy's doing: a harness ends the
// episode with it (FailureFromError) and the host reports it apart from
// scores.
//
// Service is "model", "env", "user" or "state". Kind is a stable,
// snake_case word the host chose (e.g. "unavailable", "timeout",
// "rate_limited", "trap", "deadline", "no_session", "bad_response").
type HostError struct {
	Service string
	Kind    string
	Message string
}

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
		return &Failure{Kind: he.Service + "_" + he.Kind, Message: he.Message}
	case errors.Is(err, context.DeadlineExceeded):
		return &Failure{Kind: "deadline", Message: err.Error()}
	default:
		return &Failure{Kind: "plugin", Message: err.Error()}
	}
}
