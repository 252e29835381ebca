package hermes

import (
	"context"
	"encoding/json"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/conformance"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite testdata/episode.txtar")

var script = conformance.Script{
	Feedback:     "could not be parsed",
	CallGetOrder: "<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\n</tool_call>",
	CallUnknown:  "<tool_call>\n{\"name\": \"no_such_tool\", \"arguments\": {}}\n</tool_call>",
	Respond:      "All done.",
	Garbage:      "<tool_call>\nget_order(A1)\n</tool_call>",
}

// TestConformance runs the public conformance suite in process: its
// checks, the scripted cases of script and the resume cases of
// resumeScript.
func TestConformance(t *testing.T) {
	conformance.Run(t, New(), conformance.Options{Script: &script, Resume: &resumeScript})
}

var replies = []any{
	"<think>\nI should look the order up and cancel it.\n</think>\nLet me check.\n<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"cancel_order\", \"arguments\": \"{\\\"order_id\\\": \\\"A1\\\"}\"}\n</tool_call>",
	"<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": }}",
	"<think>The order is cancelled.</think>\n\nOrder A1 is cancelled.",
}

func episode(t *testing.T) (*plugin.RunEpisodeResponse, *plugintest.FakeEnv) {
	model := plugintest.NewFakeModel(replies...)
	env := plugintest.NewOrderEnv()
	user := plugintest.NewFakeUser("Please cancel order A1.")
	return plugintest.Episode(t, New(), plugintest.Host(model, env, user), nil), env
}

func TestEpisode(t *testing.T) {
	resp, env := episode(t)
	tr := resp.Trajectory
	if resp.Failure != nil || tr.Termination != "done" || tr.ToolCalls != 3 || tr.FormatErrors != 1 {
		t.Fatalf("failure %v termination %q tool calls %d format errors %d", resp.Failure, tr.Termination, tr.ToolCalls, tr.FormatErrors)
	}
	wantCalls := []*plugin.CallToolRequest{
		{Name: "get_order", Arguments: `{"order_id":"A1"}`, CallId: "call_0_0"},
		{Name: "cancel_order", Arguments: `{"order_id":"A1"}`, CallId: "call_0_1"},
		{Name: "get_order", Arguments: `{"order_id":"A1"}`, CallId: "call_1_0"},
	}
	if len(env.Calls()) != len(wantCalls) {
		t.Fatalf("env calls %v", env.Calls())
	}
	for i := range wantCalls {
		if !proto.Equal(env.Calls()[i], wantCalls[i]) {
			t.Errorf("env call %d = %v, want %v", i, env.Calls()[i], wantCalls[i])
		}
	}
	system := tr.Messages[0]
	for _, s := range []string{"You are a retail agent.", "<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"get_order\"", "<tool_call>"} {
		if !strings.Contains(system.Content, s) {
			t.Errorf("system prompt lacks %q", s)
		}
	}
	c := func(id, name, args string) *plugin.ToolCall {
		return &plugin.ToolCall{Id: id, Name: name, Arguments: args}
	}
	order := `{"order_id":"A1","status":"pending"}`
	want := []*plugin.Message{
		system,
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", Content: "Let me check.", ReasoningContent: "I should look the order up and cancel it.",
			ToolCalls: []*plugin.ToolCall{c("call_0_0", "get_order", `{"order_id":"A1"}`), c("call_0_1", "cancel_order", `{"order_id":"A1"}`)}},
		{Role: "tool", ToolCallId: "call_0_0", Name: "get_order", Content: order},
		{Role: "tool", ToolCallId: "call_0_1", Name: "cancel_order", Content: "cancelled A1"},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{c("call_1_0", "get_order", `{"order_id":"A1"}`)}},
		{Role: "tool", ToolCallId: "call_1_0", Name: "get_order", Content: order},
		{Role: "assistant", Content: "Order A1 is cancelled.", ReasoningContent: "The order is cancelled."},
	}
	if diff := plugintest.DiffMessages(want, tr.Messages); diff != "" {
		t.Errorf("canonical messages (-want +got):\n%s", diff)
	}
	// One user message carries all of a turn's results; the feedback for
	// the unreadable block follows them.
	p := tr.Turns[2].Prompt
	wantPrompt := []*plugin.Message{
		system,
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", Content: replies[0].(string)},
		{Role: "user", Content: "<tool_response>\n" + order + "\n</tool_response>\n<tool_response>\ncancelled A1\n</tool_response>"},
		{Role: "assistant", Content: replies[1].(string)},
	}
	if diff := plugintest.DiffMessages(wantPrompt, p[:5]); diff != "" {
		t.Errorf("turn 2 prompt (-want +got):\n%s", diff)
	}
	last := p[5].Content
	if len(p) != 6 || !strings.HasPrefix(last, "<tool_response>\n"+order+"\n</tool_response>\nYour last reply could not be parsed: <tool_call> block 2: invalid JSON") {
		t.Errorf("turn 2 prompt ends with %q", last)
	}
	if tr.Turns[1].FormatError == "" || len(tr.Turns[1].Calls) != 1 || len(tr.Turns[1].Results) != 1 {
		t.Errorf("turn 1: %v", tr.Turns[1])
	}
	r := tr.Turns[0].Results
	if len(r) != 2 || *r[0].LedgerIndex != 0 || *r[1].LedgerIndex != 1 || r[1].CallId != "call_0_1" {
		t.Errorf("turn 0 results %v", r)
	}
}

func TestGolden(t *testing.T) {
	resp, _ := episode(t)
	plugintest.Golden(t, "testdata/episode.txtar", plugintest.Transcript(resp), *update)
}

func TestParse(t *testing.T) {
	type call struct{ Name, Args string }
	type result struct {
		Calls     []call
		Content   string
		Reasoning string
		Err       string // substring of the format error
	}
	get := call{"get_order", `{"order_id":"A1"}`}
	cancel := call{"cancel_order", `{"order_id":"A1"}`}
	const g = `{"name": "get_order", "arguments": {"order_id": "A1"}}`
	const cc = `{"name": "cancel_order", "arguments": {"order_id": "A1"}}`
	cases := []struct {
		name, in string
		think    bool
		want     result
	}{
		{"one call", "<tool_call>\n" + g + "\n</tool_call>", true, result{Calls: []call{get}}},
		{"several calls in order", "<tool_call>" + g + "</tool_call><tool_call>" + cc + "</tool_call>", true, result{Calls: []call{get, cancel}}},
		{"text around calls", "Checking.\n<tool_call>" + g + "</tool_call>\nOne moment.", true, result{Calls: []call{get}, Content: "Checking.\n\nOne moment."}},
		{"trailing text in block", "<tool_call>" + g + " I hope this works</tool_call>", true, result{Calls: []call{get}}},
		{"unclosed final block", "<tool_call>" + g + "</tool_call>\n<tool_call>\n" + cc, true, result{Calls: []call{get, cancel}}},
		{"arguments as string", `<tool_call>{"name": "get_order", "arguments": "{\"order_id\": \"A1\"}"}</tool_call>`, true, result{Calls: []call{get}}},
		{"parameters key", `<tool_call>{"name": "get_order", "parameters": {"order_id": "A1"}}</tool_call>`, true, result{Calls: []call{get}}},
		{"fenced json", "<tool_call>\n```json\n" + g + "\n```\n</tool_call>", true, result{Calls: []call{get}}},
		{"think ignored when calls outside", "<think>maybe <tool_call>" + cc + "</tool_call></think><tool_call>" + g + "</tool_call>", true,
			result{Calls: []call{get}, Reasoning: "maybe <tool_call>" + cc + "</tool_call>"}},
		{"think used when no call outside", "<think>I will call <tool_call>" + g + "</tool_call></think>", true,
			result{Calls: []call{get}, Reasoning: "I will call"}},
		{"think not used when ignored", "<think>I will call <tool_call>" + g + "</tool_call></think>", false,
			result{Err: "neither a <tool_call> block nor a message"}},
		{"closing think only", "reasoning here\n</think>\n\n<tool_call>" + g + "</tool_call>", true, result{Calls: []call{get}, Reasoning: "reasoning here"}},
		{"unclosed think", "Hello!<think>still thinking", true, result{Content: "Hello!", Reasoning: "still thinking"}},
		{"message to user", "  Your order is on its way.  ", true, result{Content: "Your order is on its way."}},
		{"invalid json", "<tool_call>{\"name\": \"get_order\", \"arguments\": {</tool_call>", true, result{Err: "block 1: invalid JSON"}},
		{"one invalid among valid", "<tool_call>" + g + "</tool_call><tool_call>{oops}</tool_call><tool_call>" + cc + "</tool_call>", true,
			result{Calls: []call{get, cancel}, Err: "block 2: invalid JSON"}},
		{"arguments string not json", `<tool_call>{"name": "get_order", "arguments": "order A1"}</tool_call>`, true, result{Err: "arguments must be a JSON object"}},
		{"no name", `<tool_call>{"arguments": {}}</tool_call>`, true, result{Err: `no "name"`}},
		{"empty", "", true, result{Err: "neither"}},
		{"only think", "<think>hmm</think>", true, result{Err: "neither"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Parse(&plugin.Message{Role: "assistant", Content: c.in}, 2, c.think)
			var got result
			for i, pc := range p.Calls {
				got.Calls = append(got.Calls, call{pc.Name, pc.Arguments})
				if want := "call_2_" + string(rune('0'+i)); pc.Id != want {
					t.Errorf("call %d id %q, want %q", i, pc.Id, want)
				}
			}
			if p.Canonical != nil {
				got.Content, got.Reasoning = p.Canonical.Content, p.Canonical.ReasoningContent
			}
			if p.FormatError != "" {
				got.Err = c.want.Err
				if c.want.Err == "" || !strings.Contains(p.FormatError, c.want.Err) {
					got.Err = p.FormatError
				}
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	host := plugintest.Host(
		&plugintest.FakeModel{Replies: []any{"<think><tool_call>" + `{"name": "get_order", "arguments": {"order_id": "A1"}}` + "</tool_call></think>", "ok"}},
		plugintest.NewOrderEnv(), plugintest.NewFakeUser("hi"),
	)
	resp := &plugin.RunEpisodeResponse{}
	if err := New().RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{Settings: plugin.MustJSONValue(`{"calls_in_think": "ignore"}`)}, resp); err != nil {
		t.Fatal(err)
	}
	if tr := resp.Trajectory; tr.FormatErrors != 1 || tr.ToolCalls != 0 || tr.Termination != "done" {
		t.Errorf("calls_in_think ignore: %d format errors, %d calls, %q", tr.FormatErrors, tr.ToolCalls, tr.Termination)
	}
	for _, c := range []struct{ settings, err string }{
		{`{"think": "ignore"}`, `unknown field "think"`},
		{`{"calls_in_think": "always"}`, `calls_in_think is "always"`},
		{`"x"`, "cannot unmarshal string"},
	} {
		err := New().RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{Settings: settingsValue(t, c.settings)}, &plugin.RunEpisodeResponse{})
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "hermes harness: settings: ") {
			t.Errorf("settings %s: error %v, want %q", c.settings, err, c.err)
		}
	}
}

func TestDescribe(t *testing.T) {
	plugintest.CheckDescribe(t, New(), &plugin.DescribeResponse{Name: "hermes", Version: "1.0.0", Format: plugin.FormatHermes,
		Capabilities: []string{"format_feedback", "parallel_calls", "resume"}}, Settings{}, DefaultSettings())
}

func FuzzParse(f *testing.F) {
	for _, r := range replies {
		f.Add(r.(string))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, think := range []bool{true, false} {
			p := Parse(&plugin.Message{Content: s}, 0, think)
			if p.FormatError == "" && p.Canonical == nil {
				t.Fatal("no result and no format error")
			}
			if (len(p.Calls) > 0) != (p.Canonical != nil && len(p.Canonical.ToolCalls) > 0) {
				t.Fatalf("calls %v vs canonical %v", p.Calls, p.Canonical)
			}
			for _, c := range p.Calls {
				if !json.Valid([]byte(c.Arguments)) || c.Name == "" {
					t.Fatalf("bad call %v", c)
				}
			}
		}
	})
}

// TestMaxToolCallsMidTurn: the limit stops before the call that would
// exceed it, even inside one message's calls.
func TestMaxToolCallsMidTurn(t *testing.T) {
	model := &plugintest.FakeModel{Replies: []any{replies[0], "unused"}}
	env := plugintest.NewOrderEnv()
	host := plugintest.Host(model, env, plugintest.NewFakeUser("hi"))
	resp := plugintest.Episode(t, New(), host, &plugin.RunEpisodeRequest{Limits: &plugin.Limits{MaxToolCalls: 1}})
	tr := resp.Trajectory
	if tr.Termination != "max_tool_calls" || tr.ToolCalls != 1 || len(env.Calls()) != 1 || len(tr.Turns) != 1 {
		t.Fatalf("termination %q, %d calls, %d env calls, %d turns", tr.Termination, tr.ToolCalls, len(env.Calls()), len(tr.Turns))
	}
	if turn := tr.Turns[0]; len(turn.Calls) != 2 || len(turn.Results) != 1 || turn.Results[0].CallId != "call_0_0" {
		t.Errorf("turn %v", turn)
	} // The canonical assistant message keeps only the call that ran: every
	// canonical tool call is answered by a tool message.
	var calls, answers []string
	for _, m := range tr.Messages {
		for _, c := range m.ToolCalls {
			calls = append(calls, c.Id)
		}
		if m.Role == plugin.RoleTool {
			answers = append(answers, m.ToolCallId)
		}
	}
	if !slices.Equal(calls, []string{"call_0_0"}) || !slices.Equal(answers, []string{"call_0_0"}) {
		t.Errorf("canonical tool calls %v, answers %v; want [call_0_0] both", calls, answers)
	}
}

var resumeScript = conformance.ResumeScript{
	BuiltinWording: true,
	GetOrder:       "Let me look it up.\n<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\":\"A1\"}}\n</tool_call>",
	Pending:        "Order A1 is pending. Cancel it?",
	Cancel:         "<tool_call>\n{\"name\": \"cancel_order\", \"arguments\": {\"order_id\":\"A1\"}}\n</tool_call>",
	Cancelled:      "Order A1 is cancelled.",
	Garbage:        "<tool_call>\nget_order(A1)\n</tool_call>",
}

// Render writes what Parse reads back to the same canonical message
// (reasoning aside: it is not rendered).
func TestRender(t *testing.T) {
	get := &plugin.ToolCall{Id: "call_0_0", Name: "get_order", Arguments: `{"order_id":"A1"}`}
	cancel := &plugin.ToolCall{Id: "call_0_1", Name: "cancel_order", Arguments: `{ "order_id": "A1" }`}
	cases := []struct {
		m    *plugin.Message
		want string
	}{
		{&plugin.Message{Role: "assistant", Content: "Let me look it up.", ReasoningContent: "dropped", ToolCalls: []*plugin.ToolCall{get}},
			resumeScript.GetOrder.(string)},
		{&plugin.Message{Role: "assistant", Content: "Order A1 is pending. Cancel it?"}, resumeScript.Pending.(string)},
		{&plugin.Message{Role: "assistant", ToolCalls: []*plugin.ToolCall{get, cancel}},
			"<tool_call>\n{\"name\": \"get_order\", \"arguments\": {\"order_id\":\"A1\"}}\n</tool_call>\n<tool_call>\n{\"name\": \"cancel_order\", \"arguments\": {\"order_id\":\"A1\"}}\n</tool_call>"},
	}
	for i, c := range cases {
		got := Render(c.m)
		if got != c.want {
			t.Errorf("case %d: Render = %q, want %q", i, got, c.want)
		}
		p := Parse(&plugin.Message{Role: "assistant", Content: got}, 0, true)
		want := proto.Clone(c.m).(*plugin.Message)
		want.ReasoningContent = ""
		for _, tc := range want.ToolCalls {
			tc.Arguments = strings.ReplaceAll(tc.Arguments, " ", "")
		}
		if diff := plugintest.Diff(want, p.Canonical); diff != "" {
			t.Errorf("case %d: Parse(Render(m)) (-m +parsed):\n%s", i, diff)
		}
	}
}

func settingsValue(t *testing.T, s string) *plugin.Value {
	t.Helper()
	if s == "" {
		return nil
	}
	v, err := plugin.JSONValue([]byte(s))
	if err != nil {
		return &plugin.Value{Kind: &pluginpb.Value_StringValue{StringValue: s}}
	}
	return v
}
