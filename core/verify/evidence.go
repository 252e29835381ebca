package verify

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/state"
)

// NewStateEvidence returns the in-process Evidence over core/state
// versions, keyed by name (Initial, Final, Reference, ReferenceAfter(k),
// or any other name the caller uses). Hash is Version.Hash in lower-case
// hex; Diff is state.Diff; Query runs on a private Workspace forked from
// the version, so a statement that writes changes nothing (the version is
// immutable) and its values come back as state.PlainValue gives them.
// Safe for concurrent use; versions is not modified and must not be after
// the call. A name not in versions is an error wrapping ErrNoVersion.
func NewStateEvidence(versions map[string]*state.Version) Evidence {
	return stateEvidence(versions)
}

type stateEvidence map[string]*state.Version

func (e stateEvidence) version(name string) (*state.Version, error) {
	v, ok := e[name]
	if !ok || v == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoVersion, name)
	}
	return v, nil
}

func (e stateEvidence) Hash(_ context.Context, version string) (string, error) {
	v, err := e.version(version)
	if err != nil {
		return "", err
	}
	return v.Hash().String(), nil
}

func (e stateEvidence) Diff(_ context.Context, from, to string) (*state.Changes, error) {
	a, err := e.version(from)
	if err != nil {
		return nil, err
	}
	b, err := e.version(to)
	if err != nil {
		return nil, err
	}
	return state.Diff(a, b), nil
}

func (e stateEvidence) Query(ctx context.Context, version, sql string) ([]string, [][]any, error) {
	v, err := e.version(version)
	if err != nil {
		return nil, nil, err
	}
	ws := v.Store().Fork(v)
	rows, err := ws.Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	out := make([][]any, len(rows.Values))
	for i, r := range rows.Values {
		out[i] = make([]any, len(r))
		for j, x := range r {
			out[i][j] = state.PlainValue(x)
		}
	}
	return rows.Columns, out, nil
}

// FileEvidence is optionally implemented by an Evidence that can read the
// workspace files of its versions (NewStateEvidence's does): ReadFile
// returns file path's content in version, found false when no file is
// there (absent, or a directory), and err for a missing version
// (ErrNoVersion) or another failure. The file checks (file_equal,
// file_contains, file_absent) need it; over an Evidence without it they
// fail with ErrEvidence.
type FileEvidence interface {
	ReadFile(ctx context.Context, version, path string) (data []byte, found bool, err error)
	// Exists reports whether any entry (file or directory) is at path.
	Exists(ctx context.Context, version, path string) (bool, error)
}

func (e stateEvidence) ReadFile(_ context.Context, version, path string) ([]byte, bool, error) {
	v, err := e.version(version)
	if err != nil {
		return nil, false, err
	}
	d, err := v.ReadFile(path)
	switch {
	case errors.Is(err, state.ErrNoSuchFile), errors.Is(err, state.ErrIsDir), errors.Is(err, state.ErrNotDir):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return d, true, nil
}

func (e stateEvidence) Exists(_ context.Context, version, path string) (bool, error) {
	v, err := e.version(version)
	if err != nil {
		return false, err
	}
	_, err = v.Stat(path)
	switch {
	case errors.Is(err, state.ErrNoSuchFile):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}
