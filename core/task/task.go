package task

import (
	"encoding/json"
)

// Format is the value of the "format" field of a weft task file.
const Format = "weft.tasks/v1"

// Call is one tool call of a reference solution.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	// Compare names the arguments a matching call must agree on (nil =
	// all, empty = none; tau2's compare_args).
	Compare []string `json:"compare,omitempty"`
}

// Check kinds (Check.Kind).
const (
	// CheckStateEqual: the final state's hash equals the reference
	// replay's final state (tau2's DB check).
	CheckStateEqual = "state_equal"
	// CheckChangedRows: the column values and workspace files the atomic
	// task's reference action changes in the reference replay are in the
	// final state (values a later atomic task changes again are checked
	// against the reference final state instead, or, with Overwritten
	// "last", left to the last atomic task that changes them).
	CheckChangedRows = "changed_rows"
	// CheckSQL: SQL on the final state returns Expect (a JSON array of
	// rows, each an array of values).
	CheckSQL = "sql"
	// CheckRequiredCall: a successful call of Tool whose arguments match
	// Arguments (on Compare, or all of them) is in the ledger.
	CheckRequiredCall = "required_call"
	// CheckForbiddenCall: no call of Tool (matching Arguments when given)
	// is in the ledger.
	CheckForbiddenCall = "forbidden_call"
	// CheckCommunicate: Text appears in an agent message to the user
	// (case-insensitive, tau2's communicate_info).
	CheckCommunicate = "communicate"
	// CheckUnchanged: the final state equals the initial state.
	CheckUnchanged = "unchanged"
	// CheckFileEqual: workspace file Path of the final state exists and its
	// content is exactly Text (UTF-8).
	CheckFileEqual = "file_equal"
	// CheckFileContains: workspace file Path of the final state exists and
	// its content contains Text.
	CheckFileContains = "file_contains"
	// CheckFileAbsent: no workspace entry (file or directory) Path in the
	// final state.
	CheckFileAbsent = "file_absent"
)

// MarshalJSON writes Compare as [] when it is empty but not nil ("compare
// no arguments"), which omitempty would drop (turning it into nil, "compare
// all").
func (c Call) MarshalJSON() ([]byte, error) {
	type plain Call
	if c.Compare != nil && len(c.Compare) == 0 {
		return json.Marshal(struct {
			plain
			Compare []string `json:"compare"`
		}{plain(c), []string{}})
	}
	return json.Marshal(plain(c))
}

// MarshalJSON keeps an empty, non-nil Compare as [] (see Call.MarshalJSON).
func (c Check) MarshalJSON() ([]byte, error) {
	type plain Check
	if c.Compare != nil && len(c.Compare) == 0 {
		return json.Marshal(struct {
			plain
			Compare []string `json:"compare"`
		}{plain(c), []string{}})
	}
	return json.Marshal(plain(c))
}

// Check is one executable check; a checkpoint passes when all its checks
// pass.
type Check struct {
	Kind string `json:"kind"`
	// SQL and Expect for CheckSQL.
	SQL    string          `json:"sql,omitempty"`
	Expect json.RawMessage `json:"expect,omitempty"`
	// Tool, Arguments and Compare for CheckRequiredCall and
	// CheckForbiddenCall.
	Tool      string          `json:"tool,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Compare   []string        `json:"compare,omitempty"`
	// Text for CheckCommunicate, CheckFileEqual and CheckFileContains.
	Text string `json:"text,omitempty"`
	// Path is the workspace path of CheckFileEqual, CheckFileContains and
	// CheckFileAbsent (io/fs form, e.g. "docs/report.txt").
	Path string `json:"path,omitempty"`
	// Overwritten says how CheckChangedRows treats a value a later atomic
	// task's reference changes again: "" or OverwrittenReference, against
	// the reference's final state (this checkpoint also fails when the
	// later task goes wrong); OverwrittenLast, not here (each value is
	// checked once, by the last atomic task that changes it, so a fault
	// in task k fails k and the tasks after it that depend on it, never an
	// earlier one).
	Overwritten string `json:"overwritten,omitempty"`
	// Note says what the check is for (reports).
	Note string `json:"note,omitempty"`
}

// Check.Overwritten values.
const (
	OverwrittenReference = "reference"
	OverwrittenLast      = "last"
)

// RubricItem is a criterion a judge model scores in [0, 1], reported beside
// the executable score (never part of R).
type RubricItem struct {
	ID        string  `json:"id"`
	Criterion string  `json:"criterion"`
	Weight    float64 `json:"weight,omitempty"` // default 1
}

// Atomic is an atomic task: one request the agent must fulfil, with its
// reference solution and its checks. Its checkpoint is r_k in {0, 1}.
type Atomic struct {
	ID string `json:"id"`
	// Request is the request text the simulated user says for this task.
	Request string `json:"request"`
	// Bindings name entities this task uses (e.g. "order_id": "#W2378156");
	// After-edges pass them between tasks.
	Bindings map[string]string `json:"bindings,omitempty"`
	// After lists the ids of atomic tasks that must be done before this
	// one (the DAG's edges).
	After []string `json:"after,omitempty"`
	// Reference is the reference solution: the read calls that lead to
	// the state-changing action, then the action (and, for the last task,
	// the trailing reads).
	Reference []Call       `json:"reference"`
	Checks    []Check      `json:"checks"`
	Rubric    []RubricItem `json:"rubric,omitempty"`
}

// Task is a composed task: a DAG of atomic tasks over one initial state,
// the full brief for the agentic view, and the overall checks (the last
// checkpoint).
type Task struct {
	ID string `json:"id"`
	// Source says where the task came from ("tau2-retail:12").
	Source string `json:"source,omitempty"`
	// Version is the task's revision number: 0 (absent in the file) is
	// the task as written; a revision (core/synth/evolve) is a new Task
	// with the same ID and Version + 1, never an edit in place. Files
	// written before the field existed load as version 0.
	Version int `json:"version,omitempty"`
	// Modules are the lifecycle group's module references.
	Modules []string `json:"modules"`
	// InitialVersion is the state the episode starts from: "" is the
	// group's seed state; otherwise a version id known to the server.
	InitialVersion string `json:"initial_version,omitempty"`
	// InitialState is the task's own starting state, a weft.state/v1
	// document over the task's modules' tables (BFCL: each task loads its
	// own initial_config). A loader that runs tasks imports it as a
	// version and starts the episode there (it replaces InitialVersion).
	InitialState json.RawMessage `json:"initial_state,omitempty"`
	// Tools, when set, are the only tools of the Modules the agent is
	// offered (names as the lifecycle group exposes them): the others are
	// neither listed nor callable in the episode (BFCL shows a task only
	// the functions of its involved classes). Nil: every tool.
	Tools []string `json:"tools,omitempty"`
	// Brief is the whole request as the agentic view gives it up front.
	Brief string `json:"brief"`
	// Identity is what the simulated user says about themselves before
	// the first request (e.g. "I am Yusuf Rossi, zip 19122.").
	Identity string `json:"identity,omitempty"`
	// Atomic are the atomic tasks; their order in the file is a
	// topological order of the DAG.
	Atomic []Atomic `json:"atomic"`
	// Checks are the overall goal's checks (tau2: state_equal plus one
	// communicate check per communicate_info string).
	Checks []Check        `json:"checks"`
	Rubric []RubricItem   `json:"rubric,omitempty"`
	Meta   map[string]any `json:"meta,omitempty"`
}

// File is a weft task file: {"format": "weft.tasks/v1", "tasks": [...]}.
type File struct {
	Format string `json:"format"`
	// States, when set, names a weft.state-set/v1 file (relative to the
	// task file's directory) holding the tasks' initial states
	// (SaveSplit); LoadFile fills each task's InitialState from it.
	States string  `json:"states,omitempty"`
	Tasks  []*Task `json:"tasks"`
}

// Views.
const (
	// ViewAgentic gives the full brief in the opening message.
	ViewAgentic = "agentic"
	// ViewSimUser reveals one atomic request at a time in DAG order.
	ViewSimUser = "simuser"
)
