package attribute

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// Class is the component a failed checkpoint is attributed to.
type Class string

// Classes.
const (
	// ClassPolicy: the agent's own doing (wrong arguments, a skipped or
	// extra action, a hallucinated tool, stopping early): the only class
	// that is a learning signal for the policy.
	ClassPolicy Class = "policy"
	// ClassEnvironment: a tool module failed on a call the checkpoint
	// needed (trap, deadline, memory limit, malformed output, internal).
	ClassEnvironment Class = "environment"
	// ClassTask: the task's reference solution does not run from the
	// initial state.
	ClassTask Class = "task"
	// ClassVerifier: a check reports missing what the evidence shows.
	ClassVerifier Class = "verifier"
)

// Attribution is the verdict on one failed checkpoint.
type Attribution struct {
	// Checkpoint is the failed checkpoint's name (an atomic task id or
	// verify.Overall).
	Checkpoint string `json:"checkpoint"`
	Class      Class  `json:"class"`
	// Evidence says in plain words what the verdict rests on, citing
	// ledger indexes ("ledger call #3"), reference calls and rows
	// ("orders[#W1].status=cancelled").
	Evidence string `json:"evidence"`
	// Revise names the component to revise:
	//   environment: "module:<name>/tool:<tool>"
	//   task:        "task:<id>/atomic:<id>"
	//   verifier:    "verifier:<checkpoint>/<check kind>"
	//   policy:      "policy"
	Revise string `json:"revise"`
}

// ReferenceCall is one call of the reference replay the host ran from the
// episode's initial state.
type ReferenceCall struct {
	// Atomic is the atomic task the call belongs to.
	Atomic string `json:"atomic"`
	// Index is the call's 0-based position in that atomic task's
	// Reference list.
	Index int    `json:"index"`
	Tool  string `json:"tool"`
	// IsError: the tool answered with an error result.
	IsError bool `json:"is_error,omitempty"`
	// ErrorKind is the failure kind when the call failed in the module
	// or before it (as verify.LedgerCall.ErrorKind; "" = none).
	ErrorKind failure.Kind `json:"error_kind,omitempty"`
	Output    string       `json:"output,omitempty"`
	// RowsChanged is the number of rows the call changed (0 = a read, or
	// not reported). Calls with RowsChanged > 0 are the atomic task's
	// state-changing calls; when a report has none for an atomic task,
	// its last reference call is taken to be its action.
	RowsChanged int `json:"rows_changed,omitempty"`
}

// ReferenceReport describes the reference replay from the initial state:
// its calls in replay order.
type ReferenceReport struct {
	Calls []ReferenceCall `json:"calls"`
}

// Input is one verified episode.
type Input struct {
	// Task and Result are required; Result.Checkpoints name Task's atomic
	// tasks or verify.Overall.
	Task   *task.Task
	Result *verify.Result
	// Ledger is the episode's session ledger, in call order.
	Ledger    []verify.LedgerCall
	Reference ReferenceReport
	// Evidence gives the states (may be nil: the rules that need states
	// then do not match). Errors wrapping verify.ErrNoVersion or
	// errors.ErrUnsupported mean "not available"; any other error of it
	// fails Attribute.
	Evidence verify.Evidence
	// Messages are the agent's messages to the user, in order.
	Messages []string
	// Modules maps a tool name to the module serving it, for Revise
	// (optional; without it a task with one module names that module,
	// otherwise "unknown").
	Modules map[string]string
}

// ErrInput: the input is incomplete or inconsistent (no task or result, a
// checkpoint naming no atomic task).
var ErrInput = errors.New("attribute: bad input")

// Attribute returns one Attribution per failed checkpoint of in.Result
// (score below 1, i.e. r_k = 0), in checkpoint order, from the first rule
// of the rules (see the package doc) that matches. Errors: ErrInput (wrapped) for a bad input, the
// context's error, or an error of in.Evidence other than "not available".
func Attribute(ctx context.Context, in Input) ([]Attribution, error) {
	if in.Task == nil || in.Result == nil {
		return nil, fmt.Errorf("%w: task and result are required", ErrInput)
	}
	ep := &episode{in: in, diffs: map[[2]string]diffResult{}}
	out := []Attribution{}
	for i := range in.Result.Checkpoints {
		cp := &in.Result.Checkpoints[i]
		if cp.Score >= 1 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tg, err := ep.target(cp)
		if err != nil {
			return nil, err
		}
		a, err := attributeOne(ctx, ep, tg)
		if err != nil {
			return nil, fmt.Errorf("attribute: checkpoint %s: %w", cp.Name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func attributeOne(ctx context.Context, ep *episode, tg *target) (Attribution, error) {
	for _, r := range rules {
		f, ok, err := r.Match(ctx, ep, tg)
		if err != nil {
			return Attribution{}, fmt.Errorf("rule %s: %w", r.Name, err)
		}
		if ok {
			return Attribution{Checkpoint: tg.cp.Name, Class: r.Class, Evidence: f.Evidence, Revise: f.Revise}, nil
		}
	}
	return Attribution{Checkpoint: tg.cp.Name, Class: ClassPolicy, Evidence: policyEvidence(tg), Revise: "policy"}, nil
}

// episode holds the input and caches diffs across checkpoints.
type episode struct {
	in    Input
	diffs map[[2]string]diffResult
}

type diffResult struct {
	c   *state.Changes
	err error
}

// diff returns the evidence's changes from -> to; nil, nil when the
// evidence is absent or does not have them.
func (ep *episode) diff(ctx context.Context, from, to string) (*state.Changes, error) {
	if ep.in.Evidence == nil {
		return nil, nil
	}
	k := [2]string{from, to}
	if d, ok := ep.diffs[k]; ok {
		return d.c, d.err
	}
	c, err := ep.in.Evidence.Diff(ctx, from, to)
	if err != nil {
		c = nil
		if errors.Is(err, verify.ErrNoVersion) || errors.Is(err, errors.ErrUnsupported) {
			err = nil
		} else {
			err = fmt.Errorf("evidence diff %s -> %s: %w", from, to, err)
		}
	}
	ep.diffs[k] = diffResult{c, err}
	return c, err
}

// module names the module serving tool.
func (ep *episode) module(tool string) string {
	if m, ok := ep.in.Modules[tool]; ok && m != "" {
		return m
	}
	if len(ep.in.Task.Modules) == 1 {
		return ep.in.Task.Modules[0]
	}
	return "unknown"
}

// target is a failed checkpoint with what it checks: its atomic task (nil
// for Overall, with k = 0) and its check definitions.
type target struct {
	cp     *verify.Checkpoint
	atomic *task.Atomic
	k      int // 1-based position of atomic in the task
	checks []task.Check
}

func (ep *episode) target(cp *verify.Checkpoint) (*target, error) {
	if cp.Name == verify.Overall {
		return &target{cp: cp, checks: ep.in.Task.Checks}, nil
	}
	for i := range ep.in.Task.Atomic {
		a := &ep.in.Task.Atomic[i]
		if a.ID == cp.Name {
			return &target{cp: cp, atomic: a, k: i + 1, checks: a.Checks}, nil
		}
	}
	return nil, fmt.Errorf("%w: checkpoint %q names no atomic task of task %s", ErrInput, cp.Name, ep.in.Task.ID)
}

// atomics returns the atomic tasks the target covers: its own, or all for
// Overall.
func (ep *episode) atomics(tg *target) []*task.Atomic {
	if tg.atomic != nil {
		return []*task.Atomic{tg.atomic}
	}
	out := make([]*task.Atomic, len(ep.in.Task.Atomic))
	for i := range ep.in.Task.Atomic {
		out[i] = &ep.in.Task.Atomic[i]
	}
	return out
}

// checkFor returns the definition of the i-th check result: the check at
// the same position when its kind agrees, else the first check of that
// kind not yet used; nil when none.
func checkFor(tg *target, i int, kind string, used map[int]bool) *task.Check {
	if i < len(tg.checks) && tg.checks[i].Kind == kind && !used[i] {
		used[i] = true
		return &tg.checks[i]
	}
	for j := range tg.checks {
		if tg.checks[j].Kind == kind && !used[j] {
			used[j] = true
			return &tg.checks[j]
		}
	}
	return nil
}

func policyEvidence(tg *target) string {
	var parts []string
	for _, r := range tg.cp.Checks {
		if r.Passed {
			continue
		}
		s := r.Kind + " check failed"
		if len(r.Missing) > 0 {
			s += ", missing " + strings.Join(r.Missing, ", ")
		} else if r.Evidence != "" {
			s += ": " + r.Evidence
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "checkpoint " + tg.cp.Name + " failed; no module failure, reference failure or verifier contradiction found"
	}
	return "checkpoint " + tg.cp.Name + ": " + strings.Join(parts, "; ") +
		"; no module failure on a needed tool, the reference replay ran cleanly and the evidence agrees with the checks"
}
