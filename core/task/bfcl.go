package task

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// BFCLCase is a BFCL multi-turn task as the project's BFCL oracle files
// hold it (examples/data/bfcl-multiturn/README.md): the user turns, the
// involved API classes, and the ground-truth calls, each tagged with its
// turn, as keyword arguments.
type BFCLCase struct {
	ID               string              `json:"id"`
	InvolvedClasses  []string            `json:"involved_classes"`
	InitialConfig    json.RawMessage     `json:"initial_config"`
	Question         [][]json.RawMessage `json:"question"`
	ExcludedFunction []string            `json:"excluded_function"`
	Calls            []BFCLCall          `json:"calls"`
}

// BFCLCall is one ground-truth call of a BFCLCase.
type BFCLCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Turn      int             `json:"turn"`
	BFCLCall  string          `json:"bfcl_call"`
}

// BFCLOptions tune FromBFCL.
type BFCLOptions struct {
	// Modules are the task's modules (the BFCL module reference).
	Modules []string
	// InitialState is the weft.state/v1 document of the case's starting
	// state (its initial_config loaded into the module's tables); it
	// becomes Task.InitialState.
	InitialState json.RawMessage
	// ChangesState reports whether ground-truth call i (an index into
	// BFCLCase.Calls) changes the state (a replay on the module decides
	// it); nil: every call does.
	ChangesState func(call int) bool
	// Source prefixes Task.Source ("bfcl" when empty).
	Source string
	// ClassTools maps each API class to its tools' names (as the module
	// exposes them). When set, Task.Tools is the tools of the case's
	// involved classes, in involved_classes order, less its
	// excluded_function: what BFCL shows the model. Nil: Task.Tools stays
	// nil (every tool).
	ClassTools map[string][]string
}

// FromBFCL converts a BFCL multi-turn task to a weft task: one atomic
// task per user turn (its request the turn's user messages, its
// reference the turn's ground-truth calls, after the previous turn), the
// brief all turns' requests in order (the agentic view), and the checks
// of BFCL's two checkers (bfcl_eval multi_turn_checker): its state check
// is the overall state_equal (the final state equal to the ground truth
// replay's) and, per turn that changes the state, changed_rows; its
// response check (each turn's ground-truth results among the model's) is
// a required_call, with all its arguments, of each ground-truth call that
// changes nothing (a read: the same call on the same state answers the
// same; the results of the calls that change the state are covered by the
// state check). The changed_rows checks leave a value a later turn changes
// again to that turn (Overwritten "last"): a fault planted in turn k fails
// turn k and the later turns that depend on it, never an earlier one.
// With opts.ClassTools the task offers only its involved classes' tools
// (less excluded_function). Errors: a case without id, turns, a call
// tagged with a turn out of range, an involved class ClassTools lacks, or
// a ground-truth call of a tool the task does not offer.
func FromBFCL(c *BFCLCase, opts BFCLOptions) (*Task, error) {
	if c.ID == "" {
		return nil, fmt.Errorf("task: BFCL case without id")
	}
	if len(c.Question) == 0 {
		return nil, fmt.Errorf("task: BFCL case %s has no turns", c.ID)
	}
	src := opts.Source
	if src == "" {
		src = "bfcl"
	}
	t := &Task{ID: c.ID, Source: src + ":" + c.ID, Modules: opts.Modules, InitialState: opts.InitialState,
		Checks: []Check{{Kind: CheckStateEqual, Note: "BFCL state check: the final state of every involved class equals the ground truth's"}},
		Meta:   map[string]any{"involved_classes": c.InvolvedClasses}}
	if len(c.ExcludedFunction) > 0 {
		t.Meta["excluded_function"] = c.ExcludedFunction
	}
	if opts.ClassTools != nil {
		t.Tools = []string{}
		for _, cl := range c.InvolvedClasses {
			names, ok := opts.ClassTools[cl]
			if !ok {
				return nil, fmt.Errorf("task: BFCL case %s: no tools for involved class %q", c.ID, cl)
			}
			for _, n := range names {
				if !slices.Contains(c.ExcludedFunction, n) && !slices.Contains(t.Tools, n) {
					t.Tools = append(t.Tools, n)
				}
			}
		}
	}
	turns := make([][]Call, len(c.Question))
	changes := make([]bool, len(c.Question))
	reads := make([][]Call, len(c.Question))
	for i, call := range c.Calls {
		if call.Turn < 0 || call.Turn >= len(turns) {
			return nil, fmt.Errorf("task: BFCL case %s: call %d (%s) has turn %d of %d", c.ID, i, call.Name, call.Turn, len(turns))
		}
		if t.Tools != nil && !slices.Contains(t.Tools, call.Name) {
			return nil, fmt.Errorf("task: BFCL case %s: ground-truth call %d (%s) is not a tool of its involved classes %v", c.ID, i, call.Name, c.InvolvedClasses)
		}
		args := call.Arguments
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		tc := Call{Tool: call.Name, Arguments: args}
		turns[call.Turn] = append(turns[call.Turn], tc)
		if opts.ChangesState == nil || opts.ChangesState(i) {
			changes[call.Turn] = true
		} else {
			reads[call.Turn] = append(reads[call.Turn], tc)
		}
	}
	var briefs []string
	for k, msgs := range c.Question {
		req, err := bfclRequest(msgs)
		if err != nil {
			return nil, fmt.Errorf("task: BFCL case %s turn %d: %w", c.ID, k, err)
		}
		briefs = append(briefs, req)
		a := Atomic{ID: fmt.Sprintf("turn-%d", k), Request: req, Reference: turns[k], Checks: []Check{}}
		if k > 0 {
			a.After = []string{fmt.Sprintf("turn-%d", k-1)}
		}
		if changes[k] {
			a.Checks = append(a.Checks, Check{Kind: CheckChangedRows, Overwritten: OverwrittenLast, Note: "BFCL state check of this turn"})
		}
		for _, call := range reads[k] {
			a.Checks = append(a.Checks, Check{Kind: CheckRequiredCall, Tool: call.Tool, Arguments: call.Arguments,
				Note: "BFCL response check: the ground truth's read (and so its result)"})
		}
		t.Atomic = append(t.Atomic, a)
	}
	t.Brief = strings.Join(briefs, "\n")
	if err := t.Validate(); err != nil {
		return nil, err
	}
	return t, nil
}

// bfclRequest joins a turn's user messages: each is a string, or a
// {"role": "user", "content": ...} message as BFCL's task file has them.
func bfclRequest(msgs []json.RawMessage) (string, error) {
	var parts []string
	for _, m := range msgs {
		var s string
		if json.Unmarshal(m, &s) == nil {
			parts = append(parts, s)
			continue
		}
		var msg struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}
		if err := json.Unmarshal(m, &msg); err != nil {
			return "", fmt.Errorf("a user message is neither text nor a message: %s", m)
		}
		if msg.Role == "" || msg.Role == "user" {
			parts = append(parts, msg.Content)
		}
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("no user message")
	}
	return strings.Join(parts, "\n"), nil
}
