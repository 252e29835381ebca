package verify

import (
	"context"
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
