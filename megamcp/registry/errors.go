package registry

import (
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/module"
)

// Error codes of the API (the "code" of an error body).
const (
	CodeBadRequest       = "bad_request"
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeMethodNotAllowed = "method_not_allowed"
	CodeTooLarge         = "too_large"
	CodeDigestMismatch   = "digest_mismatch"
	CodeInvalidBundle    = "invalid_bundle"
	CodeNameMismatch     = "name_mismatch"
	CodeInternal         = "internal"
)

// ErrDigestMismatch: content does not have the digest it was announced
// with. The client returns it (as *DigestMismatchError) when a server's
// answer fails verification; a server's digest_mismatch *APIError matches it
// too.
var ErrDigestMismatch = errors.New("digest mismatch")

// DigestMismatchError is content whose sha256 is not the one expected.
type DigestMismatchError struct {
	Ref  string // what was pulled or pushed
	Want string // the digest announced (Weft-Digest, or the reference itself)
	Got  string // the digest of the bytes
}

func (e *DigestMismatchError) Error() string {
	return fmt.Sprintf("%s: %v: got content with digest %s, expected %s", e.Ref, ErrDigestMismatch, e.Got, e.Want)
}

func (e *DigestMismatchError) Is(target error) bool { return target == ErrDigestMismatch }

// APIError is an error answer of the registry server.
type APIError struct {
	Status  int    // HTTP status
	Code    string // one of the Code constants ("" when the body was not an API error)
	Message string
}

func (e *APIError) Error() string {
	code := e.Code
	if code == "" {
		code = "error"
	}
	return fmt.Sprintf("registry server: %s: %s (HTTP %d)", code, e.Message, e.Status)
}

// Is maps codes to the errors a local registry would return: not_found is
// module.ErrNotFound, invalid_bundle module.ErrInvalidBundle and
// digest_mismatch ErrDigestMismatch.
func (e *APIError) Is(target error) bool {
	switch e.Code {
	case CodeNotFound:
		return target == module.ErrNotFound
	case CodeInvalidBundle:
		return target == module.ErrInvalidBundle
	case CodeDigestMismatch:
		return target == ErrDigestMismatch
	}
	return false
}

// errorBody is the JSON of an error answer.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}
