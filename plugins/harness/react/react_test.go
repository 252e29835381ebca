package react

import (
	"context"
	"encoding/json"
	"flag"
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
	CallGetOrder: "Thought:\nI need the order.\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}",
	CallUnknown:  "Thought:\nTry it.\nAction:\n{\"name\": \"no_such_tool\", \"arguments\": {}}",
	Respond:      "Thought:\nTell the user.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\": \"All done.\"}}",
	Garbage:      "I will just cancel it for you.",
}

// TestConformance runs the public conformance suite in process: its
// checks, the scripted cases of script and the resume cases of
// resumeScript.
func TestConformance(t *testing.T) {
	conformance.Run(t, New(), conformance.Options{Script: &script, Resume: &resumeScript})
}

// episode runs the reference episode: look the order up, cancel it, tell
// the user.
func episode(t *testing.T) (*plugin.RunEpisodeResponse, *plugintest.FakeModel, *plugintest.FakeEnv) {
	model := &plugintest.FakeModel{Replies: []any{
		"Thought:\nI need the order first.\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}",
		"Action: ```json\n{\"name\": \"cancel_order\", \"arguments\": {\"order_id\": \"A1\", \"reason\": \"no longer needed\"}}\n```",
		"Thought:\nDone; tell the user.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\": \"Order A1 is cancelled.\"}}",
	}}
	env := plugintest.NewOrderEnv()
	user := plugintest.NewFakeUser("Please cancel order A1.")
	resp := plugintest.Episode(t, New(), plugintest.Host(model, env, user), nil)
	return resp, model, env
}

func TestEpisode(t *testing.T) {
	resp, model, env := episode(t)
	tr := resp.Trajectory
	if resp.Failure != nil || tr.Termination != "done" || tr.ToolCalls != 2 || tr.FormatErrors != 0 {
		t.Fatalf("failure %v termination %q tool calls %d format errors %d", resp.Failure, tr.Termination, tr.ToolCalls, tr.FormatErrors)
	}
	wantCalls := []*plugin.CallToolRequest{
		{Name: "get_order", Arguments: `{"order_id":"A1"}`, CallId: "call_0_0"},
		{Name: "cancel_order", Arguments: `{"order_id":"A1","reason":"no longer needed"}`, CallId: "call_1_0"},
	}
	if len(env.Calls()) != 2 {
		t.Fatalf("env calls %v", env.Calls())
	}
	for i := range wantCalls {
		if !proto.Equal(env.Calls()[i], wantCalls[i]) {
			t.Errorf("env call %d = %v, want %v", i, env.Calls()[i], wantCalls[i])
		}
	}
	system := tr.Messages[0]
	for _, s := range []string{"You are a retail agent.", `{"name":"get_order","description":"Looks up an order by id.","parameters":{"type":"object"`, "Action:", `"respond"`} {
		if !strings.Contains(system.Content, s) {
			t.Errorf("system prompt lacks %q", s)
		}
	}
	call0 := &plugin.ToolCall{Id: "call_0_0", Name: "get_order", Arguments: `{"order_id":"A1"}`}
	call1 := &plugin.ToolCall{Id: "call_1_0", Name: "cancel_order", Arguments: `{"order_id":"A1","reason":"no longer needed"}`}
	want := []*plugin.Message{
		system,
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", Content: "I need the order first.", ToolCalls: []*plugin.ToolCall{call0}},
		{Role: "tool", ToolCallId: "call_0_0", Name: "get_order", Content: `{"order_id":"A1","status":"pending"}`},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{call1}},
		{Role: "tool", ToolCallId: "call_1_0", Name: "cancel_order", Content: "cancelled A1"},
		{Role: "assistant", Content: "Order A1 is cancelled.", ReasoningContent: "Done; tell the user."},
	}
	if diff := plugintest.DiffMessages(want, tr.Messages); diff != "" {
		t.Errorf("canonical messages (-want +got):\n%s", diff)
	}
	// Turn 2's prompt: the observations as user messages, the responses as
	// received.
	p := tr.Turns[2].Prompt
	wantPrompt := []*plugin.Message{
		system,
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", Content: model.Replies[0].(string)},
		{Role: "user", Content: `API output: {"order_id":"A1","status":"pending"}`},
		{Role: "assistant", Content: model.Replies[1].(string)},
		{Role: "user", Content: "API output: cancelled A1"},
	}
	if diff := plugintest.DiffMessages(wantPrompt, p); diff != "" {
		t.Errorf("turn 2 prompt (-want +got):\n%s", diff)
	}
	for i, turn := range tr.Turns {
		if turn.Index != int32(i) || turn.Response.Content != model.Replies[i].(string) {
			t.Errorf("turn %d: index %d response %q", i, turn.Index, turn.Response.Content)
		}
		if model.Requests()[i].Format != plugin.FormatReAct || len(model.Requests()[i].Tools) != 0 {
			t.Errorf("turn %d: format %v, %d native tools", i, model.Requests()[i].Format, len(model.Requests()[i].Tools))
		}
	}
	r1 := tr.Turns[1].Results
	if len(r1) != 1 || r1[0].CallId != "call_1_0" || r1[0].Content != "cancelled A1" || r1[0].LedgerIndex == nil || *r1[0].LedgerIndex != 1 {
		t.Errorf("turn 1 results %v", r1)
	}
	if tr.Turns[2].UserReply != "" || len(tr.Turns[2].Calls) != 0 {
		t.Errorf("turn 2: %v", tr.Turns[2])
	}
}

func TestGolden(t *testing.T) {
	resp, _, _ := episode(t)
	plugintest.Golden(t, "testdata/episode.txtar", plugintest.Transcript(resp), *update)
}

func TestParse(t *testing.T) {
	type result struct {
		Name, Args, Content, Thought string
		Err                          bool
	}
	cases := []struct {
		name, in string
		want     result
	}{
		{"plain", "Thought:\nlook\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}",
			result{Name: "get_order", Args: `{"order_id":"A1"}`, Thought: "look"}},
		{"fenced json", "Thought: x\nAction:\n```json\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\n```",
			result{Name: "get_order", Args: `{"order_id":"A1"}`, Thought: "x"}},
		{"fence without tag", "Action:\n```\n{\"name\": \"get_order\", \"arguments\": {}}\n```", result{Name: "get_order", Args: "{}"}},
		{"trailing text", "Thought:\nt\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}\nObservation: I expect the order.",
			result{Name: "get_order", Args: `{"order_id":"A1"}`, Thought: "t"}},
		{"missing thought", "Action: {\"name\": \"get_order\", \"arguments\": {\"order_id\": \"A1\"}}", result{Name: "get_order", Args: `{"order_id":"A1"}`}},
		{"untagged thought", "I should look.\nAction: {\"name\": \"get_order\", \"arguments\": {}}", result{Name: "get_order", Args: "{}", Thought: "I should look."}},
		{"lowercase and bold labels", "**Thought:** hm\n**action:**\n{\"name\": \"get_order\", \"arguments\": {}}", result{Name: "get_order", Args: "{}", Thought: "hm"}},
		{"arguments as string", "Action:\n{\"name\": \"get_order\", \"arguments\": \"{\\\"order_id\\\": \\\"A1\\\"}\"}", result{Name: "get_order", Args: `{"order_id":"A1"}`}},
		{"no arguments", "Action:\n{\"name\": \"list\"}", result{Name: "list", Args: "{}"}},
		{"respond", "Thought:\nanswer\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\": \"Hi there.\"}}", result{Content: "Hi there.", Thought: "answer"}},
		{"action word inside content", "Action:\n{\"name\": \"respond\", \"arguments\": {\"content\": \"Next action: none\"}}", result{Content: "Next action: none"}},
		{"second label readable", "Thought: Action: is next\nAction:\n{\"name\": \"get_order\", \"arguments\": {}}", result{Name: "get_order", Args: "{}", Thought: "Action: is next"}},
		{"respond without content", "Action:\n{\"name\": \"respond\", \"arguments\": {}}", result{Err: true}},
		{"no action", "Sure, I'll do that.", result{Err: true}},
		{"invalid json", "Action:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\": }}", result{Err: true}},
		{"not an object", "Action:\nget_order(order_id=A1)", result{Err: true}},
		{"no name", "Action:\n{\"arguments\": {}}", result{Err: true}},
		{"arguments not an object", "Action:\n{\"name\": \"x\", \"arguments\": [1]}", result{Err: true}},
		{"empty", "", result{Err: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Parse(&plugin.Message{Role: "assistant", Content: c.in}, 3, "respond")
			var got result
			switch {
			case p.FormatError != "":
				got.Err = true
				if len(p.Calls) != 0 || p.Canonical != nil {
					t.Errorf("format error with a result: %+v", p)
				}
			case len(p.Calls) == 1:
				got.Name, got.Args, got.Thought = p.Calls[0].Name, p.Calls[0].Arguments, p.Canonical.Content
				if p.Calls[0].Id != "call_3_0" || !proto.Equal(p.Canonical.ToolCalls[0], p.Calls[0]) {
					t.Errorf("call %v canonical %v", p.Calls[0], p.Canonical)
				}
			default:
				got.Content, got.Thought = p.Canonical.Content, p.Canonical.ReasoningContent
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s\nformat error: %s", diff, p.FormatError)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	model := &plugintest.FakeModel{Replies: []any{script.CallUnknown, "Action: {\"name\": \"say\", \"arguments\": {\"content\": \"bye\"}}"}}
	host := plugintest.Host(model, plugintest.NewOrderEnv(), plugintest.NewFakeUser("hi"))
	req := &plugin.RunEpisodeRequest{Settings: plugin.MustJSONValue(`{"observation_prefix": "Observation: ", "respond_action": "say"}`)}
	resp := &plugin.RunEpisodeResponse{}
	if err := New().RunEpisode(context.Background(), host, req, resp); err != nil {
		t.Fatal(err)
	}
	if resp.Trajectory.Termination != "done" {
		t.Fatalf("termination %q", resp.Trajectory.Termination)
	}
	p := resp.Trajectory.Turns[1].Prompt
	if got := p[len(p)-1].Content; got != "Observation: Error: unknown tool no_such_tool" {
		t.Errorf("observation %q", got)
	}
	if !strings.Contains(p[0].Content, `{"name": "say", "arguments": {"content": <your message to the user>}}`) {
		t.Errorf("system prompt does not name the respond action:\n%s", p[0].Content)
	}

	for _, c := range []struct{ settings, err string }{
		{`{"bogus": 1}`, `unknown field "bogus"`},
		{`{"respond_action": ""}`, "respond_action must not be empty"},
		{`[1]`, "cannot unmarshal"},
		{`{} {}`, "cannot unmarshal string"}, // not JSON: v2 carries it as a string value, which is refused
		{`{"observation_prefix": 3}`, "cannot unmarshal number"},
	} {
		err := New().RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{Settings: settingsValue(t, c.settings)}, &plugin.RunEpisodeResponse{})
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "react harness: settings: ") {
			t.Errorf("settings %s: error %v, want %q", c.settings, err, c.err)
		}
	}
}

func TestDescribe(t *testing.T) {
	d := plugintest.CheckDescribe(t, New(), &plugin.DescribeResponse{Name: "react", Version: "1.0.0", Format: plugin.FormatReAct,
		Capabilities: []string{"format_feedback", "resume"}}, Settings{}, DefaultSettings())
	var v any
	if err := json.Unmarshal([]byte(plugin.SettingsJSON(d.SettingsSchema)), &v); err != nil || v == nil {
		t.Error(err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{script.CallGetOrder.(string), script.Respond.(string), "Action: ```json\n{\"name\":\"x\"}\n```", "action:{\"name\":\"x\",\"arguments\":\"{}\"}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := Parse(&plugin.Message{Content: s}, 0, "respond")
		if (p.FormatError == "") == (p.Canonical == nil) {
			t.Fatalf("format error %q with canonical %v", p.FormatError, p.Canonical)
		}
		for _, c := range p.Calls {
			if !json.Valid([]byte(c.Arguments)) || c.Name == "" {
				t.Fatalf("bad call %v", c)
			}
		}
	})
}

var resumeScript = conformance.ResumeScript{
	BuiltinWording: true,
	GetOrder:       "Thought:\nI need the order.\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\":\"A1\"}}",
	Pending:        "Thought:\nAsk the user.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\":\"Order A1 is pending. Cancel it?\"}}",
	Cancel:         "Thought:\nCancel it.\nAction:\n{\"name\": \"cancel_order\", \"arguments\": {\"order_id\":\"A1\"}}",
	Cancelled:      "Thought:\nTell the user.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\":\"Order A1 is cancelled.\"}}",
	Garbage:        "I will just cancel it for you.",
}

// Render writes what Parse reads back to the same canonical message, and
// the exact text the resume script uses.
func TestRender(t *testing.T) {
	call := &plugin.ToolCall{Id: "call_3_0", Name: "get_order", Arguments: `{"order_id": "A1"}`}
	cases := []struct {
		m    *plugin.Message
		want string
	}{
		{&plugin.Message{Role: "assistant", Content: "I need the order.", ToolCalls: []*plugin.ToolCall{call}},
			resumeScript.GetOrder.(string)},
		{&plugin.Message{Role: "assistant", Content: "Order A1 is pending. Cancel it?", ReasoningContent: "Ask the user."},
			resumeScript.Pending.(string)},
		{&plugin.Message{Role: "assistant", Content: "<b>a & b</b>\n\"quoted\"", ReasoningContent: "HTML stays as written."},
			"Thought:\nHTML stays as written.\nAction:\n{\"name\": \"respond\", \"arguments\": {\"content\":\"<b>a & b</b>\\n\\\"quoted\\\"\"}}"},
		// A history from another protocol: no thought in the content, two
		// calls, arguments that are not JSON.
		{&plugin.Message{Role: "assistant", ReasoningContent: "both", ToolCalls: []*plugin.ToolCall{call,
			{Id: "x", Name: "cancel_order", Arguments: `{"order_id": "A1"`}}},
			"Thought:\nboth\nAction:\n{\"name\": \"get_order\", \"arguments\": {\"order_id\":\"A1\"}}\nAction:\n{\"name\": \"cancel_order\", \"arguments\": \"{\\\"order_id\\\": \\\"A1\\\"\"}"},
	}
	for i, c := range cases {
		got := Render(c.m, "respond")
		if got != c.want {
			t.Errorf("case %d: Render = %q, want %q", i, got, c.want)
		}
		if i > 2 {
			continue
		}
		p := Parse(&plugin.Message{Role: "assistant", Content: got}, 3, "respond")
		want := proto.Clone(c.m).(*plugin.Message)
		for _, tc := range want.ToolCalls {
			tc.Arguments = `{"order_id":"A1"}`
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
