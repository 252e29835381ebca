package wire

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/failure"
)

func TestTaskRoundTrip(t *testing.T) {
	in := &task.Task{ID: "12", Source: "tau2-retail:12", Modules: []string{"retail"}, InitialVersion: "v1",
		Brief: "cancel it", Identity: "I am Yusuf.",
		Atomic: []task.Atomic{{ID: "a1", Request: "cancel #W1", Bindings: map[string]string{"order_id": "#W1"},
			Reference: []task.Call{
				{Tool: "get_order", Arguments: json.RawMessage(`{"order_id":"#W1"}`)},
				{Tool: "cancel", Arguments: json.RawMessage(`{"order_id":"#W1","reason":"no longer needed"}`), Compare: []string{}},
				{Tool: "cancel2", Arguments: json.RawMessage(`{"a":1}`), Compare: []string{"a"}},
			},
			Checks: []task.Check{{Kind: task.CheckChangedRows, Note: "n"}, {Kind: task.CheckChangedRows, Overwritten: task.OverwrittenLast}},
			Rubric: []task.RubricItem{{ID: "r", Criterion: "polite", Weight: 2}}},
			{ID: "a2", Request: "then", After: []string{"a1"}, Checks: []task.Check{
				{Kind: task.CheckSQL, SQL: "SELECT 1", Expect: json.RawMessage(`[[1,"x"],[2.5,null]]`)},
				{Kind: task.CheckSQL, SQL: "SELECT 1 WHERE 0", Expect: json.RawMessage(`[]`)},
				{Kind: task.CheckRequiredCall, Tool: "cancel", Arguments: json.RawMessage(`{"order_id":"#W1"}`), Compare: []string{"order_id"}},
				{Kind: task.CheckForbiddenCall, Tool: "refund"},
				{Kind: task.CheckCommunicate, Text: "$10"},
				{Kind: task.CheckFileEqual, Path: "docs/r.txt", Text: "total 42\n"},
				{Kind: task.CheckFileAbsent, Path: "tmp"},
				{Kind: task.CheckUnchanged},
			}}},
		Checks: []task.Check{{Kind: task.CheckStateEqual}},
		Meta:   map[string]any{"split": "test", "n": int64(3)},
	}
	p, err := Task(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := FromTask(p)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, out); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	if _, err := Task(&task.Task{ID: "x", Checks: []task.Check{{Kind: "nope"}}}); err == nil {
		t.Error("Task with an unknown check kind: nil error")
	}
	if _, err := Task(&task.Task{ID: "x", Checks: []task.Check{{Kind: task.CheckSQL, Expect: json.RawMessage(`{"a":1}`)}}}); err == nil {
		t.Error("Task with expect not an array: nil error")
	}
}

func TestChangesRoundTrip(t *testing.T) {
	in := &state.Changes{Tables: []state.TableDiff{{Table: "orders", Columns: []string{"id", "status", "blob"}, PrimaryKey: []string{"id"},
		Added:   []state.Row{{Key: []any{"#W2"}, Values: []any{"#W2", "pending", []byte("x")}}},
		Removed: []state.Row{{Key: []any{"#W3"}, Values: []any{"#W3", nil, nil}}},
		Changed: []state.RowChange{{Key: []any{"#W1"}, Columns: []state.ColumnChange{{Column: "status", Old: "pending", New: "cancelled"}, {Column: "n", Old: int64(1), New: 2.5}}}},
	}}, Files: []state.FileChange{
		{Path: "a.txt", Change: state.FileAdded, TextDiff: "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", NewSHA256: "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"},
		{Path: "d", Change: state.FileRemoved},
		{Path: "img", Change: state.FileChanged, OldSHA256: "aa", NewSHA256: "bb"},
	}}
	p, err := Changes(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, FromChanges(p)); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
}

func TestLedgerCallRoundTrip(t *testing.T) {
	ts := time.Date(2026, 12, 1, 22, 0, 0, 5, time.UTC)
	in := []megamcp.Record{
		{Index: 0, Session: "s", Generation: 1, Kind: megamcp.KindCall, Seq: 3, Module: "retail", Tool: "cancel",
			Arguments: json.RawMessage(`{"order_id":"#W1"}`), RowsChanged: 1, DurationMs: 1.25, Clock: 42, Time: ts,
			Result: &module.Result{CallResult: abi.CallResult{Content: []abi.Content{{Type: "text", Text: "ok"}, {Type: "resource", Resource: &abi.ResourceContents{URI: "u", Text: "t"}}},
				StructuredContent: json.RawMessage(`{"ok":true}`)}}},
		{Index: 1, Session: "s", Generation: 1, Kind: megamcp.KindCall, Tool: "get", Arguments: json.RawMessage(`{}`),
			Error: &megamcp.ErrorInfo{Kind: "trap", Message: "unreachable"}, Time: ts},
		{Index: 2, Session: "s", Generation: 2, Kind: megamcp.KindRestore, Version: "v9", Time: ts},
	}
	for _, r := range in {
		p, err := LedgerCall(r)
		if err != nil {
			t.Fatal(err)
		}
		out, err := FromLedgerCall(p)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(r, out); d != "" {
			t.Errorf("record %d round trip (-in +out):\n%s", r.Index, d)
		}
	}
	p, _ := LedgerCall(in[1])
	if c, k, _ := FromFailure(p.GetError()); c != failure.Module || k != failure.Trap {
		t.Errorf("trap record failure = %s/%s, want module/trap", c, k)
	}
	if _, err := LedgerCall(megamcp.Record{Kind: "bogus"}); err == nil {
		t.Error("unknown record kind: nil error")
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	in := verify.Checkpoint{Name: "a1", Score: 0, Checks: []verify.CheckResult{
		{Kind: task.CheckChangedRows, Passed: false, Evidence: "missing", Missing: []string{"orders[#W1].status=cancelled"}},
		{Kind: task.CheckCommunicate, Passed: true, Evidence: "said"},
	}}
	p, err := Checkpoint(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(in, FromCheckpoint(p)); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
}

func TestFailureRoundTrip(t *testing.T) {
	for _, i := range failure.Kinds() {
		for _, c := range failure.Components() {
			gc, gk, msg := FromFailure(Failure(c, i.Kind, "m"))
			if gc != c || gk != i.Kind || msg != "m" {
				t.Fatalf("Failure(%s, %s) round trip = %s, %s, %q", c, i.Kind, gc, gk, msg)
			}
		}
	}
	if _, k, msg := FromFailure(Failure(failure.Env, "weird", "m")); k != "" || msg != "weird: m" {
		t.Errorf("unknown kind: got %q %q", k, msg)
	}
}

func TestVerifyLedgerCallRoundTrip(t *testing.T) {
	for _, c := range []verify.LedgerCall{
		{Index: 3, Tool: "cancel", Arguments: json.RawMessage(`{"order_id":"#W1"}`), Output: "done", RowsChanged: 2},
		{Index: 4, Tool: "get", Arguments: json.RawMessage(`{}`), IsError: true, Output: "no such order"},
		{Index: 5, Tool: "get", ErrorKind: failure.Trap, IsError: true, Output: "module failed"},
		{Index: 6, Tool: "x", ErrorKind: failure.InvalidArguments},
	} {
		if d := cmp.Diff(c, FromVerifyLedgerCall(VerifyLedgerCall(c))); d != "" {
			t.Errorf("call %d round trip (-in +out):\n%s", c.Index, d)
		}
	}
}
