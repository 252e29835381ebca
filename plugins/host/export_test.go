package host

import (
	"context"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/plugin"
)

// VerifyEpisode exposes verifyEpisode to the benchmarks.
func VerifyEpisode(ctx context.Context, vf plugin.Verifier, ev verify.Evidence, id string, t *task.Task, ledger []verify.LedgerCall, tr *plugin.Trajectory) (*verify.Result, error) {
	return verifyEpisode(ctx, vf, ev, id, t, ledger, tr)
}

// ReferenceVersions returns the reference replay's states of t.
func (e *Executor) ReferenceVersions(ctx context.Context, t *task.Task) (map[string]*state.Version, error) {
	r, err := e.reference(ctx, t)
	if err != nil {
		return nil, err
	}
	return r.versions, nil
}

// Ledger exposes the verifier's view of a session's ledger.
func (e *Executor) Ledger(id string) ([]verify.LedgerCall, error) { return e.ledger(id) }
