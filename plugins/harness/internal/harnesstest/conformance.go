package harnesstest

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
)

// Script is how a harness's format says the three things the conformance
// tests need. Each value is a model reply: a content string or a
// *plugin.Message.
type Script struct {
	// CallGetOrder calls get_order with {"order_id":"A1"}.
	CallGetOrder any
	// CallUnknown calls a tool the Env does not have ("no_such_tool").
	CallUnknown any
	// Respond sends "All done." to the user.
	Respond any
	// Garbage cannot be parsed.
	Garbage any
}

// Run runs one episode of h with the given replies, limits and fakes and
// returns the response (durations zeroed).
func Run(t *testing.T, h plugin.Harness, host *Host, limits *plugin.Limits) *plugin.RunEpisodeResponse {
	t.Helper()
	resp := &plugin.RunEpisodeResponse{}
	req := &plugin.RunEpisodeRequest{EpisodeId: "ep1", SystemPrompt: "You are a retail agent.", Limits: limits}
	if err := h.RunEpisode(context.Background(), host, req, resp); err != nil {
		t.Fatalf("RunEpisode: %v", err)
	}
	Strip(resp)
	return resp
}

// Conformance checks the episode protocol every harness follows with s:
// each limit ends the episode with its termination, host errors become
// failures with a partial trajectory, a format-error turn is followed by
// feedback and a retry, and is_error results go back to the model.
func Conformance(t *testing.T, h plugin.Harness, s Script) {
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
		model  *Model
		env    *Env
		user   *User
		limits *plugin.Limits
		want   want
	}{
		{name: "done", model: &Model{Replies: []any{s.CallGetOrder, s.Respond}},
			want: want{termination: "done", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "opening done", model: &Model{}, user: &User{},
			want: want{termination: "done"}},
		{name: "max_turns", model: &Model{Replies: []any{s.CallGetOrder, s.CallGetOrder, s.CallGetOrder}},
			limits: &plugin.Limits{MaxTurns: 2},
			want:   want{termination: "max_turns", turns: 2, toolCalls: 2, envCalls: 2}},
		{name: "max_turns counts format errors", model: &Model{Replies: []any{s.Garbage, s.Garbage, s.Respond}},
			limits: &plugin.Limits{MaxTurns: 2},
			want:   want{termination: "max_turns", turns: 2, formatErrors: 2}},
		{name: "max_tool_calls", model: &Model{Replies: []any{s.CallGetOrder, s.CallGetOrder, s.Respond}},
			limits: &plugin.Limits{MaxToolCalls: 1},
			want:   want{termination: "max_tool_calls", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "turn_deadline", model: &Model{Block: true},
			limits: &plugin.Limits{TurnTimeoutMs: 20},
			want:   want{termination: "turn_deadline", turns: 1}},
		{name: "episode_deadline", model: &Model{Block: true},
			limits: &plugin.Limits{TurnTimeoutMs: 60_000, EpisodeTimeoutMs: 20},
			want:   want{termination: "episode_deadline", turns: 1}},
		{name: "env error", model: &Model{Replies: []any{s.CallGetOrder, s.Respond}},
			env:  &Env{FailCall: 1, Err: envErr},
			want: want{termination: "failure", failure: "env_trap", turns: 1, envCalls: 1}},
		{name: "list tools error", model: &Model{}, env: &Env{FailList: true, Err: envErr},
			want: want{termination: "failure", failure: "env_trap"}},
		{name: "model error", model: &Model{Replies: []any{s.CallGetOrder, modelErr}},
			want: want{termination: "failure", failure: "model_unavailable", turns: 2, toolCalls: 1, envCalls: 1}},
		{name: "user error", model: &Model{Replies: []any{s.Respond}},
			user: &User{Opening: "Cancel order A1.", FailAt: 2, Err: userErr},
			want: want{termination: "failure", failure: "user_timeout", turns: 1}},
		{name: "format error then retry", model: &Model{Replies: []any{s.Garbage, s.Respond}},
			want: want{termination: "done", turns: 2, formatErrors: 1}},
		{name: "is_error result goes back", model: &Model{Replies: []any{s.CallUnknown, s.Respond}},
			want: want{termination: "done", turns: 2, toolCalls: 1, envCalls: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.env == nil {
				c.env = &Env{}
			}
			if c.user == nil {
				c.user = &User{Opening: "Cancel order A1."}
			}
			resp := Run(t, h, &Host{M: c.model, E: c.env, U: c.user}, c.limits)
			tr := resp.GetTrajectory()
			got := want{
				termination: tr.GetTermination(), failure: failureCode(resp.GetFailure()), turns: len(tr.GetTurns()),
				toolCalls: tr.GetToolCalls(), formatErrors: tr.GetFormatErrors(), envCalls: len(c.env.Calls),
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
			if len(c.model.Requests) != got.turns {
				t.Errorf("%d Generate calls for %d turns", len(c.model.Requests), got.turns)
			}
			for i, turn := range tr.GetTurns() {
				if diff := DiffMessages(c.model.Requests[i].Messages, turn.Prompt); diff != "" {
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
				if fb.Role != plugin.RoleUser || !strings.Contains(strings.ToLower(fb.Content), "could not be parsed") {
					t.Errorf("no feedback before the retry: %+v", fb)
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
				last := c.user.Requests[1].Messages
				if m := last[len(last)-1]; m.Role != plugin.RoleAssistant || m.Content != "All done." {
					t.Errorf("User.Next got %+v last", m)
				}
				if diff := DiffMessages(tr.Messages, last); diff != "" {
					t.Errorf("User.Next messages differ from the canonical ones:\n%s", diff)
				}
			}
		})
	}
}

// DiffMessages compares two message lists ("" = equal).
func DiffMessages(want, got []*plugin.Message) string {
	return Diff(&plugin.Trajectory{Messages: want}, &plugin.Trajectory{Messages: got})
}

// failureCode is the joined code of a Failure ("env_trap"; "" for none).
func failureCode(f *plugin.Failure) string {
	if f == nil {
		return ""
	}
	c, k := plugin.FailureParts(f)
	return failure.Code("", c, k)
}
