package conformance

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// ResumeScript is a two-request conversation in a harness's format: the
// user asks to cancel order A1, the agent looks it up and says it is
// pending, the user confirms, the agent cancels it and says so. Each
// reply (a content string or a *plugin.Message) must be written exactly
// as the harness renders the canonical message it parses to, so that a
// resumed prompt can equal the original one. The environment is
// plugintest.NewOrderEnv.
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
	// BuiltinWording, when set, requires the invalid-history errors to be
	// worded as weft's built-in harnesses word them ("<name> harness:
	// history: message <i> (<role>): <why>"); otherwise an error naming
	// the faulty message ("message <i>") is enough.
	BuiltinWording bool
}

// Opening and confirmation of the ResumeScript conversation.
const (
	ResumeOpening = "Please cancel order A1."
	ResumeConfirm = "Yes, cancel it."
)

// resumeRun runs h on replies with history (nil = a new conversation)
// and a user who opens with opening, answers with replies, then is done.
func resumeRun(t *testing.T, h plugin.Harness, history []*plugin.Message, replies []any, opening string, userReplies ...string) (*plugin.RunEpisodeResponse, *plugintest.FakeModel, *plugintest.FakeEnv, *plugintest.FakeUser) {
	t.Helper()
	model := plugintest.NewFakeModel(replies...)
	env := plugintest.NewOrderEnv()
	user := plugintest.NewFakeUser(append([]string{opening}, userReplies...)...)
	resp := plugintest.Episode(t, h, plugintest.Host(model, env, user), &plugin.RunEpisodeRequest{History: history})
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
	t.Fatalf("no second user message in %s", plugintest.RenderPrompt(tr.Messages))
	return nil
}

// resumeScripted checks h's resuming (RunEpisodeRequest.History) with s,
// as subtests of t:
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
//   - invalid history: RunEpisode returns an error naming the faulty
//     message ("message <i>"; with BuiltinWording "<name> harness:
//     history: message <i> (<role>): <why>") before any host call.
func resumeScripted(t *testing.T, h plugin.Harness, s ResumeScript) {
	t.Run("same prompt", func(t *testing.T) {
		orig, om, oe, _ := resumeRun(t, h, nil, []any{s.GetOrder, s.Pending, s.Cancel, s.Cancelled}, ResumeOpening, ResumeConfirm)
		otr := orig.Trajectory
		if len(otr.Turns) != 4 || len(oe.Calls()) != 2 {
			t.Fatalf("original run: %d turns, %d env calls; want 4 and 2", len(otr.Turns), len(oe.Calls()))
		}
		history := historyBefore(t, otr)
		if len(history) != 4 {
			t.Fatalf("history of %d messages, want 4:\n%s", len(history), plugintest.RenderPrompt(history))
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
			if diff := plugintest.DiffMessages(otr.Turns[2+i].Prompt, turn.Prompt); diff != "" {
				t.Errorf("resumed turn %d prompt differs from original turn %d (-original +resumed):\n%s", i, 2+i, diff)
			}
			if diff := plugintest.Diff(om.Requests()[2+i], rm.Requests()[i]); diff != "" {
				t.Errorf("resumed Generate %d differs from original Generate %d (-original +resumed):\n%s", i, 2+i, diff)
			}
		}
		if diff := plugintest.DiffMessages(otr.Messages, tr.Messages); diff != "" {
			t.Errorf("canonical messages (-original +resumed):\n%s", diff)
		}
		if diff := plugintest.DiffMessages(history, ru.Requests()[0].Messages); diff != "" {
			t.Errorf("first User.Next (-history +got):\n%s", diff)
		}
		if rc, oc := re.Calls(), oe.Calls(); tr.ToolCalls != 1 || len(rc) != 1 || !proto.Equal(rc[0], oc[1]) {
			t.Errorf("resumed run: %d tool calls, env calls %v; want only %v", tr.ToolCalls, rc, oc[1])
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
		if diff := plugintest.DiffMessages(want, res.Trajectory.Turns[0].Prompt); diff != "" {
			t.Errorf("resumed prompt (-original without the format-error turn +resumed):\n%s", diff)
		}
		if res.Trajectory.FormatErrors != 0 {
			t.Errorf("resumed run counts %d format errors", res.Trajectory.FormatErrors)
		}
	})
	t.Run("invalid history", func(t *testing.T) {
		var d plugin.DescribeResponse
		if err := h.Describe(t.Context(), &plugin.DescribeRequest{}, &d); err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(d.Capabilities, plugin.CapabilityResume) {
			t.Errorf("capabilities %v lack %q", d.Capabilities, plugin.CapabilityResume)
		}
		call := &plugin.ToolCall{Id: "c1", Name: "get_order", Arguments: `{"order_id":"A1"}`}
		for _, c := range []struct {
			name    string
			history []*plugin.Message
			index   int    // the faulty message
			want    string // the built-in wording after "message <index> "
		}{
			{"system", []*plugin.Message{{Role: "system", Content: "x"}}, 0, "(system): the history holds no system message"},
			{"tool first", []*plugin.Message{{Role: "tool", ToolCallId: "c1", Content: "x"}}, 0,
				"(tool): a tool message must follow the assistant message whose tool call it answers"},
			{"wrong call", []*plugin.Message{{Role: "user", Content: "u"}, {Role: "assistant", ToolCalls: []*plugin.ToolCall{call}},
				{Role: "tool", ToolCallId: "c2", Content: "x"}}, 2,
				`(tool): answers tool call id "c2", which the preceding assistant message (message 1) does not have`},
			{"unanswered", []*plugin.Message{{Role: "assistant", ToolCalls: []*plugin.ToolCall{call}}, {Role: "user", Content: "u"}}, 0,
				`(assistant): tool call "c1" (get_order) is not answered by a tool message before message 1`},
		} {
			model, env, user := plugintest.NewFakeModel(), plugintest.NewOrderEnv(), plugintest.NewFakeUser("hi")
			req := &plugin.RunEpisodeRequest{EpisodeId: "ep1", History: c.history}
			err := h.RunEpisode(t.Context(), plugintest.Host(model, env, user), req, &plugin.RunEpisodeResponse{})
			want := fmt.Sprintf("message %d ", c.index)
			if s.BuiltinWording {
				want = d.Name + " harness: history: " + want + c.want
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", c.name, err, want)
			}
			if len(model.Requests())+len(env.Calls())+len(user.Requests()) != 0 {
				t.Errorf("%s: host services were called for an invalid history", c.name)
			}
		}
	})
}
