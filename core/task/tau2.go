package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Tau2Task is one tau2-bench task as its tasks.json states it, reduced to
// what weft uses: the simulated user's scenario and the evaluation criteria.
// Fields tau2 leaves null load as zero values.
type Tau2Task struct {
	// ID is the task's id ("0", "1", ...), unique within a file.
	ID string
	// Scenario is user_scenario: the persona and instructions the simulated
	// customer follows.
	Scenario Tau2Scenario
	// Actions are evaluation_criteria.actions: the gold tool calls in order.
	Actions []Tau2Action
	// CommunicateInfo are evaluation_criteria.communicate_info: strings the
	// agent must tell the user verbatim.
	CommunicateInfo []string
	// NLAssertions are evaluation_criteria.nl_assertions: natural-language
	// statements a judge checks against the conversation.
	NLAssertions []string
	// RewardBasis is evaluation_criteria.reward_basis: which checks count
	// towards the reward ("DB", "NL_ASSERTION", "COMMUNICATE", ...).
	RewardBasis []string
}

// Tau2Scenario is a task's user_scenario. tau2 states instructions either as
// an object (the four parts below plus the domain) or as one free text; free
// text loads into TaskInstructions.
type Tau2Scenario struct {
	// Persona is user_scenario.persona ("" when null).
	Persona string
	// Domain is instructions.domain, e.g. "retail".
	Domain string
	// ReasonForCall is why the customer calls (required).
	ReasonForCall string
	// KnownInfo is what the customer knows, e.g. their name and zip code.
	KnownInfo string
	// UnknownInfo is what the customer does not know ("" when null).
	UnknownInfo string
	// TaskInstructions is how the customer behaves during the call.
	TaskInstructions string
}

// Tau2Action is one gold tool call.
type Tau2Action struct {
	// ID is action_id, e.g. "0_3".
	ID string
	// Name is the tool name, e.g. "get_order_details".
	Name string
	// Arguments is the arguments object as JSON text, as in the file.
	Arguments json.RawMessage
	// CompareArgs is compare_args: the argument names a grader compares.
	// nil (absent or null in the file) means all of them; an empty non-nil
	// slice means none.
	CompareArgs []string
}

// Tau2Error is a malformed tasks file: which task (its position in the
// array and, when known, its id) and which field is at fault. Index is -1
// for faults of the file as a whole.
type Tau2Error struct {
	Index  int
	TaskID string
	// Field is a JSON path inside the task, e.g. "evaluation_criteria.actions[2].name".
	Field string
	Err   error
}

func (e *Tau2Error) Error() string {
	var b strings.Builder
	b.WriteString("tau2 tasks: ")
	if e.Index >= 0 {
		fmt.Fprintf(&b, "task %d", e.Index)
		if e.TaskID != "" {
			fmt.Fprintf(&b, " (id %q)", e.TaskID)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Tau2Error) Unwrap() error { return e.Err }

// The file's shape. Pointers tell absent or null from empty.
type rawTask struct {
	ID                 *json.RawMessage `json:"id"`
	UserScenario       *rawScenario     `json:"user_scenario"`
	EvaluationCriteria *rawCriteria     `json:"evaluation_criteria"`
}

type rawScenario struct {
	Persona      *string         `json:"persona"`
	Instructions json.RawMessage `json:"instructions"`
}

type rawInstructions struct {
	Domain           *string `json:"domain"`
	ReasonForCall    *string `json:"reason_for_call"`
	KnownInfo        *string `json:"known_info"`
	UnknownInfo      *string `json:"unknown_info"`
	TaskInstructions *string `json:"task_instructions"`
}

type rawCriteria struct {
	Actions         []json.RawMessage `json:"actions"`
	CommunicateInfo []string          `json:"communicate_info"`
	NLAssertions    []string          `json:"nl_assertions"`
	RewardBasis     []string          `json:"reward_basis"`
}

type rawAction struct {
	ActionID    *string         `json:"action_id"`
	Name        *string         `json:"name"`
	Arguments   json.RawMessage `json:"arguments"`
	CompareArgs []string        `json:"compare_args"`
}

// LoadTau2 reads a tau2-bench tasks file: one JSON array of task objects.
// Unknown fields (description, initial_state, issues, ...) are ignored.
// Every task needs a non-empty, unique id (a string, or an integer that
// loads as its decimal text), user_scenario.instructions with a
// reason_for_call, and evaluation_criteria whose actions each have a name
// and an arguments object (null loads as {}). Errors are *Tau2Error naming
// the task and the field.
func LoadTau2(r io.Reader) ([]*Tau2Task, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &Tau2Error{Index: -1, Err: err}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var raws []json.RawMessage
	if err := dec.Decode(&raws); err != nil {
		return nil, &Tau2Error{Index: -1, Err: fmt.Errorf("not a JSON array of tasks: %w", err)}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, &Tau2Error{Index: -1, Err: errors.New("trailing data after the tasks array")}
	}
	tasks := make([]*Tau2Task, 0, len(raws))
	seen := make(map[string]int, len(raws))
	for i, raw := range raws {
		t, err := parseTau2Task(i, raw)
		if err != nil {
			return nil, err
		}
		if j, dup := seen[t.ID]; dup {
			return nil, &Tau2Error{Index: i, TaskID: t.ID, Field: "id", Err: fmt.Errorf("duplicate of task %d", j)}
		}
		seen[t.ID] = i
		tasks = append(tasks, t)
	}
	return tasks, nil
}

// LoadTau2File is LoadTau2 on the file at path.
func LoadTau2File(path string) ([]*Tau2Task, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tasks, err := LoadTau2(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return tasks, nil
}

func parseTau2Task(i int, data json.RawMessage) (*Tau2Task, error) {
	fail := func(id, field string, err error) error {
		return &Tau2Error{Index: i, TaskID: id, Field: field, Err: err}
	}
	var raw rawTask
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fail("", "", fmt.Errorf("not a task object: %w", err))
	}
	if raw.ID == nil || string(*raw.ID) == "null" {
		return nil, fail("", "id", errors.New("missing"))
	}
	id, err := parseID(*raw.ID)
	if err != nil {
		return nil, fail("", "id", err)
	}
	t := &Tau2Task{ID: id}

	if raw.UserScenario == nil {
		return nil, fail(id, "user_scenario", errors.New("missing"))
	}
	if raw.UserScenario.Persona != nil {
		t.Scenario.Persona = *raw.UserScenario.Persona
	}
	ins := raw.UserScenario.Instructions
	switch {
	case len(ins) == 0 || string(ins) == "null":
		return nil, fail(id, "user_scenario.instructions", errors.New("missing"))
	case ins[0] == '"':
		if err := json.Unmarshal(ins, &t.Scenario.TaskInstructions); err != nil {
			return nil, fail(id, "user_scenario.instructions", err)
		}
		if strings.TrimSpace(t.Scenario.TaskInstructions) == "" {
			return nil, fail(id, "user_scenario.instructions", errors.New("empty"))
		}
	default:
		var ri rawInstructions
		if err := json.Unmarshal(ins, &ri); err != nil {
			return nil, fail(id, "user_scenario.instructions", fmt.Errorf("neither an object nor a string: %w", err))
		}
		if ri.ReasonForCall == nil || strings.TrimSpace(*ri.ReasonForCall) == "" {
			return nil, fail(id, "user_scenario.instructions.reason_for_call", errors.New("missing or empty"))
		}
		t.Scenario.ReasonForCall = *ri.ReasonForCall
		t.Scenario.Domain = deref(ri.Domain)
		t.Scenario.KnownInfo = deref(ri.KnownInfo)
		t.Scenario.UnknownInfo = deref(ri.UnknownInfo)
		t.Scenario.TaskInstructions = deref(ri.TaskInstructions)
	}

	ec := raw.EvaluationCriteria
	if ec == nil {
		return nil, fail(id, "evaluation_criteria", errors.New("missing"))
	}
	t.CommunicateInfo = ec.CommunicateInfo
	t.NLAssertions = ec.NLAssertions
	t.RewardBasis = ec.RewardBasis
	for k, a := range ec.Actions {
		field := fmt.Sprintf("evaluation_criteria.actions[%d]", k)
		var ra rawAction
		if err := json.Unmarshal(a, &ra); err != nil {
			return nil, fail(id, field, fmt.Errorf("not an action object: %w", err))
		}
		if ra.Name == nil || *ra.Name == "" {
			return nil, fail(id, field+".name", errors.New("missing or empty"))
		}
		args := ra.Arguments
		switch {
		case len(args) == 0 || string(args) == "null":
			args = json.RawMessage(`{}`)
		case args[0] != '{':
			return nil, fail(id, field+".arguments", errors.New("not a JSON object"))
		default:
			args = append(json.RawMessage(nil), args...)
		}
		t.Actions = append(t.Actions, Tau2Action{
			ID:          deref(ra.ActionID),
			Name:        *ra.Name,
			Arguments:   args,
			CompareArgs: ra.CompareArgs,
		})
	}
	return t, nil
}

// parseID accepts a JSON string or integer.
func parseID(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if s == "" {
			return "", errors.New("empty")
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		if _, err := n.Int64(); err == nil {
			return n.String(), nil
		}
	}
	return "", fmt.Errorf("want a string or an integer, got %s", truncate(string(raw), 40))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// Brief renders the simulated customer's full brief: the text of the
// opening user message in the agentic view, where the whole request is
// stated up front. Sections appear in a fixed order (persona, reason for
// call, known info, unknown info, instructions), each as a heading line and
// the scenario's text trimmed of surrounding space; empty sections are left
// out. The same task always renders the same text.
func (t *Tau2Task) Brief() string {
	sections := []struct{ title, text string }{
		{"Persona", t.Scenario.Persona},
		{"Reason for call", t.Scenario.ReasonForCall},
		{"What you know", t.Scenario.KnownInfo},
		{"What you do not know", t.Scenario.UnknownInfo},
		{"How to behave", t.Scenario.TaskInstructions},
	}
	var b strings.Builder
	for _, s := range sections {
		text := strings.TrimSpace(s.text)
		if text == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(s.title)
		b.WriteString(":\n")
		b.WriteString(text)
	}
	return b.String()
}
