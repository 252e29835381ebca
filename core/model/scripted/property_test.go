package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/model"
	"pgregory.net/rapid"
)

// parse is a harness-side reading of one response back into a Step.
func parse(t *rapid.T, f model.Format, r *model.Response) Step {
	m := r.Message
	switch f {
	case model.FormatNative:
		if len(m.ToolCalls) == 0 {
			return Step{Say: m.Content}
		}
		c := m.ToolCalls[0]
		return Step{Tool: c.Function.Name, Arguments: json.RawMessage(c.Function.Arguments)}
	case model.FormatHermes:
		body, ok := strings.CutPrefix(m.Content, "<tool_call>\n")
		if !ok {
			return Step{Say: m.Content}
		}
		body, ok = strings.CutSuffix(body, "\n</tool_call>")
		if !ok {
			t.Fatalf("unterminated tool_call: %q", m.Content)
		}
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(body), &call); err != nil {
			t.Fatalf("hermes call %q: %v", body, err)
		}
		return Step{Tool: call.Name, Arguments: call.Arguments}
	default:
		_, action, ok := strings.Cut(m.Content, "\nAction:\n")
		if !ok || !strings.HasPrefix(m.Content, "Thought:\n") {
			t.Fatalf("not ReAct: %q", m.Content)
		}
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal([]byte(action), &call); err != nil {
			t.Fatalf("react action %q: %v", action, err)
		}
		if call.Name == "respond" {
			var a struct {
				Content string `json:"content"`
			}
			if err := json.Unmarshal(call.Arguments, &a); err != nil {
				t.Fatalf("respond arguments: %v", err)
			}
			return Step{Say: a.Content}
		}
		return Step{Tool: call.Name, Arguments: call.Arguments}
	}
}

func jsonValue(t *rapid.T, raw json.RawMessage) any {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return v
}

var argValue = rapid.OneOf(
	rapid.StringMatching(`[#A-Za-z0-9 _.@<>&"\\-]{0,12}`).AsAny(),
	rapid.IntRange(-1000, 100000).AsAny(),
	rapid.Bool().AsAny(),
	rapid.SliceOfN(rapid.StringMatching(`[0-9]{1,10}`), 0, 4).AsAny(),
)

var genStep = rapid.Custom(func(t *rapid.T) Step {
	if rapid.IntRange(0, 3).Draw(t, "kind") == 0 {
		return Step{Say: rapid.StringMatching(`[A-Za-z][A-Za-z0-9 ,.#"$]{0,40}`).Draw(t, "say")}
	}
	args := rapid.MapOfN(rapid.StringMatching(`[a-z_]{1,8}`), argValue, 0, 4).Draw(t, "args")
	b, _ := json.Marshal(args)
	return Step{Tool: rapid.SampledFrom([]string{"get_order_details", "cancel_pending_order", "calculate", "find_user_id_by_email"}).Draw(t, "tool"), Arguments: b}
})

// TestPropertyFaithfulReplay: with every fault rate 0, the responses, read
// back as a harness would, reproduce the script in order in every format.
func TestPropertyFaithfulReplay(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		steps := rapid.SliceOfN(genStep, 0, 8).Draw(t, "steps")
		f := rapid.SampledFrom([]model.Format{model.FormatNative, model.FormatHermes, model.FormatReAct}).Draw(t, "format")
		seed := rapid.Uint64().Draw(t, "seed")
		p, err := New(Script{Steps: steps}, Faults{}, seed)
		if err != nil {
			t.Fatal(err)
		}
		msgs := []model.Message{{Role: model.RoleUser, Content: "hello"}}
		for i, want := range steps {
			r, err := p.Generate(context.Background(), &model.Request{Messages: msgs, Format: f})
			if err != nil {
				t.Fatal(err)
			}
			got := parse(t, f, r)
			if got.Tool != want.Tool || got.Say != want.Say {
				t.Fatalf("turn %d: got %+v, want %+v", i, got, want)
			}
			if want.Tool != "" && !reflect.DeepEqual(jsonValue(t, got.Arguments), jsonValue(t, want.Arguments)) {
				t.Fatalf("turn %d: arguments %s, want %s", i, got.Arguments, want.Arguments)
			}
			msgs = append(msgs, r.Message, model.Message{Role: model.RoleTool, Content: fmt.Sprint(i)})
		}
	})
}
