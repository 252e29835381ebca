package model

import (
	"errors"
	"fmt"
	"strings"

	wfailure "github.com/weft-dev/weft/sdk/failure"
)

// ErrorKind classifies a failed Generate call: a kind of weft's one
// failure vocabulary (sdk/failure), a stable snake_case name fit for logs
// and metric labels. Kind.Retryable reports whether the client retries a
// failure of the kind (unavailable, timeout, rate_limited, server).
type ErrorKind = wfailure.Kind

// Error kinds returned in (*Error).Kind.
const (
	// KindUnavailable: the endpoint could not be reached or dropped the
	// connection (connection refused, DNS failure, reset, EOF before a
	// response), after the retries.
	KindUnavailable = wfailure.Unavailable
	// KindTimeout: an attempt ran past ClientConfig.RequestTimeout (or the
	// transport timed out, or the endpoint answered 408), after the retries.
	KindTimeout = wfailure.Timeout
	// KindRateLimited: HTTP 429, after the retries.
	KindRateLimited = wfailure.RateLimited
	// KindServer: HTTP 5xx, after the retries.
	KindServer = wfailure.Server
	// KindBadRequest: HTTP 4xx other than 408 and 429 (prompt over the
	// context length, unknown model, malformed tool schema), never retried;
	// also a Request the client cannot encode (nil, unknown role, tool
	// parameters that are not JSON), with Attempts 0.
	KindBadRequest = wfailure.BadRequest
	// KindBadResponse: a 2xx answer the client cannot use: a body that is not
	// JSON, no choices, a tool call without a function name. Never retried.
	KindBadResponse = wfailure.BadResponse
	// KindCanceled: the caller's ctx ended (canceled or past its deadline)
	// before an answer arrived, including while waiting for a concurrency
	// slot or between retries. Err is ctx.Err(), so errors.Is(err,
	// context.Canceled) and errors.Is(err, context.DeadlineExceeded) work.
	KindCanceled = wfailure.Canceled
)

// Error is the error every Client.Generate failure returns.
type Error struct {
	Kind ErrorKind
	// Endpoint is the URL called (the chat-completions URL), or empty when
	// the request failed before any call.
	Endpoint string
	// StatusCode is the HTTP status of the last attempt; 0 when no response
	// arrived (connection error, timeout, cancellation).
	StatusCode int
	// Attempts is how many HTTP attempts were made (0 when the request was
	// refused before sending or ctx ended before the first attempt).
	Attempts int
	// Message is the endpoint's error message when it sent one, otherwise
	// a short description of the failure.
	Message string
	// Err is the underlying error (transport error, ctx.Err(), JSON error),
	// if any; Unwrap returns it.
	Err error
}

// Error reads like
//
//	model: http://127.0.0.1:8000/v1/chat/completions: rate_limited (HTTP 429) after 3 attempts: slow down
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("model: ")
	if e.Endpoint != "" {
		b.WriteString(e.Endpoint)
		b.WriteString(": ")
	}
	b.WriteString(string(e.Kind))
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, " (HTTP %d)", e.StatusCode)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, &Error{Kind: k}) true for any *Error of kind k;
// the other fields of the target are ignored.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && t.Kind != "" && t.Kind == e.Kind
}

// KindOf returns the Kind of the first *Error in err's chain, or "" when
// there is none.
func KindOf(err error) ErrorKind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return ""
}

// IsInfra reports whether err is an infrastructure failure rather than a
// policy outcome: true for every *Error in err's chain, whatever its kind.
// A 400 counts too: the endpoint refusing the request (prompt over the
// context length, unknown model, bad tool schema) is a configuration or
// harness problem, not an answer the policy gave, so it must not be scored
// as the policy's turn. A policy that answers badly returns a Response and
// no error. IsInfra(nil) is false.
func IsInfra(err error) bool {
	var e *Error
	return errors.As(err, &e)
}

// FailureKind returns e.Kind (sdk/failure.Kinder): wfailure.Of classifies
// a model error by it.
func (e *Error) FailureKind() wfailure.Kind { return e.Kind }
