// Package exec is the built-in verifier plugin "exec": it scores an
// episode with the task's executable checks (core/verify.Verify) over the
// host's State service, and holds the host's helpers to build its request
// (Request) and read its answer (Decode).
package exec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/verifier"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Name is the plugin's name (DescribeResponse.Name).
const Name = "exec"

// Version is the plugin's version (DescribeResponse.Version).
const Version = "1"

// Failure kinds the plugin reports in VerifyResponse.Failure (never a
// score).
const (
	// FailureEvidence: the host's State service failed or lacked a
	// version (an infrastructure failure; the host may retry).
	FailureEvidence = "verifier_evidence"
	// FailureBadRequest: the task or ledger does not decode, or the task
	// cannot be verified as written (verify.ErrBadTask).
	FailureBadRequest = "bad_request"
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

// Verify decodes req.Task (weft task JSON), req.Ledger (JSON lines of
// verify.LedgerCall) and req.Trajectory.Messages, runs verify.Verify with
// host.State() as the evidence (no rubric judge) and fills
// resp.Checkpoints (K = len(task.Atomic)+1: name, r_k, evidence = JSON of
// the checkpoint's []verify.CheckResult) and resp.Score = R. A decode
// error or an unverifiable task sets resp.Failure{Kind:
// FailureBadRequest}; an evidence error sets resp.Failure{Kind:
// FailureEvidence}; either way no checkpoint or score is set and the
// method returns nil.
func (Verifier) Verify(ctx context.Context, host plugin.Host, req *plugin.VerifyRequest, resp *plugin.VerifyResponse) error {
	fail := func(kind string, err error) error {
		resp.Checkpoints, resp.Score = nil, 0
		resp.Failure = &plugin.Failure{Kind: kind, Message: err.Error()}
		return nil
	}
	var tk task.Task
	if err := json.Unmarshal([]byte(req.GetTask()), &tk); err != nil {
		return fail(FailureBadRequest, fmt.Errorf("task: %w", err))
	}
	ledger, err := ParseLedger(req.GetLedger())
	if err != nil {
		return fail(FailureBadRequest, err)
	}
	in := verify.Input{Task: &tk, Ledger: ledger, Messages: Messages(req.GetTrajectory())}
	res, err := verify.Verify(ctx, in, verifier.RemoteEvidence(host.State()))
	if err != nil {
		if errors.Is(err, verify.ErrBadTask) {
			return fail(FailureBadRequest, err)
		}
		return fail(FailureEvidence, err)
	}
	for _, cp := range res.Checkpoints {
		ev, err := json.Marshal(cp.Checks)
		if err != nil {
			return fmt.Errorf("encode checkpoint %s: %w", cp.Name, err)
		}
		resp.Checkpoints = append(resp.Checkpoints, &plugin.Checkpoint{Name: cp.Name, Score: cp.Score, Evidence: string(ev)})
	}
	resp.Score = res.Score
	return nil
}

// ParseLedger reads JSON lines of verify.LedgerCall (blank lines skipped).
func ParseLedger(text string) ([]verify.LedgerCall, error) {
	var out []verify.LedgerCall
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var lc verify.LedgerCall
		if err := json.Unmarshal([]byte(line), &lc); err != nil {
			return nil, fmt.Errorf("ledger line %d: %w", n, err)
		}
		out = append(out, lc)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	return out, nil
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

// Request builds the VerifyRequest the host sends the plugin: the task as
// JSON, the ledger as JSON lines and the trajectory (shared, not copied).
// EpisodeId and HostBrokerId are left for the SDK client to fill; Diff is
// left empty (the plugin reads diffs through the State service).
func Request(t *task.Task, ledger []verify.LedgerCall, tr *plugin.Trajectory) (*plugin.VerifyRequest, error) {
	if t == nil {
		return nil, errors.New("exec.Request: nil task")
	}
	tb, err := json.Marshal(t)
	if err != nil {
		return nil, fmt.Errorf("encode task %s: %w", t.ID, err)
	}
	var lb strings.Builder
	for _, lc := range ledger {
		b, err := json.Marshal(lc)
		if err != nil {
			return nil, fmt.Errorf("encode ledger call %d: %w", lc.Index, err)
		}
		lb.Write(b)
		lb.WriteByte('\n')
	}
	return &plugin.VerifyRequest{Task: string(tb), Ledger: lb.String(), Trajectory: tr}, nil
}

// FailureError is the error Decode returns for a response carrying a
// Failure: the plugin could not score the episode (Kind FailureEvidence is
// an infrastructure failure, FailureBadRequest a bad task or request).
type FailureError struct {
	Kind, Message string
}

func (e *FailureError) Error() string {
	return "verifier failure (" + e.Kind + "): " + e.Message
}

// Decode reads a VerifyResponse back into a verify.Result (checkpoints with
// their CheckResults, Score = resp.Score; no rubric). Errors: a
// *FailureError when resp.Failure is set, or a checkpoint evidence that is
// not JSON of []verify.CheckResult.
func Decode(resp *plugin.VerifyResponse) (*verify.Result, error) {
	if f := resp.GetFailure(); f != nil {
		return nil, &FailureError{Kind: f.GetKind(), Message: f.GetMessage()}
	}
	res := &verify.Result{Score: resp.GetScore()}
	for _, cp := range resp.GetCheckpoints() {
		c := verify.Checkpoint{Name: cp.GetName(), Score: cp.GetScore()}
		if err := json.Unmarshal([]byte(cp.GetEvidence()), &c.Checks); err != nil {
			return nil, fmt.Errorf("checkpoint %s evidence: %w", cp.GetName(), err)
		}
		res.Checkpoints = append(res.Checkpoints, c)
	}
	return res, nil
}
