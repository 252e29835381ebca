package verify

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/weft-dev/weft/core/state"
)

// ErrNoVersion: the evidence has no state of that name.
var ErrNoVersion = errors.New("no such version in the evidence")

// Version names an Evidence understands.
const (
	Initial   = "initial"   // the state the episode started from
	Final     = "final"     // the state the episode ended in
	Reference = "reference" // the reference solution replayed from Initial, to its end
)

// ReferenceAfter names the reference replay's state after atomic task k's
// reference calls (k is 1-based; ReferenceAfter(0) is the initial state).
func ReferenceAfter(k int) string { return "reference:" + strconv.Itoa(k) }

// Evidence is the privileged view of an episode a verifier (and an
// attributor) reads: states by name (Initial, Final, Reference,
// ReferenceAfter(k)), their hashes, diffs and SQL. It is implemented over
// core/state versions in process (host side) and over the plugin State
// service for a verifier plugin. Errors: a name the evidence does not have
// is an error wrapping ErrNoVersion.
type Evidence interface {
	Hash(ctx context.Context, version string) (string, error)
	Diff(ctx context.Context, from, to string) (*state.Changes, error)
	// Query runs a read-only SQL statement on version; rows are arrays of
	// JSON-compatible values in column order.
	Query(ctx context.Context, version, sql string) (columns []string, rows [][]any, err error)
}

// LedgerCall is one tool call record of the episode's session ledger.
type LedgerCall struct {
	Index     uint64          `json:"index"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// IsError: the tool answered with an error result the model could
	// read (bad arguments, unknown tool, a refused action).
	IsError bool `json:"is_error,omitempty"`
	// ErrorKind is the failure kind when the call failed in the module
	// ("trap", "deadline", "internal", ...; "" = none) or was refused
	// before the module ("invalid_arguments", "unknown_tool").
	ErrorKind failure.Kind `json:"error_kind,omitempty"`
	// Output is the text content of the result.
	Output      string `json:"output,omitempty"`
	RowsChanged int    `json:"rows_changed,omitempty"`
}

// Checkpoint is one of the K checkpoints of an episode: one per atomic
// task, then the overall goal. Score r_k is 1 when every check passed, else
// 0.
type Checkpoint struct {
	// Name is the atomic task's id, or "overall".
	Name   string        `json:"name"`
	Score  float64       `json:"score"`
	Checks []CheckResult `json:"checks"`
}

// Overall is the name of the last checkpoint.
const Overall = "overall"

// CheckResult is the outcome of one check with its evidence in words.
type CheckResult struct {
	Kind     string `json:"kind"`
	Passed   bool   `json:"passed"`
	Evidence string `json:"evidence"`
	// Missing lists what the check looked for and did not find (rows as
	// "table[key].column=value", calls, strings), for attribution.
	Missing []string `json:"missing,omitempty"`
}

// RubricScore is a judge model's score of one rubric item in [0, 1].
type RubricScore struct {
	ID        string  `json:"id"`
	Score     float64 `json:"score"`
	Rationale string  `json:"rationale,omitempty"`
}

// Result is the verification of one episode.
type Result struct {
	// Checkpoints has K = len(task.Atomic) + 1 entries, atomic tasks in
	// task order, then Overall.
	Checkpoints []Checkpoint `json:"checkpoints"`
	// Score is R = mean of the checkpoints' r_k (WEFT).
	Score float64 `json:"score"`
	// Rubric holds the judge's scores when the task has rubric items and a
	// judge was configured; RubricScore is their weighted mean. Reported
	// beside Score, never part of it.
	Rubric      []RubricScore `json:"rubric,omitempty"`
	RubricScore *float64      `json:"rubric_score,omitempty"`
}
