package megamcp

import (
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"testing"

	"github.com/weft-dev/weft/core/module"
)

// TestModuleLookupErrorKinds: an unknown module is 404 no_such_module; a
// registry that cannot be read (EMFILE, EIO, ...) is a 500, not a 404.
func TestModuleLookupErrorKinds(t *testing.T) {
	missing := moduleLookupError(nil, "nope:1", fmt.Errorf("%w: nope:1", module.ErrNotFound))
	if !errors.Is(missing, ErrNoSuchModule) || httpStatus(missing) != http.StatusNotFound || errorKind(missing) != "no_such_module" {
		t.Errorf("missing module: %v -> %d %s", missing, httpStatus(missing), errorKind(missing))
	}
	io := moduleLookupError(nil, "hello", fmt.Errorf("module registry: reading hello: %w", syscall.EMFILE))
	if errors.Is(io, ErrNoSuchModule) || httpStatus(io) != http.StatusInternalServerError || errorKind(io) == "no_such_module" {
		t.Errorf("I/O failure: %v -> %d %s", io, httpStatus(io), errorKind(io))
	}
	if !errors.Is(io, syscall.EMFILE) {
		t.Errorf("I/O failure lost its cause: %v", io)
	}
}

// TestMissingMetaError: the message of a session directory without
// meta.json names the ledger's read error only when there is one (it
// printed "(<nil>)" for a ledger that read cleanly).
func TestMissingMetaError(t *testing.T) {
	for _, tc := range []struct {
		n    int
		rerr error
		want string
	}{
		{5, nil, "ledger corrupt: meta.json is missing but the ledger holds 5 record(s): kept for an operator"},
		{2, errors.New("frame 2: bad checksum"), "ledger corrupt: meta.json is missing but the ledger holds 2 record(s) and is unreadable after them (frame 2: bad checksum): kept for an operator"},
	} {
		err := missingMetaError(tc.n, tc.rerr)
		if !errors.Is(err, ErrCorruptLedger) || err.Error() != tc.want {
			t.Errorf("missingMetaError(%d, %v) = %q, want %q", tc.n, tc.rerr, err, tc.want)
		}
	}
}
