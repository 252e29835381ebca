package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// three is the 3-step script of the fault table.
var three = Script{Steps: []Step{
	{Tool: "get_order_details", Arguments: raw(`{"order_id":"#W2378156"}`)},
	{Tool: "cancel_pending_order", Arguments: raw(`{"order_id":"#W2378156","reason":"no longer needed"}`)},
	{Say: "Done."},
}}

var (
	s0 = PlannedStep{Step: three.Steps[0], Ref: 0}
	s1 = PlannedStep{Step: three.Steps[1], Ref: 1}
	s2 = PlannedStep{Step: three.Steps[2], Ref: 2}
)

func mustNew(t *testing.T, s Script, f Faults, seed uint64) *Policy {
	t.Helper()
	p, err := New(s, f, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cmpPlan compares plans with arguments as JSON text.
var cmpRaw = cmp.Comparer(func(a, b json.RawMessage) bool { return string(a) == string(b) })

func retail(t *testing.T) []*task.Tau2Task {
	t.Helper()
	tasks, err := task.LoadTau2File("../../../examples/data/tau2-retail/tasks.json")
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func TestScriptFromTau2(t *testing.T) {
	tasks := retail(t)
	s := ScriptFromTau2(tasks[0])
	if len(s.Steps) != 6 || s.Steps[0].Tool != "find_user_id_by_name_zip" || s.Steps[4].Tool != "exchange_delivered_order_items" {
		t.Fatalf("task 0 script = %+v", s)
	}
	if got := compact(s.Steps[1].Arguments); got != `{"order_id":"#W2378156"}` {
		t.Errorf("step 1 arguments = %s", got)
	}
	if got, want := s.Steps[5].Say, "Done. Is there anything else I can help you with?"; got != want {
		t.Errorf("final say = %q, want %q", got, want)
	}
	for _, x := range tasks {
		if x.ID != "19" {
			continue
		}
		say := ScriptFromTau2(x).Steps[len(x.Actions)].Say
		if want := "Done. Here is what you asked about: 54.04; 41.64. Is there anything else I can help you with?"; say != want {
			t.Errorf("task 19 say = %q, want %q", say, want)
		}
	}
}

func TestZeroFaultsPlanIsScript(t *testing.T) {
	for _, x := range retail(t) {
		s := ScriptFromTau2(x)
		for _, seed := range []uint64{0, 1, 99} {
			p := mustNew(t, s, Faults{}, seed)
			var want []PlannedStep
			for i, st := range s.Steps {
				want = append(want, PlannedStep{Step: st, Ref: i})
			}
			if diff := cmp.Diff(want, p.Plan(), cmpRaw); diff != "" {
				t.Fatalf("task %s seed %d (-want +got):\n%s", x.ID, seed, diff)
			}
			if len(p.Skipped()) != 0 {
				t.Fatalf("task %s: skipped %v", x.ID, p.Skipped())
			}
		}
	}
}

func TestFaultEffects(t *testing.T) {
	tests := []struct {
		name    string
		faults  Faults
		plan    []PlannedStep
		skipped []int
	}{
		{"wrong argument", Faults{WrongArgument: 1}, []PlannedStep{
			{Step: Step{Tool: "get_order_details", Arguments: raw(`{"order_id":"#W2378256"}`)}, Fault: FaultWrongArgument, Ref: 0},
			{Step: Step{Tool: "cancel_pending_order", Arguments: raw(`{"order_id":"#W2378156","reason":"no lonner needed"}`)}, Fault: FaultWrongArgument, Ref: 1},
			s2,
		}, nil},
		{"skip step", Faults{SkipStep: 1}, []PlannedStep{s2}, []int{0, 1}},
		{"extra call", Faults{ExtraCall: 1}, []PlannedStep{
			s0,
			{Step: three.Steps[0], Fault: FaultExtraCall, Ref: -1},
			s1,
			{Step: three.Steps[0], Fault: FaultExtraCall, Ref: -1}, // the earlier lookup, repeated
			s2,
		}, nil},
		{"hallucinated tool", Faults{HallucinatedTool: 1}, []PlannedStep{
			{Step: Step{Tool: "update_order", Arguments: three.Steps[0].Arguments}, Fault: FaultHallucinatedTool, Ref: -1},
			s0,
			{Step: Step{Tool: "check_refund_status", Arguments: three.Steps[1].Arguments}, Fault: FaultHallucinatedTool, Ref: -1},
			s1,
			{Step: Step{Tool: "update_order", Arguments: raw(`{}`)}, Fault: FaultHallucinatedTool, Ref: -1},
			s2,
		}, nil},
		{"malformed call", Faults{MalformedCall: 1}, []PlannedStep{
			{Step: three.Steps[0], Fault: FaultMalformedCall, Ref: -1}, s0,
			{Step: three.Steps[1], Fault: FaultMalformedCall, Ref: -1}, s1,
			s2,
		}, nil},
		{"early stop", Faults{EarlyStop: 1}, []PlannedStep{
			{Step: Step{Say: EarlyStopSay}, Fault: FaultEarlyStop, Ref: -1},
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := mustNew(t, three, tc.faults, 1)
			if diff := cmp.Diff(tc.plan, p.Plan(), cmpRaw); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.skipped, p.Skipped()); diff != "" {
				t.Errorf("skipped (-want +got):\n%s", diff)
			}
		})
	}
}

// An extra call after a write with no earlier lookup repeats the write.
func TestExtraCallRepeatsWrite(t *testing.T) {
	s := Script{Steps: []Step{{Tool: "cancel_pending_order", Arguments: raw(`{"order_id":"#W1"}`)}}}
	p := mustNew(t, s, Faults{ExtraCall: 1}, 5)
	want := []PlannedStep{{Step: s.Steps[0], Ref: 0}, {Step: s.Steps[0], Fault: FaultExtraCall, Ref: -1}}
	if diff := cmp.Diff(want, p.Plan(), cmpRaw); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestWrongValues(t *testing.T) {
	p := mustNew(t, Script{Steps: []Step{
		{Tool: "calculate", Arguments: raw(`{"n":41,"x":2.5,"ok":true,"empty":null}`)},
		{Tool: "return_delivered_order_items", Arguments: raw(`{"item_ids":["1151293680","4983901480"]}`)},
		{Tool: "find_user_id_by_email", Arguments: raw(`{"email":"yusuf.rossi@example.com"}`)},
	}}, Faults{WrongArgument: 1}, 3)
	var got []string
	for _, e := range p.Plan() {
		got = append(got, string(e.Step.Arguments))
	}
	want := []string{
		`{"n":41,"x":2.5,"ok":false,"empty":null}`,
		`{"item_ids":["1151293380","4983901480"]}`,
		`{"email":"yusut.rossi@example.com"}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func summary(p *Policy) string {
	var b strings.Builder
	for _, e := range p.Plan() {
		name := e.Step.Tool
		if name == "" {
			name = "say"
		}
		fmt.Fprintf(&b, "%s/%s/%d ", name, e.Fault, e.Ref)
	}
	fmt.Fprintf(&b, "skipped=%v", p.Skipped())
	return b.String()
}

func TestSeeds(t *testing.T) {
	s := ScriptFromTau2(retail(t)[0])
	half := Faults{WrongArgument: .5, SkipStep: .5, ExtraCall: .5, HallucinatedTool: .5, MalformedCall: .5}
	a, b := mustNew(t, s, half, 1), mustNew(t, s, half, 1)
	if diff := cmp.Diff(a.Plan(), b.Plan(), cmpRaw); diff != "" {
		t.Errorf("same seed, different plans:\n%s", diff)
	}
	const want1 = "update_order/hallucinated_tool/-1 find_user_id_by_name_zip/malformed_call/-1 find_user_id_by_name_zip//0 find_user_id_by_name_zip/extra_call/-1 say//5 skipped=[1 2 3 4]"
	const want2 = "check_refund_status/hallucinated_tool/-1 get_product_details/malformed_call/-1 get_product_details//2 get_product_details/extra_call/-1 check_refund_status/hallucinated_tool/-1 exchange_delivered_order_items/malformed_call/-1 exchange_delivered_order_items//4 check_refund_status/hallucinated_tool/-1 say//5 skipped=[0 1 3]"
	if got := summary(a); got != want1 {
		t.Errorf("seed 1 plan:\n%s\nwant\n%s", got, want1)
	}
	if got := summary(mustNew(t, s, half, 2)); got != want2 {
		t.Errorf("seed 2 plan:\n%s\nwant\n%s", got, want2)
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		name   string
		script Script
		faults Faults
		want   string
	}{
		{"rate above 1", three, Faults{SkipStep: 1.5}, "scripted: fault rate SkipStep = 1.5, want a probability in [0, 1]"},
		{"negative rate", three, Faults{EarlyStop: -0.1}, "scripted: fault rate EarlyStop = -0.1, want a probability in [0, 1]"},
		{"empty step", Script{Steps: []Step{{}}}, Faults{}, "scripted: step 0: neither a tool call nor a Say"},
		{"both", Script{Steps: []Step{{Tool: "a", Say: "b"}}}, Faults{}, "scripted: step 0: both a tool call (a) and a Say"},
		{"args not object", Script{Steps: []Step{{Tool: "a", Arguments: raw(`[1]`)}}}, Faults{}, "scripted: step 0 (a): arguments are not a JSON object"},
	}
	for _, tc := range tests {
		if _, err := New(tc.script, tc.faults, 0); err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Empty Arguments on a tool step mean {}.
	p := mustNew(t, Script{Steps: []Step{{Tool: "list_all_product_types"}}}, Faults{}, 0)
	if got := string(p.Plan()[0].Step.Arguments); got != "{}" {
		t.Errorf("arguments = %s, want {}", got)
	}
}

// history makes a conversation with n assistant turns.
func history(n int) []model.Message {
	msgs := []model.Message{{Role: model.RoleSystem, Content: "policy"}, {Role: model.RoleUser, Content: "hi there"}}
	for i := 0; i < n; i++ {
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: "x"}, model.Message{Role: model.RoleTool, Content: "{}"})
	}
	return msgs
}

func gen(t *testing.T, p *Policy, f model.Format, n int) *model.Response {
	t.Helper()
	r, err := p.Generate(context.Background(), &model.Request{Messages: history(n), Format: f})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRender(t *testing.T) {
	p := mustNew(t, Script{Steps: []Step{
		{Tool: "get_order_details", Arguments: raw(`{"order_id": "#W1", "ids": ["a", "<b>"]}`)},
		{Say: `Your order "#W1" is pending.`},
	}}, Faults{MalformedCall: 1}, 0)
	// Plan: malformed call, the call, the say.
	type out struct {
		Content, Finish, ID, Name, Args string
	}
	flat := func(r *model.Response) out {
		o := out{Content: r.Message.Content, Finish: r.FinishReason}
		if r.Model != "scripted" || r.Message.Role != model.RoleAssistant {
			t.Errorf("model %q role %q", r.Model, r.Message.Role)
		}
		if len(r.Message.ToolCalls) == 1 {
			c := r.Message.ToolCalls[0]
			if c.Type != "function" {
				t.Errorf("type %q", c.Type)
			}
			o.ID, o.Name, o.Args = c.ID, c.Function.Name, c.Function.Arguments
		}
		return o
	}
	tests := []struct {
		format model.Format
		want   [3]out
	}{
		{model.FormatNative, [3]out{
			{Finish: "tool_calls", ID: "call_0", Name: "get_order_details", Args: `{"order_id":"#W1","ids":["a","<b>"]`},
			{Finish: "tool_calls", ID: "call_1", Name: "get_order_details", Args: `{"order_id":"#W1","ids":["a","<b>"]}`},
			{Finish: "stop", Content: `Your order "#W1" is pending.`},
		}},
		{model.FormatHermes, [3]out{
			{Finish: "stop", Content: "<tool_call>\n{\"name\": \"get_order_details\", \"arguments\": {\"order_id\": \"#W1\", \"ids\": [\"a\", \"<b>\"]}\n</tool_call>"},
			{Finish: "stop", Content: "<tool_call>\n{\"name\": \"get_order_details\", \"arguments\": {\"order_id\": \"#W1\", \"ids\": [\"a\", \"<b>\"]}}\n</tool_call>"},
			{Finish: "stop", Content: `Your order "#W1" is pending.`},
		}},
		{model.FormatReAct, [3]out{
			{Finish: "stop", Content: "Thought:\nI should call get_order_details next.\nAction:\nget_order_details(order_id=\"#W1\", ids=[\"a\", \"<b>\"])"},
			{Finish: "stop", Content: "Thought:\nI should call get_order_details next.\nAction:\n{\"name\": \"get_order_details\", \"arguments\": {\"order_id\": \"#W1\", \"ids\": [\"a\", \"<b>\"]}}"},
			{Finish: "stop", Content: "Thought:\nI should reply to the user now.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\": \"Your order \\\"#W1\\\" is pending.\"}}"},
		}},
	}
	for _, tc := range tests {
		for k := 0; k < 3; k++ {
			if diff := cmp.Diff(tc.want[k], flat(gen(t, p, tc.format, k))); diff != "" {
				t.Errorf("%v turn %d (-want +got):\n%s", tc.format, k, diff)
			}
		}
	}
}

func TestPlanIndexFromHistory(t *testing.T) {
	p := mustNew(t, three, Faults{}, 0)
	for k, want := range []string{"get_order_details", "cancel_pending_order", "", "", ""} {
		r := gen(t, p, model.FormatNative, k)
		got := ""
		if len(r.Message.ToolCalls) > 0 {
			got = r.Message.ToolCalls[0].Function.Name
		} else if r.Message.Content != "Done." {
			t.Errorf("turn %d content %q, want the final say", k, r.Message.Content)
		}
		if got != want {
			t.Errorf("turn %d: tool %q, want %q", k, got, want)
		}
	}
	// Usage: words of the prompt (system 1 + user 2 + 2 per turn) and of the completion.
	r := gen(t, p, model.FormatNative, 2)
	if r.Usage != (model.Usage{PromptTokens: 7, CompletionTokens: 1}) {
		t.Errorf("usage = %+v", r.Usage)
	}
	// A plan that ends with a call closes with ClosingSay; an empty plan too.
	for _, s := range []Script{{Steps: three.Steps[:1]}, {}} {
		p := mustNew(t, s, Faults{}, 0)
		if r := gen(t, p, model.FormatNative, 1); r.Message.Content != ClosingSay {
			t.Errorf("past the end: %q", r.Message.Content)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	p := mustNew(t, three, Faults{}, 0)
	for _, f := range []model.Format{0, 7} {
		_, err := p.Generate(context.Background(), &model.Request{Format: f})
		if !errors.Is(err, ErrFormat) {
			t.Errorf("format %d: err = %v, want ErrFormat", f, err)
		}
	}
	if _, err := p.Generate(context.Background(), nil); err == nil {
		t.Error("nil request accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Generate(ctx, &model.Request{Format: model.FormatNative}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestConcurrentGenerate(t *testing.T) {
	p := mustNew(t, ScriptFromTau2(retail(t)[0]), Faults{WrongArgument: .3, ExtraCall: .3}, 9)
	plan := p.Plan()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range plan {
				r, err := p.Generate(context.Background(), &model.Request{Messages: history(k), Format: model.FormatNative})
				if err != nil {
					t.Error(err)
					return
				}
				if plan[k].Step.Tool != "" && r.Message.ToolCalls[0].Function.Name != plan[k].Step.Tool {
					t.Errorf("turn %d: %s", k, r.Message.ToolCalls[0].Function.Name)
				}
			}
		}()
	}
	wg.Wait()
}

// TestFaultsRecordPlan: every planted fault is recorded once, at the plan
// entry that carries it (or, for a dropped step, at the turn it would have
// had), with the script step and atomic task it hits; a plan without
// faults records none.
func TestFaultsRecordPlan(t *testing.T) {
	tk := &task.Task{ID: "t", Brief: "b", Atomic: []task.Atomic{
		{ID: "a1", Request: "r1", Reference: []task.Call{
			{Tool: "get_order_details", Arguments: json.RawMessage(`{"order_id":"#W1"}`)},
			{Tool: "cancel_pending_order", Arguments: json.RawMessage(`{"order_id":"#W1","reason":"no longer needed"}`)}}},
		{ID: "a2", Request: "r2", Reference: []task.Call{
			{Tool: "get_user_details", Arguments: json.RawMessage(`{"user_id":"u1"}`)},
			{Tool: "modify_user_address", Arguments: json.RawMessage(`{"user_id":"u1","zip":"10001"}`)}}},
	}}
	sc, err := ScriptForView(tk, task.ViewAgentic)
	if err != nil {
		t.Fatal(err)
	}
	if f := mustNew(t, sc, Faults{}, 1).Faults(); f != nil {
		t.Fatalf("no fault rates, faults %+v", f)
	}
	kinds := map[string]int{}
	for seed := uint64(0); seed < 200; seed++ {
		p := mustNew(t, sc, Faults{WrongArgument: .3, SkipStep: .2, ExtraCall: .3, HallucinatedTool: .2, MalformedCall: .2}, seed)
		plan, faults := p.Plan(), p.Faults()
		inPlan := 0
		for _, e := range plan {
			if e.Fault != "" {
				inPlan++
			}
		}
		if want := inPlan + len(p.Skipped()); len(faults) != want {
			t.Fatalf("seed %d: %d faults recorded, plan has %d", seed, len(faults), want)
		}
		for _, f := range faults {
			kinds[f.Kind]++
			if f.Step < 0 || f.Step >= len(sc.Steps) || f.Atomic != sc.Steps[f.Step].Atomic {
				t.Fatalf("seed %d: fault %+v: step/atomic do not name a script step", seed, f)
			}
			if f.Kind == FaultSkipStep {
				if !slices.Contains(p.Skipped(), f.Step) || f.Tool != sc.Steps[f.Step].Tool {
					t.Errorf("seed %d: skip %+v not in Skipped %v", seed, f, p.Skipped())
				}
				if f.Turn < len(plan) && plan[f.Turn].Ref >= 0 && plan[f.Turn].Ref <= f.Step {
					t.Errorf("seed %d: skip of step %d at turn %d, which plays step %d", seed, f.Step, f.Turn, plan[f.Turn].Ref)
				}
				continue
			}
			e := plan[f.Turn]
			if e.Fault != f.Kind || e.Step.Tool != f.Tool || string(e.Step.Arguments) != string(f.Arguments) {
				t.Errorf("seed %d: fault %+v, plan entry %d is %+v", seed, f, f.Turn, e)
			}
			switch f.Kind {
			case FaultWrongArgument:
				if e.Ref != f.Step || string(f.Want) != string(sc.Steps[f.Step].Arguments) || string(f.Want) == string(f.Arguments) {
					t.Errorf("seed %d: wrong argument %+v (script %s)", seed, f, sc.Steps[f.Step].Arguments)
				}
			case FaultExtraCall:
				if sc.Steps[f.Of].Tool != f.Tool || f.OfAtomic != sc.Steps[f.Of].Atomic || f.Of > f.Step {
					t.Errorf("seed %d: extra call %+v copies step %d (%s)", seed, f, f.Of, sc.Steps[f.Of].Tool)
				}
			}
		}
	}
	for _, k := range []string{FaultWrongArgument, FaultSkipStep, FaultExtraCall, FaultHallucinatedTool, FaultMalformedCall} {
		if kinds[k] == 0 {
			t.Errorf("no %s fault in 200 seeds: %v", k, kinds)
		}
	}
}
