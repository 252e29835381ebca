// Package exec is the built-in verifier plugin "exec": it scores an
// episode with the task's executable checks (core/verify.Verify) over the
// host's State service, and holds the host's helpers to build its request
// (Request) and read its answer (Decode).
package exec

import (
	"context"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/internal/wire"
	"github.com/weft-dev/weft/plugins/verifier"
	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name is the plugin's name (DescribeResponse.Name).
const Name = "exec"

// Version is the plugin's version (DescribeResponse.Version).
const Version = "1"

// Failures the plugin reports in VerifyResponse.Failure (never a score):
// the host's State service failed or lacked a version (component state,
// the service's kind: an infrastructure failure the host may retry), or
// the task or ledger cannot be verified as written (component verifier,
// kind bad_request: verify.ErrBadTask).
const (
	FailureEvidence   = failure.State
	FailureBadRequest = failure.BadRequest
)

// Verifier is the "exec" verifier; the zero value is ready. It implements
// plugin.Verifier and is safe for concurrent use.
type Verifier struct{}

var _ plugin.Verifier = Verifier{}

// Describe names the plugin.
func (Verifier) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version = Name, Version
	return nil
}

// Verify converts req.Task, req.Ledger and req.Trajectory.Messages
// (plugins/internal/wire), runs verify.Verify with host.State() as the
// evidence (no rubric judge) and fills resp.Checkpoints (K =
// len(task.Atomic)+1: name, r_k and the checks' results) and resp.Score =
// R. A task that does not convert or cannot be verified sets
// resp.Failure{verifier, bad_request}; an evidence error sets
// resp.Failure{state, <its kind>}; either way no checkpoint or score is set
// and the method returns nil.
func (Verifier) Verify(ctx context.Context, host plugin.Host, req *plugin.VerifyRequest, resp *plugin.VerifyResponse) error {
	fail := func(c failure.Component, k failure.Kind, err error) error {
		resp.Checkpoints, resp.Score = nil, 0
		resp.Failure = plugin.NewFailure(c, k, err.Error())
		return nil
	}
	tk, err := wire.FromTask(req.GetTask())
	if err != nil || tk == nil {
		if err == nil {
			err = errors.New("no task")
		}
		return fail(failure.Verifier, FailureBadRequest, fmt.Errorf("task: %w", err))
	}
	ledger := make([]verify.LedgerCall, len(req.GetLedger()))
	for i, c := range req.GetLedger() {
		ledger[i] = wire.FromVerifyLedgerCall(c)
	}
	res, err := verify.Verify(ctx, verify.Input{Task: tk, Ledger: ledger, Messages: Messages(req.GetTrajectory())}, verifier.RemoteEvidence(host.State()))
	if err != nil {
		if errors.Is(err, verify.ErrBadTask) {
			return fail(failure.Verifier, FailureBadRequest, err)
		}
		k := failure.Of(err)
		if errors.Is(err, verify.ErrNoVersion) {
			k = failure.NoSuchVersion
		}
		return fail(FailureEvidence, k, err)
	}
	for _, cp := range res.Checkpoints {
		pc, err := wire.Checkpoint(cp)
		if err != nil {
			return fmt.Errorf("encode checkpoint %s: %w", cp.Name, err)
		}
		resp.Checkpoints = append(resp.Checkpoints, pc)
	}
	resp.Score = res.Score
	return nil
}

// Messages converts the canonical messages of a trajectory to
// core/model messages (nil trajectory: none).
func Messages(tr *plugin.Trajectory) []verify.Message {
	var out []verify.Message
	for _, m := range tr.GetMessages() {
		mm := model.Message{Role: m.GetRole(), Content: m.GetContent(), ToolCallID: m.GetToolCallId(), Name: m.GetName(), Reasoning: m.GetReasoningContent()}
		for _, tc := range m.GetToolCalls() {
			mm.ToolCalls = append(mm.ToolCalls, model.ToolCall{ID: tc.GetId(), Type: "function", Function: model.FunctionCall{Name: tc.GetName(), Arguments: tc.GetArguments()}})
		}
		out = append(out, mm)
	}
	return out
}

// Request builds the VerifyRequest the host sends a verifier plugin: the
// task, the ledger and the trajectory (shared, not copied) as v2 messages,
// and diff, the changes initial -> final (nil = not sent). EpisodeId and
// Host are left for the SDK client to fill.
func Request(t *task.Task, ledger []verify.LedgerCall, tr *plugin.Trajectory, diff *state.Changes) (*plugin.VerifyRequest, error) {
	if t == nil {
		return nil, errors.New("exec.Request: nil task")
	}
	pt, err := wire.Task(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	pd, err := wire.Changes(diff)
	if err != nil {
		return nil, fmt.Errorf("encode diff of task %s: %w", t.ID, err)
	}
	req := &plugin.VerifyRequest{Task: pt, Trajectory: tr, Diff: pd}
	for _, lc := range ledger {
		req.Ledger = append(req.Ledger, wire.VerifyLedgerCall(lc))
	}
	return req, nil
}

// FailureError is the error Decode returns for a response carrying a
// Failure: the plugin could not score the episode.
type FailureError struct {
	Component failure.Component
	Kind      failure.Kind
	Message   string
}

func (e *FailureError) Error() string {
	return "verifier failure (" + failure.Code("", e.Component, e.Kind) + "): " + e.Message
}

// FailureKind returns e.Kind.
func (e *FailureError) FailureKind() failure.Kind { return e.Kind }

// Decode reads a VerifyResponse back into a verify.Result (checkpoints with
// their CheckResults, Score = resp.Score; no rubric). Errors: a
// *FailureError when resp.Failure is set.
func Decode(resp *plugin.VerifyResponse) (*verify.Result, error) {
	if f := resp.GetFailure(); f != nil {
		c, k := plugin.FailureParts(f)
		return nil, &FailureError{Component: c, Kind: k, Message: f.GetMessage()}
	}
	res := &verify.Result{Score: resp.GetScore()}
	for _, cp := range resp.GetCheckpoints() {
		res.Checkpoints = append(res.Checkpoints, wire.FromCheckpoint(cp))
	}
	return res, nil
}
