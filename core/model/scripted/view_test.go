package scripted

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/task"
)

// convertedRetail returns the raw tau2-retail tasks and their conversion:
// tasks.weft.json, the committed output of task.ConvertTau2File over them
// with the retail module's read-only tools (core/task checks it is not
// stale), in the same order.
func convertedRetail(t *testing.T) ([]*task.Tau2Task, []*task.Task) {
	t.Helper()
	raw := retail(t)
	conv, err := task.LoadFile("../../../examples/data/tau2-retail/tasks.weft.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(conv) != len(raw) {
		t.Fatalf("%d converted tasks, %d raw", len(conv), len(raw))
	}
	for i := range raw {
		if conv[i].ID != raw[i].ID {
			t.Fatalf("converted task %d is %q, raw %q", i, conv[i].ID, raw[i].ID)
		}
	}
	return raw, conv
}

// normalize compacts every tool step's arguments and drops its atomic id
// (a tau2 script has none).
func normalize(s Script) []Step {
	out := make([]Step, len(s.Steps))
	for i, st := range s.Steps {
		st.Atomic = ""
		if st.Tool != "" {
			st.Arguments = json.RawMessage(compact(st.Arguments))
		}
		out[i] = st
	}
	return out
}

func toolSteps(s Script) []Step {
	var out []Step
	for _, st := range s.Steps {
		if st.Tool != "" {
			st.Arguments = json.RawMessage(compact(st.Arguments))
			st.Atomic = ""
			out = append(out, st)
		}
	}
	return out
}

// TestScriptForViewRetail: on all 114 converted retail tasks the agentic
// script is ScriptFromTau2's (tool steps and closing Say), and the simuser
// script has the same tool steps with one Say per atomic task. The
// exception is a task whose every gold action fails in the benchmark's code
// (task 105's exchange): its conversion keeps no atomic task and no
// reference call, so both views' scripts are the closing Say alone.
func TestScriptForViewRetail(t *testing.T) {
	raw, conv := convertedRetail(t)
	if len(conv) != 114 {
		t.Fatalf("%d tasks", len(conv))
	}
	allFailed := 0
	for i, ct := range conv {
		gold := ScriptFromTau2(raw[i])
		failed, err := task.FailedActions(ct)
		if err != nil {
			t.Fatal(err)
		}
		if len(ct.Atomic) == 0 && len(raw[i].Actions) > 0 {
			if len(failed) != len(raw[i].Actions) {
				t.Errorf("task %s: no atomic task, %d gold actions, %d failed", ct.ID, len(raw[i].Actions), len(failed))
			}
			gold.Steps = gold.Steps[len(gold.Steps)-1:]
			allFailed++
		}
		ag, err := ScriptForView(ct, task.ViewAgentic)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(toolSteps(gold), toolSteps(ag), cmpRaw); d != "" {
			t.Errorf("task %s agentic tool steps (-tau2 +view):\n%s", ct.ID, d)
		}
		if d := cmp.Diff(normalize(gold), normalize(ag), cmpRaw); d != "" {
			t.Errorf("task %s agentic script (-tau2 +view):\n%s", ct.ID, d)
		}
		sim, err := ScriptForView(ct, task.ViewSimUser)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(toolSteps(gold), toolSteps(sim), cmpRaw); d != "" {
			t.Errorf("task %s simuser tool steps (-tau2 +view):\n%s", ct.ID, d)
		}
		says := len(sim.Steps) - len(toolSteps(sim))
		if want := max(len(ct.Atomic), 1); says != want {
			t.Errorf("task %s: %d Says in the simuser script, want %d", ct.ID, says, want)
		}
		if sim.Steps[len(sim.Steps)-1].Say != gold.Steps[len(gold.Steps)-1].Say {
			t.Errorf("task %s: simuser closing %q", ct.ID, sim.Steps[len(sim.Steps)-1].Say)
		}
		if _, err := New(sim, Faults{}, 1); err != nil {
			t.Errorf("task %s: simuser script rejected: %v", ct.ID, err)
		}
	}
	if allFailed != 1 {
		t.Errorf("%d tasks whose every gold action failed, want 1 (task 105)", allFailed)
	}
}

func TestScriptForViewSimUserShape(t *testing.T) {
	call := func(tool, args string) task.Call { return task.Call{Tool: tool, Arguments: json.RawMessage(args)} }
	tk := &task.Task{ID: "t", Brief: "b",
		Atomic: []task.Atomic{
			{ID: "a2", Request: "r2", After: []string{"a1"}, Reference: []task.Call{call("cancel_pending_order", `{"order_id":"#W2"}`)}},
			{ID: "a1", Request: "r1", Reference: []task.Call{call("get_order_details", `{"order_id":"#W1"}`), call("cancel_pending_order", `{"order_id":"#W1"}`)}},
		},
		Checks: []task.Check{{Kind: task.CheckStateEqual}, {Kind: task.CheckCommunicate, Text: "7.50"}, {Kind: task.CheckCommunicate, Text: "blue"}},
	}
	// a2 is listed first but comes after a1: Validate wants a topological
	// listing, so list them in order and check the DAG order is used.
	tk.Atomic[0], tk.Atomic[1] = tk.Atomic[1], tk.Atomic[0]
	s, err := ScriptForView(tk, task.ViewSimUser)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Steps {
		if st.Tool != "" {
			got = append(got, st.Atomic+":"+st.Tool+string(st.Arguments))
		} else {
			got = append(got, "say:"+st.Say)
		}
	}
	want := []string{
		`a1:get_order_details{"order_id":"#W1"}`, `a1:cancel_pending_order{"order_id":"#W1"}`, "say:" + IntermediateSay,
		`a2:cancel_pending_order{"order_id":"#W2"}`,
		"say:Done. Here is what you asked about: 7.50; blue. Is there anything else I can help you with?",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("simuser script (-want +got):\n%s", d)
	}
	ag, err := ScriptForView(tk, task.ViewAgentic)
	if err != nil {
		t.Fatal(err)
	}
	if len(ag.Steps) != 4 || ag.Steps[3].Say != strings.TrimPrefix(want[4], "say:") {
		t.Errorf("agentic = %+v", ag.Steps)
	}
	empty, err := ScriptForView(&task.Task{ID: "e", Brief: "b"}, task.ViewSimUser)
	if err != nil || len(empty.Steps) != 1 || empty.Steps[0].Say != "Done. Is there anything else I can help you with?" {
		t.Errorf("empty = %+v, %v", empty, err)
	}
}

func TestScriptForViewErrors(t *testing.T) {
	if _, err := ScriptForView(&task.Task{ID: "e", Brief: "b"}, "oracle"); !errors.Is(err, task.ErrUnknownView) {
		t.Errorf("unknown view: %v", err)
	}
	if _, err := ScriptForView(nil, task.ViewAgentic); err == nil {
		t.Error("nil task: no error")
	}
	var te *task.Error
	if _, err := ScriptForView(&task.Task{ID: "e"}, task.ViewAgentic); !errors.As(err, &te) || te.Field != "brief" {
		t.Errorf("invalid task: %v", err)
	}
}
