package scripted

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// expectTask: a1 changes order #W1 (a lookup, then the write), a2 only
// looks order #W2 up (required_call on order_id), a3 looks #W2 up again
// and changes it, a4 transfers (required_call comparing nothing).
func expectTask() *task.Task {
	c := func(tool, args string) task.Call { return task.Call{Tool: tool, Arguments: json.RawMessage(args)} }
	return &task.Task{ID: "t", Brief: "b", Atomic: []task.Atomic{
		{ID: "a1", Request: "r1", Reference: []task.Call{c("get_order_details", `{"order_id":"#W1"}`), c("cancel_pending_order", `{"order_id":"#W1","reason":"ordered by mistake"}`)},
			Checks: []task.Check{{Kind: task.CheckChangedRows}}},
		{ID: "a2", Request: "r2", Reference: []task.Call{c("shop__get_order_details", `{"order_id":"#W2"}`)},
			Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: "shop__get_order_details", Arguments: json.RawMessage(`{"order_id":"#W2"}`), Compare: []string{"order_id"}}}},
		{ID: "a3", Request: "r3", Reference: []task.Call{c("shop__get_order_details", `{"order_id":"#W2"}`), c("modify_pending_order_address", `{"order_id":"#W2","zip":"10001"}`)},
			Checks: []task.Check{{Kind: task.CheckChangedRows}}},
		{ID: "a4", Request: "r4", Reference: []task.Call{c("transfer_to_human_agents", `{"summary":"s"}`)},
			Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: "transfer_to_human_agents", Arguments: json.RawMessage(`{"summary":"s"}`), Compare: []string{}}}},
	}, Checks: []task.Check{{Kind: task.CheckStateEqual}, {Kind: task.CheckCommunicate, Text: "done"}}}
}

// TestExpectClasses: each fault kind on each kind of call gets its class
// and its must/may sets by the documented rule. Script steps (agentic):
// 0 get #W1, 1 cancel #W1, 2 get #W2 (a2), 3 get #W2 (a3), 4 modify #W2,
// 5 transfer, 6 closing Say.
func TestExpectClasses(t *testing.T) {
	tk := expectTask()
	if OverallCheckpoint != verify.Overall {
		t.Fatalf("OverallCheckpoint %q, verify.Overall %q", OverallCheckpoint, verify.Overall)
	}
	sc, err := ScriptForView(tk, task.ViewAgentic)
	if err != nil {
		t.Fatal(err)
	}
	at := func(kind string, step int, args string) Fault {
		f := Fault{Kind: kind, Step: step, Atomic: sc.Steps[step].Atomic, Tool: sc.Steps[step].Tool, Arguments: sc.Steps[step].Arguments}
		if args != "" {
			f.Arguments = json.RawMessage(args)
		}
		return f
	}
	extra := func(step, of int) Fault {
		f := at(FaultExtraCall, step, "")
		f.Tool, f.Arguments, f.Of, f.OfAtomic = sc.Steps[of].Tool, sc.Steps[of].Arguments, of, sc.Steps[of].Atomic
		return f
	}
	for _, tc := range []struct {
		name       string
		faults     []Fault
		class      []string
		must, may  []string
		failed     []string // a failed set that matches
		exactMatch bool
	}{
		{"skip a lookup no check needs", []Fault{at(FaultSkipStep, 0, "")}, []string{ClassFreeCall}, nil, nil, nil, true},
		{"skip a write", []Fault{at(FaultSkipStep, 1, "")}, []string{ClassLostWrite}, []string{"a1", "overall"}, nil, []string{"a1", "overall"}, true},
		{"wrong argument on a write that names another entity", []Fault{at(FaultWrongArgument, 1, `{"order_id":"#W2","reason":"ordered by mistake"}`)},
			[]string{ClassChangedWrite}, []string{"overall"}, []string{"a1", "a3"}, []string{"overall", "a1", "a3"}, false},
		{"wrong argument on a write the module takes", []Fault{at(FaultWrongArgument, 4, `{"order_id":"#W2","zip":"10002"}`)},
			[]string{ClassChangedWrite}, []string{"overall"}, []string{"a3"}, []string{"overall"}, true},
		{"skip a required lookup another call repeats", []Fault{at(FaultSkipStep, 2, "")}, []string{ClassCoveredCall}, nil, nil, nil, true},
		{"skip both required lookups", []Fault{at(FaultSkipStep, 2, ""), at(FaultSkipStep, 3, "")},
			[]string{ClassLostRequiredCall, ClassLostRequiredCall}, []string{"a2"}, nil, []string{"a2"}, true},
		{"wrong compared argument on both lookups", []Fault{at(FaultWrongArgument, 2, `{"order_id":"#W3"}`), at(FaultWrongArgument, 3, `{"order_id":"#W3"}`)},
			[]string{ClassLostRequiredCall, ClassLostRequiredCall}, []string{"a2"}, nil, []string{"a2"}, true},
		{"wrong argument no check compares", []Fault{at(FaultWrongArgument, 5, `{"summary":"x"}`)}, []string{ClassFreeCall}, nil, nil, nil, true},
		{"skip a call a compare-nothing check needs", []Fault{at(FaultSkipStep, 5, "")}, []string{ClassLostRequiredCall}, []string{"a4"}, nil, []string{"a4"}, true},
		{"extra call covers a skipped lookup", []Fault{at(FaultSkipStep, 2, ""), at(FaultSkipStep, 3, ""), extra(4, 2)},
			[]string{ClassCoveredCall, ClassCoveredCall, ClassRepeatedRead}, nil, nil, nil, true},
		{"repeated write", []Fault{extra(1, 1)}, []string{ClassRepeatedWrite}, nil, []string{"a1", "overall"}, nil, true},
		{"rejected calls", []Fault{{Kind: FaultHallucinatedTool, Step: 1, Atomic: "a1", Tool: "lookup_customer"}, at(FaultMalformedCall, 4, "")},
			[]string{ClassRejectedCall, ClassRejectedCall}, nil, nil, nil, true},
		{"early stop before a3", []Fault{{Kind: FaultEarlyStop, Step: 3, Atomic: "a3"}}, []string{ClassLostWrite}, []string{"a3", "a4", "overall"}, nil, []string{"a3", "a4", "overall"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Expect(tk, task.ViewAgentic, tc.faults)
			if err != nil {
				t.Fatal(err)
			}
			var classes []string
			for _, o := range e.Faults {
				classes = append(classes, o.Class)
			}
			if !slices.Equal(classes, tc.class) || !slices.Equal(e.Must, tc.must) || !slices.Equal(e.May, tc.may) {
				t.Fatalf("classes %v must %v may %v, want %v %v %v", classes, e.Must, e.May, tc.class, tc.must, tc.may)
			}
			ok, exact, problems := e.Match(tc.failed)
			if !ok || exact != tc.exactMatch {
				t.Errorf("Match(%v) = %v, %v, %v", tc.failed, ok, exact, problems)
			}
			// One more failed checkpoint outside Must ∪ May, or one Must
			// checkpoint passing, is a mismatch with its reason.
			more := append(slices.Clone(tc.failed), "a9")
			if ok, _, p := e.Match(more); ok || len(p) != 1 || !strings.Contains(p[0], "a9 failed, but no planted fault predicts it") {
				t.Errorf("Match(%v) = %v, %v", more, ok, p)
			}
			if len(tc.must) > 0 {
				if ok, _, p := e.Match(tc.failed[1:]); ok || !strings.Contains(strings.Join(p, "\n"), tc.failed[0]+" passed, but") {
					t.Errorf("Match(%v) = %v, %v", tc.failed[1:], ok, p)
				}
			}
		})
	}
}

// TestExpectErrors: a fault at a step the script does not have and an
// unknown view are errors.
func TestExpectErrors(t *testing.T) {
	if _, err := Expect(expectTask(), task.ViewAgentic, []Fault{{Kind: FaultSkipStep, Step: 99}}); err == nil || !strings.Contains(err.Error(), "step 99") {
		t.Errorf("step 99: %v", err)
	}
	if _, err := Expect(expectTask(), "oracle", nil); err == nil {
		t.Error("unknown view accepted")
	}
	bad := expectTask()
	bad.Atomic[1].Checks[0].Arguments = json.RawMessage(`[1]`)
	if _, err := Expect(bad, task.ViewAgentic, nil); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Errorf("bad check arguments: %v", err)
	}
}
