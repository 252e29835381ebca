package scripted

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
)

// TestScriptForTurnConcatenates: on the converted retail tasks that have
// atomic tasks, under both views, the per-turn scripts concatenate to ScriptForView's; under the
// simuser view turn k is atomic task k's reference calls then one Say
// (IntermediateSay except on the last turn).
func TestScriptForTurnConcatenates(t *testing.T) {
	_, conv := convertedRetail(t)
	multi := 0
	for _, ct := range conv {
		n := len(ct.Atomic)
		if n == 0 {
			continue // no turns: nothing to split (ScriptForTurn has no turn 0)
		}
		if n > 1 {
			multi++
		}
		for _, view := range []string{task.ViewSimUser, task.ViewAgentic} {
			full, err := ScriptForView(ct, view)
			if err != nil {
				t.Fatal(err)
			}
			var cat []Step
			for k := 0; k < n; k++ {
				s, err := ScriptForTurn(ct, view, k)
				if err != nil {
					t.Fatalf("task %s %s turn %d: %v", ct.ID, view, k, err)
				}
				if view == task.ViewSimUser {
					a := ct.Atomic[ct.Order()[k]]
					if len(s.Steps) != len(a.Reference)+1 {
						t.Fatalf("task %s turn %d: %d steps, want %d reference calls + 1 say", ct.ID, k, len(s.Steps), len(a.Reference))
					}
					for i, c := range a.Reference {
						if s.Steps[i].Tool != c.Tool {
							t.Errorf("task %s turn %d step %d: tool %q, want %q", ct.ID, k, i, s.Steps[i].Tool, c.Tool)
						}
					}
					last := s.Steps[len(s.Steps)-1]
					if k < n-1 && last.Say != IntermediateSay {
						t.Errorf("task %s turn %d ends with %q, want IntermediateSay", ct.ID, k, last.Say)
					}
					if k == n-1 && last.Say != full.Steps[len(full.Steps)-1].Say {
						t.Errorf("task %s last turn ends with %q, want the closing say", ct.ID, last.Say)
					}
				} else if k > 0 && len(s.Steps) != 0 {
					t.Errorf("task %s agentic turn %d has %d steps, want none", ct.ID, k, len(s.Steps))
				}
				cat = append(cat, s.Steps...)
			}
			if d := cmp.Diff(normalize(full), normalize(Script{Steps: cat})); d != "" {
				t.Errorf("task %s %s: concatenated turns differ from ScriptForView (-full +cat):\n%s", ct.ID, view, d)
			}
		}
	}
	if multi == 0 {
		t.Fatal("no retail task has more than one atomic task: the test checks nothing of the split")
	}
}

// TestScriptForTurnShape: the hand-made two-task DAG of
// TestScriptForViewSimUserShape split into its turns.
func TestScriptForTurnShape(t *testing.T) {
	call := func(tool, args string) task.Call { return task.Call{Tool: tool, Arguments: json.RawMessage(args)} }
	tk := &task.Task{ID: "t", Brief: "b",
		Atomic: []task.Atomic{
			{ID: "a1", Request: "r1", Reference: []task.Call{call("get_order_details", `{"order_id":"#W1"}`), call("cancel_pending_order", `{"order_id":"#W1"}`)}},
			{ID: "a2", Request: "r2", After: []string{"a1"}, Reference: []task.Call{call("cancel_pending_order", `{"order_id":"#W2"}`)}},
		},
		Checks: []task.Check{{Kind: task.CheckCommunicate, Text: "7.50"}},
	}
	flat := func(s Script) []string {
		var out []string
		for _, st := range s.Steps {
			if st.Tool != "" {
				out = append(out, st.Tool+string(st.Arguments))
			} else {
				out = append(out, "say:"+st.Say)
			}
		}
		return out
	}
	want := [][]string{
		{`get_order_details{"order_id":"#W1"}`, `cancel_pending_order{"order_id":"#W1"}`, "say:" + IntermediateSay},
		{`cancel_pending_order{"order_id":"#W2"}`, "say:Done. Here is what you asked about: 7.50. Is there anything else I can help you with?"},
	}
	for k := range want {
		s, err := ScriptForTurn(tk, task.ViewSimUser, k)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want[k], flat(s)); d != "" {
			t.Errorf("turn %d (-want +got):\n%s", k, d)
		}
	}
	ag, err := ScriptForTurn(tk, task.ViewAgentic, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := flat(ag); len(got) != 4 || got[3] != want[1][1] {
		t.Errorf("agentic turn 0 = %q, want the 3 calls and the closing say", got)
	}
}

func TestScriptForTurnErrors(t *testing.T) {
	tk := &task.Task{ID: "two", Brief: "b", Atomic: []task.Atomic{
		{ID: "a1", Request: "r1", Reference: []task.Call{{Tool: "x"}}},
		{ID: "a2", Request: "r2", Reference: []task.Call{{Tool: "y"}}},
	}}
	for _, k := range []int{-1, 2, 9} {
		_, err := ScriptForTurn(tk, task.ViewSimUser, k)
		if err == nil || !strings.Contains(err.Error(), "turn "+strconv.Itoa(k)+" of task two") || !strings.Contains(err.Error(), "2 atomic tasks") {
			t.Errorf("turn %d: error %v, want one naming the turn, the task and its 2 atomic tasks", k, err)
		}
	}
	if _, err := ScriptForTurn(tk, "oracle", 0); !errors.Is(err, task.ErrUnknownView) {
		t.Errorf("unknown view: %v", err)
	}
	if _, err := ScriptForTurn(nil, task.ViewSimUser, 0); err == nil {
		t.Error("nil task: no error")
	}
	if _, err := ScriptForTurn(&task.Task{ID: "e", Brief: "b"}, task.ViewSimUser, 0); err == nil {
		t.Error("a task without atomic tasks has no turn 0, got no error")
	}
}

// recorder is a policy that records the requests it gets.
type recorder struct{ got []*model.Request }

func (r *recorder) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	r.got = append(r.got, req)
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}}, nil
}

func TestOffset(t *testing.T) {
	ctx := context.Background()
	// A scripted policy offset by the 2 assistant messages of an earlier
	// turn answers with its first step, then its second.
	p := mustNew(t, three, Faults{}, 0)
	off := Offset(p, 2)
	for k, want := range []string{"get_order_details", "cancel_pending_order"} {
		r, err := off.Generate(ctx, &model.Request{Messages: history(2 + k), Format: model.FormatNative})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Function.Name != want {
			t.Errorf("after %d+%d assistant messages: %+v, want a call of %s", 2, k, r.Message, want)
		}
	}
	r, err := off.Generate(ctx, &model.Request{Messages: history(4), Format: model.FormatNative})
	if err != nil || r.Message.Content != "Done." {
		t.Errorf("third step: %+v, %v; want the say", r, err)
	}
	// Fewer assistant messages than the offset: the policy sees none.
	r, err = off.Generate(ctx, &model.Request{Messages: history(1), Format: model.FormatNative})
	if err != nil || len(r.Message.ToolCalls) != 1 || r.Message.ToolCalls[0].Function.Name != "get_order_details" {
		t.Errorf("short history: %+v, %v", r, err)
	}

	// Exactly the first n assistant messages are dropped; the request
	// passed in is not modified.
	rec := &recorder{}
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "s"}, {Role: model.RoleUser, Content: "u1"},
		{Role: model.RoleAssistant, Content: "a1"}, {Role: model.RoleTool, Content: "t1"},
		{Role: model.RoleAssistant, Content: "a2"}, {Role: model.RoleUser, Content: "u2"},
		{Role: model.RoleAssistant, Content: "a3"}, {Role: model.RoleTool, Content: "t3"},
	}
	req := &model.Request{Messages: append([]model.Message(nil), msgs...), Format: model.FormatHermes, EpisodeID: "e"}
	if _, err := Offset(rec, 2).Generate(ctx, req); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range rec.got[0].Messages {
		got = append(got, m.Content)
	}
	if d := cmp.Diff([]string{"s", "u1", "t1", "u2", "a3", "t3"}, got); d != "" {
		t.Errorf("messages the policy saw (-want +got):\n%s", d)
	}
	if rec.got[0].Format != model.FormatHermes || rec.got[0].EpisodeID != "e" {
		t.Errorf("request fields not kept: %+v", rec.got[0])
	}
	if d := cmp.Diff(msgs, req.Messages); d != "" {
		t.Errorf("the caller's request was modified:\n%s", d)
	}
	if Offset(p, 0) != model.Policy(p) || Offset(p, -3) != model.Policy(p) {
		t.Error("Offset(p, n <= 0) is not p")
	}
	if _, err := Offset(nil, 1).Generate(ctx, req); err == nil {
		t.Error("nil policy: no error")
	}
}
