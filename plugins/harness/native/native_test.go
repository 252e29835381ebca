package native

import (
	"context"
	"flag"
	"os"
	"path/filepath"
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

func calls(cs ...*plugin.ToolCall) *plugin.Message {
	return &plugin.Message{Role: "assistant", ToolCalls: cs}
}

func tc(id, name, args string) *plugin.ToolCall {
	return &plugin.ToolCall{Id: id, Name: name, Arguments: args}
}

var script = conformance.Script{
	Feedback:     "could not be parsed",
	CallGetOrder: calls(tc("c1", "get_order", `{"order_id":"A1"}`)),
	CallUnknown:  calls(tc("c1", "no_such_tool", `{}`)),
	Respond:      "All done.",
	Garbage:      &plugin.Message{Role: "assistant", Content: "  "},
}

// TestConformance runs the public conformance suite in process: its
// checks, the scripted cases of script and the resume cases of
// resumeScript.
func TestConformance(t *testing.T) {
	conformance.Run(t, New(), conformance.Options{Script: &script, Resume: &resumeScript})
}

var replies = []any{
	&plugin.Message{Role: "assistant", Content: "Checking first.", ReasoningContent: "look it up, then cancel",
		ToolCalls: []*plugin.ToolCall{tc("fc_1", "get_order", `{"order_id": "A1"}`), tc("", "cancel_order", `{"order_id": "A1"`)}},
	calls(tc("fc_2", "cancel_order", `{"order_id":"A1","reason":"changed mind"}`)),
	"Order A1 is cancelled.",
}

func episode(t *testing.T) (*plugin.RunEpisodeResponse, *plugintest.FakeModel, *plugintest.FakeEnv) {
	model := plugintest.NewFakeModel(replies...)
	env := plugintest.NewOrderEnv()
	user := plugintest.NewFakeUser("Please cancel order A1.")
	return plugintest.Episode(t, New(), plugintest.Host(model, env, user), nil), model, env
}

func TestEpisode(t *testing.T) {
	resp, model, env := episode(t)
	tr := resp.Trajectory
	if resp.Failure != nil || tr.Termination != "done" || tr.ToolCalls != 3 || tr.FormatErrors != 0 {
		t.Fatalf("failure %v termination %q tool calls %d format errors %d", resp.Failure, tr.Termination, tr.ToolCalls, tr.FormatErrors)
	}
	// Invalid JSON goes to Env as written; the environment reports it.
	wantCalls := []*plugin.CallToolRequest{
		{Name: "get_order", Arguments: `{"order_id": "A1"}`, CallId: "fc_1"},
		{Name: "cancel_order", Arguments: `{"order_id": "A1"`, CallId: "call_0_1"},
		{Name: "cancel_order", Arguments: `{"order_id":"A1","reason":"changed mind"}`, CallId: "fc_2"},
	}
	if len(env.Calls()) != len(wantCalls) {
		t.Fatalf("env calls %v", env.Calls())
	}
	for i := range wantCalls {
		if !proto.Equal(env.Calls()[i], wantCalls[i]) {
			t.Errorf("env call %d = %v, want %v", i, env.Calls()[i], wantCalls[i])
		}
	}
	r0 := tr.Turns[0].Results
	if len(r0) != 2 || r0[0].IsError || !r0[1].IsError || !strings.HasPrefix(r0[1].Content, "arguments: ") {
		t.Errorf("turn 0 results %v", r0)
	}
	system := &plugin.Message{Role: "system", Content: "You are a retail agent."}
	c0 := []*plugin.ToolCall{tc("fc_1", "get_order", `{"order_id": "A1"}`), tc("call_0_1", "cancel_order", `{"order_id": "A1"`)}
	want := []*plugin.Message{
		system,
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", Content: "Checking first.", ReasoningContent: "look it up, then cancel", ToolCalls: c0},
		{Role: "tool", ToolCallId: "fc_1", Name: "get_order", Content: `{"order_id":"A1","status":"pending"}`},
		{Role: "tool", ToolCallId: "call_0_1", Name: "cancel_order", Content: r0[1].Content},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{tc("fc_2", "cancel_order", `{"order_id":"A1","reason":"changed mind"}`)}},
		{Role: "tool", ToolCallId: "fc_2", Name: "cancel_order", Content: "cancelled A1"},
		{Role: "assistant", Content: "Order A1 is cancelled."},
	}
	if diff := plugintest.DiffMessages(want, tr.Messages); diff != "" {
		t.Errorf("canonical messages (-want +got):\n%s", diff)
	}
	// The prompt is the canonical conversation without reasoning.
	p := tr.Turns[2].Prompt
	want[2] = &plugin.Message{Role: "assistant", Content: "Checking first.", ToolCalls: c0}
	if diff := plugintest.DiffMessages(want[:7], p); diff != "" {
		t.Errorf("turn 2 prompt (-want +got):\n%s", diff)
	}
	for i, req := range model.Requests() {
		if req.Format != plugin.FormatNative || len(req.Tools) != 2 || req.Tools[0].Name != "get_order" {
			t.Errorf("request %d: format %v tools %v", i, req.Format, req.Tools)
		}
	}
	if !proto.Equal(tr.Turns[0].Response, replies[0].(*plugin.Message)) {
		t.Errorf("turn 0 response %v is not the message as received", tr.Turns[0].Response)
	}
}

func TestGolden(t *testing.T) {
	resp, _, _ := episode(t)
	plugintest.Golden(t, "testdata/episode.txtar", plugintest.Transcript(resp), *update)
}

func TestParse(t *testing.T) {
	p := Parse(&plugin.Message{Content: "hi", ToolCalls: []*plugin.ToolCall{tc("", "a", ""), tc("x", "b", "not json")}}, 4)
	if p.FormatError != "" || len(p.Calls) != 2 || p.Calls[0].Id != "call_4_0" || p.Calls[1].Id != "x" || p.Calls[1].Arguments != "not json" || p.Canonical.Content != "hi" {
		t.Errorf("parse %+v", p)
	}
	if p := Parse(&plugin.Message{Content: "\n"}, 0); p.FormatError == "" || p.Canonical != nil {
		t.Errorf("blank reply: %+v", p)
	}
	if p := Parse(&plugin.Message{Content: "Hello."}, 0); p.FormatError != "" || len(p.Calls) != 0 || p.Canonical.Content != "Hello." {
		t.Errorf("message to user: %+v", p)
	}
}

// offered runs an episode opening with settings and returns the names of
// the tools offered to the model.
func offered(t *testing.T, settings string) ([]string, error) {
	model := &plugintest.FakeModel{Replies: []any{"ok"}}
	host := plugintest.Host(model, plugintest.NewOrderEnv(), plugintest.NewFakeUser("hi"))
	err := New().RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{Settings: settingsValue(t, settings)}, &plugin.RunEpisodeResponse{})
	if err != nil {
		return nil, err
	}
	names := []string{}
	for _, tool := range model.Requests()[0].Tools {
		names = append(names, tool.Name)
	}
	return names, nil
}

func TestFilter(t *testing.T) {
	for _, c := range []struct {
		settings string
		want     []string
	}{
		{``, []string{"get_order", "cancel_order"}},
		{`{"profile": "full"}`, []string{"get_order", "cancel_order"}},
		{`{"profile": "readonly"}`, []string{"get_order"}},
		{`{"allow": ["get_*"]}`, []string{"get_order"}},
		{`{"allow": ["*_order"], "deny": ["cancel_*"]}`, []string{"get_order"}},
		{`{"deny": ["*"]}`, []string{}},
		{`{"allow": ["nothing"]}`, []string{}},
		{`{"profile": "ops", "profiles": {"ops": {"allow": ["cancel_?rder"]}}}`, []string{"cancel_order"}},
		{`{"profile": "ro2", "profiles": {"ro2": {"read_only": true, "deny": ["get_*"]}}}`, []string{}},
		{`{"profile": "ops", "profiles": {"ops": {"allow": ["*"]}}, "deny": ["get_order"]}`, []string{"cancel_order"}},
	} {
		got, err := offered(t, c.settings)
		if err != nil {
			t.Errorf("%s: %v", c.settings, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: offered (-want +got):\n%s", c.settings, diff)
		}
	}
}

func TestDeniedCall(t *testing.T) {
	model := &plugintest.FakeModel{Replies: []any{
		calls(tc("c1", "cancel_order", `{"order_id":"A1"}`), tc("c2", "get_order", `{"order_id":"A1"}`), tc("c3", "drop_tables", `{}`), tc("c4", "no_such_tool", `{}`)),
		"Sorry, I cannot cancel it.",
	}}
	env := plugintest.NewOrderEnv()
	host := plugintest.Host(model, env, plugintest.NewFakeUser("Cancel A1."))
	resp := &plugin.RunEpisodeResponse{}
	req := &plugin.RunEpisodeRequest{Settings: plugin.MustJSONValue(`{"profile": "readonly", "deny": ["drop_*"]}`)}
	if err := New().RunEpisode(context.Background(), host, req, resp); err != nil {
		t.Fatal(err)
	}
	plugintest.Strip(resp)
	if n := len(env.Calls()); n != 2 || env.Calls()[0].Name != "get_order" || env.Calls()[1].Name != "no_such_tool" {
		t.Errorf("env got %v", env.Calls())
	}
	ledger := func(v uint64) *uint64 { return &v }
	want := []*plugin.ToolResult{
		{CallId: "c1", Name: "cancel_order", Content: "tool cancel_order is not allowed", IsError: true},
		{CallId: "c2", Name: "get_order", Content: `{"order_id":"A1","status":"pending"}`, LedgerIndex: ledger(0)},
		{CallId: "c3", Name: "drop_tables", Content: "tool drop_tables is not allowed", IsError: true},
		{CallId: "c4", Name: "no_such_tool", Content: "unknown tool no_such_tool", IsError: true, LedgerIndex: ledger(1)},
	}
	got := resp.Trajectory.Turns[0].Results
	if diff := plugintest.Diff(&plugin.Turn{Results: want}, &plugin.Turn{Results: got}); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if resp.Trajectory.ToolCalls != 4 || resp.Trajectory.Termination != "done" {
		t.Errorf("tool calls %d termination %q", resp.Trajectory.ToolCalls, resp.Trajectory.Termination)
	}
	m := resp.Trajectory.Messages[3]
	if m.Role != "tool" || m.ToolCallId != "c1" || m.Content != "tool cancel_order is not allowed" {
		t.Errorf("canonical tool message %v", m)
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func system(t *testing.T, settings string) string {
	t.Helper()
	model := &plugintest.FakeModel{Replies: []any{"ok"}}
	host := plugintest.Host(model, plugintest.NewOrderEnv(), plugintest.NewFakeUser("hi"))
	req := &plugin.RunEpisodeRequest{SystemPrompt: "Policy.", Settings: settingsValue(t, settings)}
	if err := New().RunEpisode(context.Background(), host, req, &plugin.RunEpisodeResponse{}); err != nil {
		t.Fatal(err)
	}
	return model.Requests()[0].Messages[0].Content
}

func TestSkills(t *testing.T) {
	dir := t.TempDir()
	refunds := filepath.Join(dir, "refunds", "SKILL.md")
	writeFile(t, refunds, "---\nname: refunds\ndescription: \"Refund a delivered order.\"\nmetadata: {}\n---\n# Refunds\n\n1. Check the order is delivered.\n")
	writeFile(t, filepath.Join(dir, "exchange.md"), "---\ndescription: 'Exchange an item.'\n---\nUse exchange_items.\n")
	writeFile(t, filepath.Join(dir, "notes", "README.txt"), "not a skill")

	inline := `"skills": [{"name": "greet", "description": "Greet the user.", "body": "Say hello."}]`
	got := system(t, `{`+inline+`, "skills_dirs": [`+quote(dir)+`]}`)
	want := `Policy.

# Available skills

Skills are instructions for particular tasks. When the task at hand matches a skill's description, follow that skill.

## greet
Greet the user.

Say hello.

## exchange
Exchange an item.

Use exchange_items.

## refunds
Refund a delivered order.

# Refunds

1. Check the order is delivered.`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inline mode (-want +got):\n%s", diff)
	}

	got = system(t, `{`+inline+`, "skills_dirs": [`+quote(dir)+`], "skills_mode": "path"}`)
	want = `Policy.

# Available skills

Skills are instructions for particular tasks. When the task at hand matches a skill's description, follow that skill. A skill's instructions are in the file at its location: read it before following it.

## greet
Greet the user.

Say hello.

## exchange
Exchange an item.
Location: ` + filepath.Join(dir, "exchange.md") + `

## refunds
Refund a delivered order.
Location: ` + refunds
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("path mode (-want +got):\n%s", diff)
	}
	if got := system(t, ""); got != "Policy." {
		t.Errorf("no skills: %q", got)
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

func TestParseSkill(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Skill
		err  string
	}{
		{"---\nname: a\ndescription: d\n---\nbody\n", Skill{Name: "a", Description: "d", Body: "body"}, ""},
		{"---\r\nname: \"a b\"\r\ndescription: it's: fine\r\n---\r\n", Skill{Name: "a b", Description: "it's: fine"}, ""},
		{"---\ndescription: d\n---", Skill{Name: "dflt", Description: "d"}, ""},
		{"# no front matter", Skill{}, "no front matter"},
		{"---\nname: a\ndescription: d\n", Skill{}, "no closing"},
		{"---\nname: a\n---\n", Skill{}, `skill "a": no description`},
	} {
		got, err := ParseSkill(c.in, "dflt")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
}

func TestSettingsErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "bad.md"), "no front matter")
	for _, c := range []struct{ settings, err string }{
		{`{"skill": []}`, `unknown field "skill"`},
		{`{"profiles": {"p": {"allow": [], "mode": 1}}}`, `unknown field "mode"`},
		{`{"skills": [{"name": "x", "description": "d", "path": "/x"}]}`, `unknown field "path"`},
		{`{"skills_mode": "full"}`, `skills_mode is "full"`},
		{`{"profile": "admin"}`, `unknown profile "admin"`},
		{`{"profiles": {"readonly": {}}}`, `"readonly" is a built-in profile`},
		{`{"allow": ["[a-"]}`, `allow: bad pattern "[a-"`},
		{`{"profiles": {"p": {"deny": ["\\"]}}}`, `profiles.p.deny: bad pattern`},
		{`{"skills": [{"name": "x"}]}`, `skills[0]: a skill needs a name and a description`},
		{`{"skills": [{"name": "x", "description": "d"}, {"name": "x", "description": "e"}]}`, `skill "x" defined twice`},
		{`{"skills_dirs": ["/nonexistent/weft-skills"]}`, `skills_dirs: open /nonexistent/weft-skills`},
		{`{"skills_dirs": [` + quote(dir) + `]}`, `bad.md: no front matter`},
	} {
		_, err := offered(t, c.settings)
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "native harness: settings: ") {
			t.Errorf("settings %s: error %v, want %q", c.settings, err, c.err)
		}
	}
}

func TestDescribe(t *testing.T) {
	plugintest.CheckDescribe(t, New(), &plugin.DescribeResponse{Name: "native", Version: "1.0.0", Format: plugin.FormatNative,
		Capabilities: []string{"parallel_calls", "resume", "skills", "tool_filter"}}, Settings{}, DefaultSettings())
}

func FuzzParseSkill(f *testing.F) {
	f.Add("---\nname: a\ndescription: d\n---\nbody\n")
	f.Add("---\nname: \"\\u00e9\"\ndescription: 'x'\n---")
	f.Fuzz(func(t *testing.T, s string) {
		sk, err := ParseSkill(s, "d")
		if err == nil && (sk.Name == "" || sk.Description == "") {
			t.Fatalf("skill without name or description: %+v", sk)
		}
	})
}

var resumeScript = conformance.ResumeScript{
	BuiltinWording: true,
	GetOrder: &plugin.Message{Role: "assistant", Content: "Looking it up.", ReasoningContent: "need the order",
		ToolCalls: []*plugin.ToolCall{tc("fc_1", "get_order", `{"order_id": "A1"}`)}},
	Pending:   "Order A1 is pending. Cancel it?",
	Cancel:    calls(tc("fc_2", "cancel_order", `{"order_id":"A1"}`)),
	Cancelled: "Order A1 is cancelled.",
	Garbage:   &plugin.Message{Role: "assistant", Content: "  "},
}

// A model id that repeats a history id (or an earlier one of the run) is
// renamed; a missing one gets an id past the history's.
func TestResumeCallIDs(t *testing.T) {
	history := []*plugin.Message{
		{Role: "user", Content: "Please cancel order A1."},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{tc("fc_1", "get_order", `{"order_id":"A1"}`), tc("call_4_0", "get_order", `{"order_id":"A2"}`)}},
		{Role: "tool", ToolCallId: "call_4_0", Content: "a2"},
		{Role: "tool", ToolCallId: "fc_1", Name: "get_order", Content: "a1"},
		{Role: "assistant", Content: "Both are pending."},
	}
	model := &plugintest.FakeModel{Replies: []any{
		calls(tc("fc_1", "cancel_order", `{"order_id":"A1"}`), tc("", "cancel_order", `{"order_id":"A2"}`), tc("fc_9", "get_order", `{}`)),
		calls(tc("fc_9", "get_order", `{}`)),
		"Done.",
	}}
	env := plugintest.NewOrderEnv()
	user := plugintest.NewFakeUser("Cancel both.")
	resp := &plugin.RunEpisodeResponse{}
	req := &plugin.RunEpisodeRequest{SystemPrompt: "s", History: history}
	if err := New().RunEpisode(context.Background(), plugintest.Host(model, env, user), req, resp); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range env.Calls() {
		ids = append(ids, c.CallId)
	}
	// Turn numbers start at 5: past call_4_0 of the history.
	if diff := cmp.Diff([]string{"call_5_0", "call_5_1", "fc_9", "call_6_0"}, ids); diff != "" {
		t.Errorf("call ids (-want +got):\n%s", diff)
	}
	tr := resp.Trajectory
	// The renamed ids are what the prompt and the canonical messages carry.
	if got := tr.Turns[1].Prompt[7].ToolCalls[0].Id; got != "call_5_0" {
		t.Errorf("prompt carries call id %q, want call_5_0 (prompt:\n%s)", got, plugintest.RenderPrompt(tr.Turns[1].Prompt))
	}
	// The history's tool message without a name is rendered with its
	// call's name; the canonical message stays as given.
	if p := tr.Turns[0].Prompt; p[3].Name != "get_order" || p[3].ToolCallId != "call_4_0" || tr.Messages[3].Name != "" {
		t.Errorf("tool message rendered %v, canonical %v", p[3], tr.Messages[3])
	}
	if tr.Turns[0].Response.ToolCalls[0].Id != "fc_1" {
		t.Errorf("the response was changed: %v", tr.Turns[0].Response)
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
