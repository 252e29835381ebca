package harnesstest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
	"google.golang.org/protobuf/proto"
)

// ResumeScript is a two-request conversation in a harness's format: the
// user asks to cancel order A1, the agent looks it up and says it is
// pending, the user confirms, the agent cancels it and says so. Each
// reply (a content string or a *plugin.Message) must be written exactly
// as the harness renders the canonical message it parses to (its
// Protocol.Render), so that a resumed prompt can equal the original one.
type ResumeScript struct {
	// GetOrder calls get_order with {"order_id":"A1"}.
	GetOrder any
	// Pending tells the user "Order A1 is pending. Cancel it?".
	Pending any
	// Cancel calls cancel_order with {"order_id":"A1"}.
	Cancel any
	// Cancelled tells the user "Order A1 is cancelled.".
	Cancelled any
	// Garbage cannot be parsed (a format-error turn).
	Garbage any
}

// Opening and confirmation of the ResumeScript conversation.
const (
	ResumeOpening = "Please cancel order A1."
	ResumeConfirm = "Yes, cancel it."
)

// resumeRun runs h on replies with history (nil = a new conversation)
// and a user who opens with opening, answers with replies, then is done.
func resumeRun(t *testing.T, h plugin.Harness, history []*plugin.Message, replies []any, opening string, userReplies ...string) (*plugin.RunEpisodeResponse, *Model, *Env, *User) {
	t.Helper()
	model := &Model{Replies: replies}
	env := &Env{}
	user := &User{Opening: opening, Replies: userReplies}
	resp := &plugin.RunEpisodeResponse{}
	req := &plugin.RunEpisodeRequest{EpisodeId: "ep1", SystemPrompt: "You are a retail agent.", History: history}
	if err := h.RunEpisode(context.Background(), &Host{M: model, E: env, U: user}, req, resp); err != nil {
		t.Fatalf("RunEpisode: %v", err)
	}
	Strip(resp)
	if tr := resp.Trajectory; resp.Failure != nil || tr.Termination != plugin.TerminationDone {
		t.Fatalf("failure %v, termination %q", resp.Failure, tr.GetTermination())
	}
	return resp, model, env, user
}

// historyBefore returns the canonical messages of tr after the system
// message and before its second user message.
func historyBefore(t *testing.T, tr *plugin.Trajectory) []*plugin.Message {
	t.Helper()
	users := 0
	for i, m := range tr.Messages {
		if m.Role == plugin.RoleUser {
			if users++; users == 2 {
				return tr.Messages[1:i]
			}
		}
	}
	t.Fatalf("no second user message in %s", RenderPrompt(tr.Messages))
	return nil
}

// Resume checks h's resuming (RunEpisodeRequest.History) with s:
//
//   - same prompt: a run of the whole conversation, then a run resumed
//     from its canonical messages before the second user message (user,
//     assistant with the get_order call, tool, assistant to the user). The
//     resumed run's prompts equal the original run's from that point on,
//     its canonical messages equal the original's (call ids included), the
//     first User.Next gets the history, turn indexes start at 0, the
//     counters cover the resumed run only and the history's call does not
//     run again;
//   - format error dropped: with a format-error turn first in the original
//     run, the resumed prompt is the original one without the unparseable
//     reply and its feedback (two messages after the opening user
//     message): format-error turns are not in the canonical messages;
//   - invalid history: RunEpisode returns an error "<name> harness:
//     history: message <i> ..." before any host call.
func Resume(t *testing.T, h plugin.Harness, s ResumeScript) {
	t.Run("same prompt", func(t *testing.T) {
		orig, om, oe, _ := resumeRun(t, h, nil, []any{s.GetOrder, s.Pending, s.Cancel, s.Cancelled}, ResumeOpening, ResumeConfirm)
		otr := orig.Trajectory
		if len(otr.Turns) != 4 || len(oe.Calls) != 2 {
			t.Fatalf("original run: %d turns, %d env calls; want 4 and 2", len(otr.Turns), len(oe.Calls))
		}
		history := historyBefore(t, otr)
		if len(history) != 4 {
			t.Fatalf("history of %d messages, want 4:\n%s", len(history), RenderPrompt(history))
		}
		res, rm, re, ru := resumeRun(t, h, history, []any{s.Cancel, s.Cancelled}, ResumeConfirm)
		tr := res.Trajectory
		if len(tr.Turns) != 2 {
			t.Fatalf("resumed run: %d turns, want 2", len(tr.Turns))
		}
		for i, turn := range tr.Turns {
			if turn.Index != int32(i) {
				t.Errorf("resumed turn %d has index %d", i, turn.Index)
			}
			if diff := DiffMessages(otr.Turns[2+i].Prompt, turn.Prompt); diff != "" {
				t.Errorf("resumed turn %d prompt differs from original turn %d (-original +resumed):\n%s", i, 2+i, diff)
			}
			if diff := Diff(om.Requests[2+i], rm.Requests[i]); diff != "" {
				t.Errorf("resumed Generate %d differs from original Generate %d (-original +resumed):\n%s", i, 2+i, diff)
			}
		}
		if diff := DiffMessages(otr.Messages, tr.Messages); diff != "" {
			t.Errorf("canonical messages (-original +resumed):\n%s", diff)
		}
		if diff := DiffMessages(history, ru.Requests[0].Messages); diff != "" {
			t.Errorf("first User.Next (-history +got):\n%s", diff)
		}
		if tr.ToolCalls != 1 || len(re.Calls) != 1 || !proto.Equal(re.Calls[0], oe.Calls[1]) {
			t.Errorf("resumed run: %d tool calls, env calls %v; want only %v", tr.ToolCalls, re.Calls, oe.Calls[1])
		}
	})
	t.Run("format error dropped", func(t *testing.T) {
		orig, _, _, _ := resumeRun(t, h, nil, []any{s.Garbage, s.GetOrder, s.Pending, s.Cancel, s.Cancelled}, ResumeOpening, ResumeConfirm)
		otr := orig.Trajectory
		if len(otr.Turns) != 5 || otr.FormatErrors != 1 {
			t.Fatalf("original run: %d turns, %d format errors; want 5 and 1", len(otr.Turns), otr.FormatErrors)
		}
		history := historyBefore(t, otr)
		res, _, _, _ := resumeRun(t, h, history, []any{s.Cancel, s.Cancelled}, ResumeConfirm)
		want := slices.Delete(slices.Clone(otr.Turns[3].Prompt), 2, 4)
		if diff := DiffMessages(want, res.Trajectory.Turns[0].Prompt); diff != "" {
			t.Errorf("resumed prompt (-original without the format-error turn +resumed):\n%s", diff)
		}
		if res.Trajectory.FormatErrors != 0 {
			t.Errorf("resumed run counts %d format errors", res.Trajectory.FormatErrors)
		}
	})
	t.Run("invalid history", func(t *testing.T) {
		var d plugin.DescribeResponse
		if err := h.Describe(context.Background(), &plugin.DescribeRequest{}, &d); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(d.Capabilities, plugin.CapabilityResume) {
			t.Errorf("capabilities %v lack %q", d.Capabilities, plugin.CapabilityResume)
		}
		call := &plugin.ToolCall{Id: "c1", Name: "get_order", Arguments: `{"order_id":"A1"}`}
		for _, c := range []struct {
			name    string
			history []*plugin.Message
			want    string
		}{
			{"system", []*plugin.Message{{Role: "system", Content: "x"}}, "message 0 (system): the history holds no system message"},
			{"tool first", []*plugin.Message{{Role: "tool", ToolCallId: "c1", Content: "x"}},
				"message 0 (tool): a tool message must follow the assistant message whose tool call it answers"},
			{"wrong call", []*plugin.Message{{Role: "user", Content: "u"}, {Role: "assistant", ToolCalls: []*plugin.ToolCall{call}},
				{Role: "tool", ToolCallId: "c2", Content: "x"}},
				`message 2 (tool): answers tool call id "c2", which the preceding assistant message (message 1) does not have`},
			{"unanswered", []*plugin.Message{{Role: "assistant", ToolCalls: []*plugin.ToolCall{call}}, {Role: "user", Content: "u"}},
				`message 0 (assistant): tool call "c1" (get_order) is not answered by a tool message before message 1`},
		} {
			model, env, user := &Model{}, &Env{}, &User{Opening: "hi"}
			req := &plugin.RunEpisodeRequest{EpisodeId: "ep1", History: c.history}
			err := h.RunEpisode(context.Background(), &Host{M: model, E: env, U: user}, req, &plugin.RunEpisodeResponse{})
			want := d.Name + " harness: history: " + c.want
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", c.name, err, want)
			}
			if len(model.Requests)+len(env.Calls)+len(user.Requests) != 0 {
				t.Errorf("%s: host services were called for an invalid history", c.name)
			}
		}
	})
}
