package task

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFromBFCL(t *testing.T) {
	c := &BFCLCase{
		ID:               "multi_turn_base_9",
		InvolvedClasses:  []string{"GorillaFileSystem", "TwitterAPI"},
		Question:         [][]json.RawMessage{{json.RawMessage(`"Go to docs and make notes."`)}, {json.RawMessage(`{"role": "user", "content": "Show them."}`)}, {json.RawMessage(`"Thanks."`)}},
		ExcludedFunction: []string{"rm"},
		Calls: []BFCLCall{
			{Name: "cd", Arguments: json.RawMessage(`{"folder": "docs"}`), Turn: 0},
			{Name: "touch", Arguments: json.RawMessage(`{"file_name": "notes"}`), Turn: 0},
			{Name: "ls", Turn: 1},
		},
	}
	state := json.RawMessage(`{"format":"weft.state/v1"}`)
	tools := map[string][]string{"GorillaFileSystem": {"cd", "ls", "touch", "rm"}, "TwitterAPI": {"post_tweet"}, "MathAPI": {"add"}}
	got, err := FromBFCL(c, BFCLOptions{Modules: []string{"bfcl"}, InitialState: state, ChangesState: func(i int) bool { return i < 2 }, ClassTools: tools})
	if err != nil {
		t.Fatal(err)
	}
	want := &Task{
		ID: "multi_turn_base_9", Source: "bfcl:multi_turn_base_9", Modules: []string{"bfcl"}, InitialState: state,
		// The involved classes' tools less excluded_function (rm); not MathAPI's.
		Tools: []string{"cd", "ls", "touch", "post_tweet"},
		Brief: "Go to docs and make notes.\nShow them.\nThanks.",
		Atomic: []Atomic{
			{ID: "turn-0", Request: "Go to docs and make notes.",
				Reference: []Call{{Tool: "cd", Arguments: json.RawMessage(`{"folder": "docs"}`)}, {Tool: "touch", Arguments: json.RawMessage(`{"file_name": "notes"}`)}},
				Checks:    []Check{{Kind: CheckChangedRows, Overwritten: OverwrittenLast, Note: "BFCL state check of this turn"}}},
			{ID: "turn-1", Request: "Show them.", After: []string{"turn-0"},
				Reference: []Call{{Tool: "ls", Arguments: json.RawMessage(`{}`)}},
				Checks:    []Check{{Kind: CheckRequiredCall, Tool: "ls", Arguments: json.RawMessage(`{}`), Note: "BFCL response check: the ground truth's read (and so its result)"}}},
			{ID: "turn-2", Request: "Thanks.", After: []string{"turn-1"}, Checks: []Check{}},
		},
		Checks: []Check{{Kind: CheckStateEqual, Note: "BFCL state check: the final state of every involved class equals the ground truth's"}},
		Meta:   map[string]any{"involved_classes": []string{"GorillaFileSystem", "TwitterAPI"}, "excluded_function": []string{"rm"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("FromBFCL (-want +got):\n%s", d)
	}
}

func TestFromBFCLErrors(t *testing.T) {
	q := [][]json.RawMessage{{json.RawMessage(`"hi"`)}}
	for _, c := range []struct {
		name string
		c    BFCLCase
		want string
	}{
		{"no id", BFCLCase{Question: q}, "without id"},
		{"no turns", BFCLCase{ID: "a"}, "has no turns"},
		{"call after the last turn", BFCLCase{ID: "a", Question: q, Calls: []BFCLCall{{Name: "ls", Turn: 1}}}, "call 0 (ls) has turn 1 of 1"},
		{"message neither text nor message", BFCLCase{ID: "a", Question: [][]json.RawMessage{{json.RawMessage(`3`)}}}, "neither text nor a message"},
		{"empty turn", BFCLCase{ID: "a", Question: [][]json.RawMessage{{}}}, "no user message"},
		{"class without tools", BFCLCase{ID: "a", Question: q, InvolvedClasses: []string{"WebSearchAPI"}}, `no tools for involved class "WebSearchAPI"`},
		{"call of an excluded function", BFCLCase{ID: "a", Question: q, InvolvedClasses: []string{"GorillaFileSystem"}, ExcludedFunction: []string{"rm"},
			Calls: []BFCLCall{{Name: "rm", Turn: 0}}}, "ground-truth call 0 (rm) is not a tool of its involved classes"},
	} {
		bc := c.c
		_, err := FromBFCL(&bc, BFCLOptions{ClassTools: map[string][]string{"GorillaFileSystem": {"ls", "rm"}}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}
