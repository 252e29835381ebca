package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/sdk/failure"
)

// Wire encoding of errors (both directions of weft.plugin.v1).
//
// A *HostError crosses the wire as a gRPC status whose code is Aborted
// (Unavailable when Kind is "unavailable", DeadlineExceeded when Kind is
// "deadline"), whose message is HostError.Message, and whose details hold
// one google.protobuf.Struct:
//
//	{"weft_error": "host_error", "service": "<service>", "kind": "<kind>"}
//
// Any other error a plugin method returns crosses as status code Unknown
// with the error text as message and the detail {"weft_error":
// "plugin_error"}. Statuses without a weft_error detail come from the gRPC
// transport (or from a peer that is not this SDK).
const (
	detailKey        = "weft_error"
	detailHostError  = "host_error"
	detailPluginErr  = "plugin_error"
	detailServiceKey = "service"
	detailKindKey    = "kind"
)

// hostErrorStatus encodes he as a gRPC status error.
func hostErrorStatus(he *HostError) error {
	code := codes.Aborted
	switch he.Kind {
	case failure.Unavailable:
		code = codes.Unavailable
	case failure.Deadline:
		code = codes.DeadlineExceeded
	}
	st := status.New(code, he.Message)
	d, err := structpb.NewStruct(map[string]any{detailKey: detailHostError, detailServiceKey: string(he.Service), detailKindKey: string(he.Kind)})
	if err != nil {
		return st.Err()
	}
	if withD, err := st.WithDetails(d); err == nil {
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
	d, derr := structpb.NewStruct(map[string]any{detailKey: detailPluginErr})
	if derr == nil {
		if withD, werr := st.WithDetails(d); werr == nil {
			st = withD
		}
	}
	return st.Err()
}

// weftDetail returns the weft_error detail of st and its fields.
func weftDetail(st *status.Status) (kind string, fields map[string]*structpb.Value) {
	for _, d := range st.Details() {
		s, ok := d.(*structpb.Struct)
		if !ok {
			continue
		}
		if v, ok := s.GetFields()[detailKey]; ok {
			return v.GetStringValue(), s.GetFields()
		}
	}
	return "", nil
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
	if k, f := weftDetail(st); k == detailHostError {
		return &HostError{Service: failure.Component(f[detailServiceKey].GetStringValue()), Kind: failure.Kind(f[detailKindKey].GetStringValue()), Message: st.Message()}
	}
	kind := failure.Internal
	switch st.Code() {
	case codes.DeadlineExceeded:
		kind = failure.Deadline
	case codes.Canceled:
		kind = failure.Canceled
	case codes.Unavailable:
		kind = failure.Unavailable
	}
	return &HostError{Service: service, Kind: kind, Message: st.Message()}
}
