package conformance

import (
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// Script is how a harness's own output format says the four things the
// scripted cases (Options.Script) need. Each value is a model reply: a
// content string or a *plugin.Message (as plugintest.FakeModel takes it).
// The environment of the scripted cases is plugintest.NewOrderEnv.
type Script struct {
	// CallGetOrder calls get_order with {"order_id":"A1"}.
	CallGetOrder any
	// CallUnknown calls a tool the Env does not have ("no_such_tool").
	CallUnknown any
	// Respond sends "All done." to the user.
	Respond any
	// Garbage cannot be parsed.
	Garbage any
	// Feedback, if not "", is a word or phrase (compared in lower case)
	// the feedback after a format-error turn must contain; "" = any user
	// message.
	Feedback string
}

// scripted runs the scripted cases of s as subtests of t: each limit
// ends the episode with its termination (format-error turns count as
// turns), host errors (ListTools, CallTool, Generate, User.Next) become
// failures with a partial trajectory, a format-error turn is followed by
// feedback and a retry and stays out of the canonical messages, is_error
// results go back to the model, each Turn's Prompt is exactly what
// Generate got and User.Next gets the canonical messages.
func scripted(t *testing.T, h plugin.Harness, s Script) {
	envErr := &plugin.HostError{Service: "env", Kind: "trap", Message: "module trapped"}
	modelErr := &plugin.HostError{Service: "model", Kind: "unavailable", Message: "endpoint down"}
	userErr := &plugin.HostError{Service: "user", Kind: "timeout", Message: "simulator slow"}
	type want struct {
		termination  string
		failure      string // Failure.Kind
		turns        int
		toolCalls    int32
		formatErrors int32
		envCalls     int
	}
	cases := []struct {
		name   string
		model  *plugintest.FakeModel
		env    *plugintest.FakeEnv
		user   *plugintest.FakeUser
		limits *plugin.Limits
		want   want
	}{
		{name: "done", model: plugintest.NewFakeModel(s.CallGetOrder, s.Respond),
			want: want{termination: "done", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "opening done", model: plugintest.NewFakeModel(), user: plugintest.NewFakeUser(),
			want: want{termination: "done"}},
		{name: "max_turns", model: plugintest.NewFakeModel(s.CallGetOrder, s.CallGetOrder, s.CallGetOrder),
			limits: &plugin.Limits{MaxTurns: 2},
			want:   want{termination: "max_turns", turns: 2, toolCalls: 2, envCalls: 2}},
		{name: "max_turns counts format errors", model: plugintest.NewFakeModel(s.Garbage, s.Garbage, s.Respond),
			limits: &plugin.Limits{MaxTurns: 2},
			want:   want{termination: "max_turns", turns: 2, formatErrors: 2}},
		{name: "max_tool_calls", model: plugintest.NewFakeModel(s.CallGetOrder, s.CallGetOrder, s.Respond),
			limits: &plugin.Limits{MaxToolCalls: 1},
			want:   want{termination: "max_tool_calls", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "turn_deadline", model: &plugintest.FakeModel{Block: true},
			limits: &plugin.Limits{TurnTimeoutMs: 20},
			want:   want{termination: "turn_deadline", turns: 1}},
		{name: "episode_deadline", model: &plugintest.FakeModel{Block: true},
			limits: &plugin.Limits{TurnTimeoutMs: 60_000, EpisodeTimeoutMs: 20},
			want:   want{termination: "episode_deadline", turns: 1}},
		{name: "env error", model: plugintest.NewFakeModel(s.CallGetOrder, s.Respond),
			env:  &plugintest.FakeEnv{FailCall: 1, Err: envErr},
			want: want{termination: "failure", failure: "env_trap", turns: 1, envCalls: 1}},
		{name: "list tools error", model: plugintest.NewFakeModel(), env: &plugintest.FakeEnv{FailList: true, Err: envErr},
			want: want{termination: "failure", failure: "env_trap"}},
		{name: "model error", model: plugintest.NewFakeModel(s.CallGetOrder, modelErr),
			want: want{termination: "failure", failure: "model_unavailable", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "user error", model: plugintest.NewFakeModel(s.Respond),
			user: &plugintest.FakeUser{Messages: []string{"Cancel order A1."}, FailAt: 2, Err: userErr},
			want: want{termination: "failure", failure: "user_timeout", turns: 1}},
		{name: "format error then retry", model: plugintest.NewFakeModel(s.Garbage, s.Respond),
			want: want{termination: "done", turns: 2, formatErrors: 1}},
		{name: "is_error result goes back", model: plugintest.NewFakeModel(s.CallUnknown, s.Respond),
			want: want{termination: "done", turns: 2, toolCalls: 1, envCalls: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := plugintest.NewOrderEnv()
			if c.env != nil {
				env.FailCall, env.FailList, env.Err = c.env.FailCall, c.env.FailList, c.env.Err
			}
			if c.user == nil {
				c.user = plugintest.NewFakeUser("Cancel order A1.")
			}
			resp := plugintest.Episode(t, h, plugintest.Host(c.model, env, c.user), &plugin.RunEpisodeRequest{Limits: c.limits})
			reqs := c.model.Requests()
			tr := resp.GetTrajectory()
			got := want{
				termination: tr.GetTermination(), failure: failureCode(resp.GetFailure()), turns: len(tr.GetTurns()),
				toolCalls: tr.GetToolCalls(), formatErrors: tr.GetFormatErrors(), envCalls: len(env.Calls()),
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if len(reqs) != got.turns {
				t.Errorf("%d Generate calls for %d turns", len(reqs), got.turns)
			}
			for i, turn := range tr.GetTurns() {
				if diff := plugintest.DiffMessages(reqs[i].Messages, turn.Prompt); diff != "" {
					t.Errorf("turn %d: Prompt is not what Generate got:\n%s", i, diff)
				}
			}
			switch c.name {
			case "env error", "model error":
				if resp.Failure.Message == "" {
					t.Error("failure without message")
				}
			case "format error then retry":
				t0, t1 := tr.Turns[0], tr.Turns[1]
				if t0.FormatError == "" || t1.FormatError != "" {
					t.Errorf("format errors %q, %q", t0.FormatError, t1.FormatError)
				}
				fb := t1.Prompt[len(t1.Prompt)-1]
				if fb.Role != plugin.RoleUser || fb.Content == "" || !strings.Contains(strings.ToLower(fb.Content), strings.ToLower(s.Feedback)) {
					t.Errorf("no feedback (a user message containing %q) before the retry: %+v", s.Feedback, fb)
				}
				// The garbage stays out of the canonical conversation.
				for _, m := range tr.Messages {
					if m.Role == plugin.RoleAssistant && m.Content != "All done." {
						t.Errorf("unexpected canonical assistant message %+v", m)
					}
				}
			case "is_error result goes back":
				r := tr.Turns[0].Results
				if len(r) != 1 || !r[0].IsError || !strings.Contains(r[0].Content, "unknown tool") {
					t.Errorf("results %+v", r)
				}
			case "done":
				if got := tr.Turns[1].UserReply; got != "" {
					t.Errorf("final user reply %q", got)
				}
				// User.Next got the canonical conversation ending with the
				// message to the user.
				last := c.user.Requests()[1].Messages
				if m := last[len(last)-1]; m.Role != plugin.RoleAssistant || m.Content != "All done." {
					t.Errorf("User.Next got %+v last", m)
				}
				if diff := plugintest.DiffMessages(tr.Messages, last); diff != "" {
					t.Errorf("User.Next messages differ from the canonical ones:\n%s", diff)
				}
			}
		})
	}
}

// failureCode is the joined code of a Failure ("env_trap"; "" for none).
func failureCode(f *plugin.Failure) string {
	if f == nil {
		return ""
	}
	c, k := plugin.FailureParts(f)
	return failure.Code("", c, k)
}
