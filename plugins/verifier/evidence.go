package verifier

import (
	"github.com/weft-dev/weft/plugins/internal/wire"
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/plugin"
)

// NoVersion is the HostError kind of a State call naming a version the
// host does not have (verify.ErrNoVersion on either side).
const NoVersion = failure.NoSuchVersion

// RemoteEvidence returns the Evidence a verifier plugin reads through the
// host's State service s (plugin.Host.State()). Values decoded from JSON
// keep numbers as json.Number, so integers beyond 2^53 stay exact. Errors:
// a *plugin.HostError from s, wrapped with verify.ErrNoVersion when its
// Kind is NoVersion; a malformed JSON answer is an error too.
func RemoteEvidence(s plugin.State) verify.Evidence { return remoteEvidence{s} }

type remoteEvidence struct{ s plugin.State }

func remoteErr(err error) error {
	var he *plugin.HostError
	if errors.As(err, &he) && he.Kind == NoVersion {
		return fmt.Errorf("%w: %w", verify.ErrNoVersion, err)
	}
	return err
}

func (r remoteEvidence) Hash(ctx context.Context, version string) (string, error) {
	var resp plugin.HashResponse
	if err := r.s.Hash(ctx, &plugin.HashRequest{Version: version}, &resp); err != nil {
		return "", remoteErr(err)
	}
	return resp.GetHash(), nil
}

func (r remoteEvidence) Diff(ctx context.Context, from, to string) (*state.Changes, error) {
	var resp plugin.DiffResponse
	if err := r.s.Diff(ctx, &plugin.DiffRequest{From: from, To: to}, &resp); err != nil {
		return nil, remoteErr(err)
	}
	c := wire.FromChanges(resp.GetChanges())
	if c == nil {
		c = &state.Changes{Tables: []state.TableDiff{}}
	}
	return c, nil
}

func (r remoteEvidence) Query(ctx context.Context, version, sql string) ([]string, [][]any, error) {
	var resp plugin.QueryResponse
	if err := r.s.Query(ctx, &plugin.QueryRequest{Version: version, Sql: sql}, &resp); err != nil {
		return nil, nil, remoteErr(err)
	}
	rows := make([][]any, len(resp.GetRows()))
	for i, r := range resp.GetRows() {
		rows[i] = plugin.GoList(r)
	}
	return resp.GetColumns(), rows, nil
}

// ReadFile implements verify.FileEvidence over the State service's
// ReadFile.
func (r remoteEvidence) ReadFile(ctx context.Context, version, path string) ([]byte, bool, error) {
	var resp plugin.ReadFileResponse
	if err := r.s.ReadFile(ctx, &plugin.ReadFileRequest{Version: version, Path: path}, &resp); err != nil {
		return nil, false, remoteErr(err)
	}
	if !resp.GetFound() {
		return nil, false, nil
	}
	return resp.GetData(), true, nil
}

// Exists implements verify.FileEvidence over the State service's ReadFile.
func (r remoteEvidence) Exists(ctx context.Context, version, path string) (bool, error) {
	var resp plugin.ReadFileResponse
	if err := r.s.ReadFile(ctx, &plugin.ReadFileRequest{Version: version, Path: path}, &resp); err != nil {
		return false, remoteErr(err)
	}
	return resp.GetExists(), nil
}

// EvidenceState returns the host-side State service over ev (typically
// verify.NewStateEvidence of the episode's versions), to offer a verifier
// or attributor plugin as HostSet.StateService. Rows and changes cross as
// typed values (plugins/internal/wire); an ev error wrapping verify.ErrNoVersion becomes a
// *plugin.HostError of Kind NoVersion, any other error a HostError
// "internal" on the wire.
func EvidenceState(ev verify.Evidence) plugin.State { return evidenceState{ev} }

type evidenceState struct{ ev verify.Evidence }

func stateErr(err error) error {
	if errors.Is(err, verify.ErrNoVersion) {
		return &plugin.HostError{Service: failure.State, Kind: NoVersion, Message: err.Error()}
	}
	return err
}

func (e evidenceState) Query(ctx context.Context, req *plugin.QueryRequest, resp *plugin.QueryResponse) error {
	cols, rows, err := e.ev.Query(ctx, req.GetVersion(), req.GetSql())
	if err != nil {
		return stateErr(err)
	}
	resp.Columns = cols
	for i, r := range rows {
		l, err := plugin.ListOf(r)
		if err != nil {
			return fmt.Errorf("encode row %d: %w", i, err)
		}
		resp.Rows = append(resp.Rows, l)
	}
	return nil
}

func (e evidenceState) Hash(ctx context.Context, req *plugin.HashRequest, resp *plugin.HashResponse) error {
	h, err := e.ev.Hash(ctx, req.GetVersion())
	if err != nil {
		return stateErr(err)
	}
	resp.Hash = h
	return nil
}

func (e evidenceState) Diff(ctx context.Context, req *plugin.DiffRequest, resp *plugin.DiffResponse) error {
	c, err := e.ev.Diff(ctx, req.GetFrom(), req.GetTo())
	if err != nil {
		return stateErr(err)
	}
	pc, err := wire.Changes(c)
	if err != nil {
		return fmt.Errorf("encode changes: %w", err)
	}
	resp.Changes = pc
	return nil
}

// ReadFile reads req.Path of req.Version when ev is a verify.FileEvidence
// (verify.NewStateEvidence is); otherwise it is a HostError "unavailable".
func (e evidenceState) ReadFile(ctx context.Context, req *plugin.ReadFileRequest, resp *plugin.ReadFileResponse) error {
	fe, ok := e.ev.(verify.FileEvidence)
	if !ok {
		return &plugin.HostError{Service: failure.State, Kind: failure.Unavailable, Message: "this host's evidence has no workspace files"}
	}
	data, found, err := fe.ReadFile(ctx, req.GetVersion(), req.GetPath())
	if err != nil {
		return stateErr(err)
	}
	resp.Found, resp.Data = found, data
	if found {
		resp.Exists = true
		return nil
	}
	if resp.Exists, err = fe.Exists(ctx, req.GetVersion(), req.GetPath()); err != nil {
		return stateErr(err)
	}
	return nil
}
