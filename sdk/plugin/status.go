package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/weft-dev/weft/sdk/failure"
)

// Wire encoding of errors (both directions of weft.plugin.v2).
//
// A *HostError crosses the wire as a gRPC status whose code is Aborted
// (Unavailable when Kind is unavailable, DeadlineExceeded when Kind is
// deadline, Unauthenticated for unauthenticated), whose message is
// HostError.Message, and whose details hold one weft.plugin.v2.Failure
// with the service as component and the kind.
//
// Any other error a plugin method returns crosses as status code Unknown
// with the error text as message and the detail Failure{component:
// PLUGIN, kind: ERROR}. Statuses without a Failure detail come from the
// gRPC transport (or from a peer that is not this SDK).

// hostErrorStatus encodes he as a gRPC status error.
func hostErrorStatus(he *HostError) error {
	code := codes.Aborted
	switch he.Kind {
	case failure.Unavailable:
		code = codes.Unavailable
	case failure.Deadline:
		code = codes.DeadlineExceeded
	case failure.Unauthenticated:
		code = codes.Unauthenticated
	}
	st := status.New(code, he.Message)
	if withD, err := st.WithDetails(NewFailure(he.Service, he.Kind, "")); err == nil {
		st = withD
	}
	return st.Err()
}

// serviceErrorStatus encodes the error a host service returned: a
// *HostError as is (its Service set to service when empty), context errors
// as Kind "deadline"/"canceled", anything else as Kind "internal".
func serviceErrorStatus(service failure.Component, err error) error {
	var he *HostError
	switch {
	case errors.As(err, &he):
		c := *he
		if c.Service == "" {
			c.Service = service
		}
		return hostErrorStatus(&c)
	case errors.Is(err, context.DeadlineExceeded):
		return hostErrorStatus(&HostError{Service: service, Kind: failure.Deadline, Message: err.Error()})
	case errors.Is(err, context.Canceled):
		return hostErrorStatus(&HostError{Service: service, Kind: failure.Canceled, Message: err.Error()})
	default:
		return hostErrorStatus(&HostError{Service: service, Kind: failure.Internal, Message: err.Error()})
	}
}

// pluginErrorStatus encodes the error a plugin method returned. A
// *HostError (a harness passing on its host's failure) keeps its encoding.
func pluginErrorStatus(err error) error {
	var he *HostError
	if errors.As(err, &he) {
		return hostErrorStatus(he)
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return status.FromContextError(err).Err()
	}
	st := status.New(codes.Unknown, err.Error())
	if withD, werr := st.WithDetails(NewFailure(failure.Plugin, failure.OwnError, "")); werr == nil {
		st = withD
	}
	return st.Err()
}

// weftDetail returns the Failure detail of st, if any.
func weftDetail(st *status.Status) *Failure {
	for _, d := range st.Details() {
		if f, ok := d.(*Failure); ok {
			return f
		}
	}
	return nil
}

// isPluginError reports whether f is the detail of a plugin's own error.
func isPluginError(f *Failure) bool {
	c, k := FailureParts(f)
	return c == failure.Plugin && k == failure.OwnError
}

// hostCallError is the error a plugin sees from a host-service call that
// failed. When the caller's context ended, it is the context's error
// (errors.Is(err, context.DeadlineExceeded) or context.Canceled), even if
// the host reported the deadline first: gRPC sends the deadline along with
// the call and the host's timer may fire a moment before the plugin's, so a
// "deadline"/"canceled" reply with the caller's own deadline due within a
// second waits for that deadline before deciding. Otherwise it is
// decodeHostError's *HostError.
func hostCallError(ctx context.Context, service failure.Component, err error) error {
	herr := decodeHostError(service, err)
	if ctx.Err() == nil {
		he, _ := herr.(*HostError)
		if dl, ok := ctx.Deadline(); ok && he != nil && (he.Kind == failure.Deadline || he.Kind == failure.Canceled) && time.Until(dl) < time.Second {
			t := time.NewTimer(time.Until(dl) + 100*time.Millisecond)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("host %s service: %w", service, cerr)
	}
	return herr
}

// decodeHostError turns the error of a host-service call made by a plugin
// into a *HostError. Errors without the encoding (transport failures) get
// a Kind from their gRPC code: "deadline", "canceled", "unavailable" or
// "internal".
func decodeHostError(service failure.Component, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &HostError{Service: service, Kind: failure.Internal, Message: err.Error()}
	}
	if f := weftDetail(st); f != nil && !isPluginError(f) {
		c, k := FailureParts(f)
		return &HostError{Service: c, Kind: k, Message: st.Message()}
	}
	kind := failure.Internal
	switch st.Code() {
	case codes.DeadlineExceeded:
		kind = failure.Deadline
	case codes.Canceled:
		kind = failure.Canceled
	case codes.Unavailable:
		kind = failure.Unavailable
	case codes.Unauthenticated:
		kind = failure.Unauthenticated
	}
	return &HostError{Service: service, Kind: kind, Message: st.Message()}
}
