package rollout

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/failure"
)

// Job is one episode to run: a task under a view (task.ViewAgentic,
// task.ViewSimUser), a harness and a policy, as rollout Sample of k.
type Job struct {
	Task    *task.Task
	View    string
	Harness string
	Policy  string
	// Sample is the rollout index in 0..k-1 for pass@k (k episodes of the
	// same task, view, harness and policy).
	Sample int
	// Seed is the episode's seed (sampling, simulated user); the scheduler
	// passes it through unchanged, so results do not depend on the order
	// jobs happen to run in.
	Seed uint64
}

// Key is the job's stable identity, "task/view/harness/policy/sample", e.g.
// "tau2-retail:12/agentic/react/qwen3-8b/0". Outcomes carry it and
// Options.Skip receives it, so a run can be resumed from the outcomes
// already written. A '%' or '/' inside a component is escaped as "%25" or
// "%2F", so distinct jobs never share a key. The task id is "" when Task is
// nil.
func (j Job) Key() string {
	id := ""
	if j.Task != nil {
		id = j.Task.ID
	}
	var b strings.Builder
	for _, s := range []string{id, j.View, j.Harness, j.Policy} {
		b.WriteString(keyEscaper.Replace(s))
		b.WriteByte('/')
	}
	b.WriteString(strconv.Itoa(j.Sample))
	return b.String()
}

var keyEscaper = strings.NewReplacer("%", "%25", "/", "%2F")

// Infrastructure failure kinds the scheduler itself produces (component
// failure.Scheduler). Executors report the failures they see with their
// component and kind (sdk/failure: plugin exited, model timeout, env trap).
const (
	// KindDeadline: the attempt ran past Options.EpisodeTimeout
	// (retryable).
	KindDeadline = failure.Deadline
	// KindInternal: the executor returned an error that is not an
	// *InfraError, or an unusable outcome (nil, no score, a score outside
	// [0, 1]); never retried.
	KindInternal = failure.Internal
)

// InfraError is an infrastructure failure of an episode: a plugin crash, an
// endpoint down, a module trap not of the task's doing, the episode
// deadline. It is not a policy outcome, so an episode that ends on one has
// no score (Outcome.Score is nil, never 0). Executors return it (or an
// error wrapping it); Retryable failures are retried up to
// Options.Retries times.
//
// Component says where the failure happened and Kind what went wrong
// (sdk/failure); Via names the plugin that reported a failure of its own
// host (a verifier whose State call failed: Via verifier, Component state).
// Code joins them into the one-word code reports and the JSON "kind" field
// show ("env_trap", "plugin_exited", "deadline").
type InfraError struct {
	Via       failure.Component
	Component failure.Component
	Kind      failure.Kind
	Message   string
	Retryable bool
}

// Code is failure.Code(e.Via, e.Component, e.Kind): "env_trap",
// "plugin_exited", "harness_deadline", "reference", "deadline", ...
func (e *InfraError) Code() string { return failure.Code(e.Via, e.Component, e.Kind) }

// infraJSON is the JSON of an InfraError: "kind" is the Code (as it
// always was); component, failure and via are the typed parts.
type infraJSON struct {
	Kind      string            `json:"kind"`
	Component failure.Component `json:"component,omitempty"`
	Failure   failure.Kind      `json:"failure,omitempty"`
	Via       failure.Component `json:"via,omitempty"`
	Message   string            `json:"message"`
	Retryable bool              `json:"retryable"`
}

// MarshalJSON writes {"kind": Code, "component", "failure", "via",
// "message", "retryable"}.
func (e InfraError) MarshalJSON() ([]byte, error) {
	return json.Marshal(infraJSON{Kind: e.Code(), Component: e.Component, Failure: e.Kind, Via: e.Via, Message: e.Message, Retryable: e.Retryable})
}

// UnmarshalJSON reads what MarshalJSON writes; a record with only "kind"
// (older outcomes) keeps it as Kind.
func (e *InfraError) UnmarshalJSON(b []byte) error {
	var j infraJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*e = InfraError{Via: j.Via, Component: j.Component, Kind: j.Failure, Message: j.Message, Retryable: j.Retryable}
	if j.Failure == "" && j.Component == "" && j.Via == "" {
		e.Kind = failure.Kind(j.Kind)
	}
	return nil
}

// Error reads like "infra deadline (retryable): episode ran past 2m0s".
func (e *InfraError) Error() string {
	var b strings.Builder
	b.WriteString("infra ")
	b.WriteString(e.Code())
	if e.Retryable {
		b.WriteString(" (retryable)")
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// IsInfra reports whether err is or wraps an *InfraError, and returns it.
func IsInfra(err error) (*InfraError, bool) {
	var ie *InfraError
	if errors.As(err, &ie) && ie != nil {
		return ie, true
	}
	return nil, false
}

// Outcome is the result of one job. The scheduler fills the identity
// fields (Key through Seed), Passed, Infra, InfraErrors, Attempts and
// DurationMs; the executor fills the rest.
type Outcome struct {
	Key     string `json:"key"`
	TaskID  string `json:"task_id"`
	View    string `json:"view"`
	Harness string `json:"harness"`
	Policy  string `json:"policy"`
	Sample  int    `json:"sample"`
	Seed    uint64 `json:"seed"`
	// Score is R in [0, 1] (the mean of the checkpoints' r_k, see
	// verify.Result); nil when the episode ended on an infrastructure
	// failure, never 0 for one.
	Score *float64 `json:"score"`
	// Passed is Score == 1.
	Passed      bool                `json:"passed"`
	Checkpoints []verify.Checkpoint `json:"checkpoints,omitempty"`
	// Rubric and RubricScore are a judge model's scores of the task's
	// rubric items and their weighted mean in [0, 1], reported beside
	// Score (nil when the task has no rubric items or no judge is set).
	Rubric      []verify.RubricScore `json:"rubric,omitempty"`
	RubricScore *float64             `json:"rubric_score,omitempty"`
	// Attributions are the executor's attribution records, opaque here.
	Attributions json.RawMessage `json:"attributions,omitempty"`
	// Faults are the faults the episode's policy planted, in plan order
	// (a scripted policy's scripted.Policy.Faults, as the executor built
	// that policy for the episode); nil for other policies.
	Faults []scripted.Fault `json:"faults,omitempty"`
	// Infra is the last attempt's failure when no attempt succeeded.
	Infra *InfraError `json:"infra,omitempty"`
	// InfraErrors are every failed attempt's failures, in order (also
	// those of a job that finally succeeded).
	InfraErrors []InfraError `json:"infra_errors,omitempty"`
	// Attempts is how many times the executor was called (>= 1).
	Attempts int    `json:"attempts"`
	Session  string `json:"session,omitempty"`
	// Ledger references the session's ledger (a session id or a path).
	Ledger      string          `json:"ledger,omitempty"`
	Termination string          `json:"termination,omitempty"`
	Turns       int             `json:"turns"`
	ToolCalls   int             `json:"tool_calls"`
	Trajectory  json.RawMessage `json:"trajectory,omitempty"`
	// DurationMs is the job's wall time in milliseconds, all attempts and
	// the backoff between them included.
	DurationMs int64 `json:"duration_ms"`
}
