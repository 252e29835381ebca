package megamcp

import (
	"fmt"

	"github.com/weft-dev/weft/sdk/failure"
)

// Errors returned by Server methods; test with errors.Is. Each carries its
// sdk/failure Kind, whose string is the error code. The admin API maps
// each to an HTTP status and a stable error code (docs/api.md).
var (
	// ErrNoSuchSession: the session id is unknown (never created, deleted,
	// or mistyped). Code "no_such_session", HTTP 404.
	ErrNoSuchSession = failure.NewKindError(failure.NoSuchSession, "no such session")
	// ErrStaleGeneration: the request carried a generation older (or newer)
	// than the session's current one; the session was restored since the
	// caller last looked. Nothing was changed. Code "stale_generation", HTTP
	// 409. The concrete error is a *FencedError.
	ErrStaleGeneration = failure.NewKindError(failure.StaleGeneration, "stale generation")
	// ErrNoSuchVersion: the version id is unknown. Code "no_such_version",
	// HTTP 404.
	ErrNoSuchVersion = failure.NewKindError(failure.NoSuchVersion, "no such version")
	// ErrNoSuchModule: a module reference does not resolve in the registry.
	// Code "no_such_module", HTTP 404.
	ErrNoSuchModule = failure.NewKindError(failure.NoSuchModule, "no such module")
	// ErrBadRequest: a malformed request (bad JSON, missing field, two
	// modules owning one table, ...). Code "bad_request", HTTP 400.
	ErrBadRequest = failure.NewKindError(failure.BadRequest, "bad request")
	// ErrLedger: the ledger could not be written; the call was undone and
	// not acknowledged. Code "ledger", HTTP 503.
	ErrLedger = failure.NewKindError(failure.Ledger, "ledger write failed")
	// ErrClosed: the server is shutting down. Code "closed", HTTP 503.
	ErrClosed = failure.NewKindError(failure.Closed, "server closed")
)

// FencedError is the error of a call or admin request carrying a stale
// generation. It matches ErrStaleGeneration.
type FencedError struct {
	Session    string
	Generation uint64 // what the request carried
	Current    uint64 // the session's generation
}

func (e *FencedError) Error() string {
	return fmt.Sprintf("session %s: stale generation %d (current %d): the session was restored; re-read it and retry", e.Session, e.Generation, e.Current)
}

// Is reports whether target is ErrStaleGeneration.
func (e *FencedError) Is(target error) bool { return target == ErrStaleGeneration }

// FailureKind is failure.StaleGeneration.
func (e *FencedError) FailureKind() failure.Kind { return failure.StaleGeneration }
