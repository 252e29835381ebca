package attribute

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"errors"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// fixture: task t1 cancels #W1 (a1, changed_rows) then #W2 (a2,
// required_call); overall checks state_equal and communicate "refund".
type fixture struct {
	task *task.Task
	v0   *state.Version
	ref1 *state.Version // after a1
	ref2 *state.Version // after a2 (= reference)
}

func newFixture(t *testing.T) *fixture {
	v0 := loadOrders(t, 4)
	ref1 := cancel(t, v0, "#W1")
	ref2 := cancel(t, ref1, "#W2")
	tk := &task.Task{
		ID: "t1", Modules: []string{"retail"},
		Atomic: []task.Atomic{
			cancelAtomic("a1", "#W1"),
			cancelAtomic("a2", "#W2", task.Check{Kind: task.CheckRequiredCall, Tool: "cancel_order", Arguments: args("#W2")}),
		},
		Checks: []task.Check{{Kind: task.CheckStateEqual}, {Kind: task.CheckCommunicate, Text: "refund"}},
	}
	return &fixture{task: tk, v0: v0, ref1: ref1, ref2: ref2}
}

func (f *fixture) evidence(final *state.Version) memEvidence {
	return memEvidence{
		verify.Initial: f.v0, verify.Final: final, verify.Reference: f.ref2,
		verify.ReferenceAfter(0): f.v0, verify.ReferenceAfter(1): f.ref1, verify.ReferenceAfter(2): f.ref2,
	}
}

func failed(kind string, missing ...string) verify.CheckResult {
	return verify.CheckResult{Kind: kind, Evidence: "not found", Missing: missing}
}

func result(cps ...verify.Checkpoint) *verify.Result { return &verify.Result{Checkpoints: cps} }

func cp(name string, checks ...verify.CheckResult) verify.Checkpoint {
	return verify.Checkpoint{Name: name, Checks: checks}
}

func passed(name string) verify.Checkpoint {
	return verify.Checkpoint{Name: name, Score: 1, Checks: []verify.CheckResult{{Kind: task.CheckChangedRows, Passed: true}}}
}

func TestAttributeRules(t *testing.T) {
	f := newFixture(t)
	good := []verify.LedgerCall{call(0, "get_order", "#W1"), call(1, "cancel_order", "#W1"), call(2, "get_order", "#W2"), call(3, "cancel_order", "#W2")}
	missingW1 := failed(task.CheckChangedRows, "orders[#W1].status=cancelled")
	trap := func(i uint64, tool, id, kind string) verify.LedgerCall {
		c := call(i, tool, id)
		c.ErrorKind, c.Output = failure.Kind(kind), "wasm trap: unreachable"
		return c
	}
	refFail := func() ReferenceReport {
		r := cleanReference(f.task)
		r.Calls[1].IsError, r.Calls[1].Output, r.Calls[1].RowsChanged = true, "order #W1 not found", 0
		return r
	}

	type want struct {
		class    Class
		revise   string
		evidence []string
	}
	cases := []struct {
		name     string
		in       Input
		want     []want
		wantName []string
	}{
		{
			name: "policy wrong argument",
			in: Input{Result: result(cp("a1", missingW1), passed("a2")), Reference: cleanReference(f.task),
				Ledger:   []verify.LedgerCall{call(0, "get_order", "#W1"), call(1, "cancel_order", "#W3")},
				Evidence: f.evidence(cancel(t, f.v0, "#W3", "#W2"))},
			want: []want{{ClassPolicy, "policy", []string{"missing orders[#W1].status=cancelled"}}},
		},
		{
			name: "policy skipped action",
			in: Input{Result: result(cp("a1", missingW1)), Reference: cleanReference(f.task),
				Ledger: good[:1], Evidence: f.evidence(f.v0)},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "environment trap on a needed tool",
			in: Input{Result: result(cp("a1", missingW1)), Reference: cleanReference(f.task),
				Ledger: []verify.LedgerCall{call(0, "list_orders", ""), trap(1, "get_order", "#W1", "trap")}, Evidence: f.evidence(f.v0)},
			want: []want{{ClassEnvironment, "module:retail/tool:get_order", []string{"ledger call #1 get_order failed in module retail (trap)", "unreachable", "atomic task a1 needs get_order"}}},
		},
		{
			name: "module failure on a tool the atomic task does not need is the policy's",
			in: Input{Result: result(cp("a1", missingW1)), Reference: cleanReference(f.task),
				Ledger: []verify.LedgerCall{trap(0, "list_products", "", "deadline")}, Evidence: f.evidence(f.v0)},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "overall: a module failure on any tool is the environment's",
			in: Input{Result: result(cp(verify.Overall, failed(task.CheckStateEqual))), Reference: cleanReference(f.task),
				Ledger: []verify.LedgerCall{trap(4, "list_products", "", "memory_limit")}, Evidence: f.evidence(f.v0)},
			want: []want{{ClassEnvironment, "module:retail/tool:list_products", []string{"#4", "memory_limit"}}},
		},
		{
			name: "a refused call (invalid_arguments) is not the module's failure",
			in: Input{Result: result(cp("a1", missingW1)), Reference: cleanReference(f.task),
				Ledger: []verify.LedgerCall{{Index: 0, Tool: "cancel_order", Arguments: []byte(`{"id":1}`), IsError: true, ErrorKind: "invalid_arguments"}}, Evidence: f.evidence(f.v0)},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "task: the reference call fails from the initial state",
			in: Input{Result: result(cp("a1", missingW1)), Reference: refFail(),
				Ledger:   []verify.LedgerCall{call(0, "get_order", "#W1"), {Index: 1, Tool: "cancel_order", Arguments: args("#W1"), IsError: true, Output: "order #W1 not found"}},
				Evidence: f.evidence(f.v0)},
			want: []want{{ClassTask, "task:t1/atomic:a1", []string{"reference call 1 of atomic task a1 (cancel_order) answered with an error", "not found"}}},
		},
		{
			name: "task: a reference failure of another atomic task does not blame this one",
			in: Input{Result: result(cp("a2", failed(task.CheckRequiredCall))), Reference: refFail(),
				Ledger: good[:3], Evidence: f.evidence(f.v0)},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "tie: module trap and reference failure -> environment",
			in: Input{Result: result(cp("a1", missingW1)), Reference: refFail(),
				Ledger: []verify.LedgerCall{trap(0, "cancel_order", "#W1", "internal")}, Evidence: f.evidence(f.v0)},
			want: []want{{ClassEnvironment, "module:retail/tool:cancel_order", []string{"#0", "internal"}}},
		},
		{
			name: "verifier: missing rows are in the final state",
			in: Input{Result: result(cp("a1", missingW1), passed("a2")), Reference: cleanReference(f.task),
				Ledger: good, Evidence: f.evidence(f.ref2)},
			want: []want{{ClassVerifier, "verifier:a1/changed_rows", []string{"orders[#W1].status=cancelled (changed from pending)"}}},
		},
		{
			name: "verifier: contradiction detected from the ledger (sql check, nothing listed missing)",
			in: Input{Result: result(cp("a1", failed(task.CheckSQL))), Reference: cleanReference(f.task),
				Ledger: good, Evidence: f.evidence(f.ref2)},
			want: []want{{ClassVerifier, "verifier:a1/sql", []string{"ledger call #1 cancel_order equals the reference action of a1", "orders[#W1].status=cancelled"}}},
		},
		{
			name: "ledger has the action but the final state lacks its effect -> policy",
			in: Input{Result: result(cp("a1", failed(task.CheckSQL))), Reference: cleanReference(f.task),
				Ledger: good, Evidence: f.evidence(cancel(t, f.v0, "#W2"))},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "overall state_equal contradicted by ledger and final state",
			in: Input{Result: result(cp(verify.Overall, failed(task.CheckStateEqual))), Reference: cleanReference(f.task),
				Ledger: good, Evidence: f.evidence(f.ref2)},
			want: []want{{ClassVerifier, "verifier:overall/state_equal", []string{"ledger call #1", "ledger call #3", "2 row change(s)"}}},
		},
		{
			name: "missing row listed with a value the final state does not have -> policy",
			in: Input{Result: result(cp("a1", failed(task.CheckChangedRows, "orders[#W1].status=refunded"))), Reference: cleanReference(f.task),
				Ledger: good[:1], Evidence: f.evidence(f.ref1)},
			want: []want{{ClassPolicy, "policy", []string{"orders[#W1].status=refunded"}}},
		},
		{
			name: "verifier: required call is in the ledger",
			in: Input{Result: result(passed("a1"), cp("a2", failed(task.CheckRequiredCall, "cancel_order"))), Reference: cleanReference(f.task),
				Ledger: good, Evidence: f.evidence(f.ref2)},
			want:     []want{{ClassVerifier, "verifier:a2/required_call", []string{"ledger call #3 cancel_order"}}},
			wantName: []string{"a2"},
		},
		{
			name: "required call answered with an error -> policy",
			in: Input{Result: result(cp("a2", failed(task.CheckRequiredCall))), Reference: cleanReference(f.task),
				Ledger:   []verify.LedgerCall{{Index: 7, Tool: "cancel_order", Arguments: args("#W2"), IsError: true, Output: "refused"}},
				Evidence: f.evidence(f.v0)},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "verifier: the text is in an agent message; policy when absent",
			in: Input{Result: result(cp(verify.Overall, verify.CheckResult{Kind: task.CheckStateEqual, Passed: true}, failed(task.CheckCommunicate, "refund"))),
				Reference: cleanReference(f.task), Ledger: good, Evidence: f.evidence(f.ref2),
				Messages: []string{"Done.", "Your REFUND of $20 is on its way."}},
			want: []want{{ClassVerifier, "verifier:overall/communicate", []string{"agent message 1"}}},
		},
		{
			name: "one contradicted and one genuine failure -> policy",
			in: Input{Result: result(cp(verify.Overall, failed(task.CheckStateEqual), failed(task.CheckCommunicate))),
				Reference: cleanReference(f.task), Ledger: good[:2], Evidence: f.evidence(f.ref1),
				Messages: []string{"refund sent"}},
			want: []want{{ClassPolicy, "policy", []string{"state_equal check failed", "communicate check failed"}}},
		},
		{
			name: "no evidence: missing rows cannot be contradicted",
			in:   Input{Result: result(cp("a1", missingW1)), Reference: cleanReference(f.task), Ledger: good},
			want: []want{{ClassPolicy, "policy", nil}},
		},
		{
			name: "several failed checkpoints, in order, passed ones skipped",
			in: Input{Result: result(cp("a1", missingW1), passed("a2"), cp(verify.Overall, failed(task.CheckStateEqual))),
				Reference: refFail(), Ledger: good[2:], Evidence: f.evidence(f.ref2)},
			want:     []want{{ClassTask, "task:t1/atomic:a1", nil}, {ClassTask, "task:t1/atomic:a1", nil}},
			wantName: []string{"a1", verify.Overall},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			in.Task = f.task
			got, err := Attribute(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d attributions, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Class != w.class || g.Revise != w.revise {
					t.Errorf("attribution %d = %s %q, want %s %q (evidence: %s)", i, g.Class, g.Revise, w.class, w.revise, g.Evidence)
				}
				for _, s := range w.evidence {
					if !strings.Contains(g.Evidence, s) {
						t.Errorf("evidence %q lacks %q", g.Evidence, s)
					}
				}
				name := in.Result.Checkpoints[0].Name
				if tc.wantName != nil {
					name = tc.wantName[i]
				}
				if g.Checkpoint != name {
					t.Errorf("checkpoint %q, want %q", g.Checkpoint, name)
				}
			}
		})
	}
}

func TestAttributeModules(t *testing.T) {
	f := newFixture(t)
	f.task.Modules = []string{"retail", "payments"}
	in := Input{Task: f.task, Result: result(cp("a1", failed(task.CheckChangedRows))),
		Ledger: []verify.LedgerCall{{Index: 2, Tool: "cancel_order", ErrorKind: "trap"}}}
	got, err := Attribute(context.Background(), in)
	if err != nil || got[0].Revise != "module:unknown/tool:cancel_order" {
		t.Fatalf("%v %+v", err, got)
	}
	in.Modules = map[string]string{"cancel_order": "payments"}
	got, err = Attribute(context.Background(), in)
	if err != nil || got[0].Revise != "module:payments/tool:cancel_order" {
		t.Fatalf("%v %+v", err, got)
	}
}

type brokenEvidence struct{ memEvidence }

func (brokenEvidence) Diff(context.Context, string, string) (*state.Changes, error) {
	return nil, errors.New("connection reset")
}

type unsupportedEvidence struct{ memEvidence }

func (unsupportedEvidence) Diff(context.Context, string, string) (*state.Changes, error) {
	return nil, errors.ErrUnsupported
}

func TestAttributeErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := Attribute(ctx, Input{Result: result()}); !errors.Is(err, ErrInput) {
		t.Errorf("no task: %v", err)
	}
	if _, err := Attribute(ctx, Input{Task: f.task}); !errors.Is(err, ErrInput) {
		t.Errorf("no result: %v", err)
	}
	if _, err := Attribute(ctx, Input{Task: f.task, Result: result(cp("a9"))}); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "a9") {
		t.Errorf("unknown checkpoint: %v", err)
	}
	// A passed unknown checkpoint is not looked at.
	if got, err := Attribute(ctx, Input{Task: f.task, Result: result(passed("a9"))}); err != nil || len(got) != 0 {
		t.Errorf("passed: %v %v", got, err)
	}
	in := Input{Task: f.task, Result: result(cp("a1", failed(task.CheckChangedRows, "orders[#W1].status=cancelled")))}
	in.Evidence = brokenEvidence{}
	if _, err := Attribute(ctx, in); err == nil || !strings.Contains(err.Error(), "connection reset") || !strings.Contains(err.Error(), "a1") {
		t.Errorf("broken evidence: %v", err)
	}
	in.Evidence = unsupportedEvidence{}
	if got, err := Attribute(ctx, in); err != nil || got[0].Class != ClassPolicy {
		t.Errorf("unsupported evidence: %v %+v", err, got)
	}
	cctx, cancelCtx := context.WithCancel(ctx)
	cancelCtx()
	if _, err := Attribute(cctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
}

func TestParseCell(t *testing.T) {
	for s, want := range map[string]cell{
		"orders[#W1].status=cancelled":   {"orders", "#W1", "status", "cancelled"},
		`orders[#W1].status="cancelled"`: {"orders", "#W1", "status", "cancelled"},
		"items[3,7].qty=2":               {"items", "3,7", "qty", "2"},
		"t[a].note=x=y":                  {"t", "a", "note", "x=y"},
	} {
		got, ok := parseCell(s)
		if !ok || got != want {
			t.Errorf("parseCell(%q) = %+v %v, want %+v", s, got, ok, want)
		}
	}
	for _, s := range []string{"cancel_order", "[x].a=b", "t[x]a=b", "t[x].=b"} {
		if _, ok := parseCell(s); ok {
			t.Errorf("parseCell(%q) ok", s)
		}
	}
	if !sameValue("20", int64(20)) || !sameValue("20.0", int64(20)) || !sameValue("null", nil) || sameValue("21", int64(20)) {
		t.Error("sameValue")
	}
}
