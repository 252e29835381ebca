package loop

import (
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
)

func calls(ids ...string) *plugin.Message {
	m := &plugin.Message{Role: plugin.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, &plugin.ToolCall{Id: id, Name: "get_order", Arguments: "{}"})
	}
	return m
}

func tool(id string) *plugin.Message {
	return &plugin.Message{Role: plugin.RoleTool, ToolCallId: id, Content: "r"}
}

func user(s string) *plugin.Message { return &plugin.Message{Role: plugin.RoleUser, Content: s} }

func TestCheckHistory(t *testing.T) {
	good := [][]*plugin.Message{
		nil,
		{user("u")},
		{user("u"), calls("a", "b"), tool("b"), tool("a"), {Role: "assistant", Content: "done"}, user("more")},
		{calls("a"), tool("a")},
		{user("u"), user("again"), {Role: "assistant"}},
	}
	for i, h := range good {
		if err := CheckHistory(h); err != nil {
			t.Errorf("good history %d: %v", i, err)
		}
	}
	bad := []struct {
		h    []*plugin.Message
		want string
	}{
		{[]*plugin.Message{nil}, "history: message 0 is nil"},
		{[]*plugin.Message{{Role: "system"}}, "history: message 0 (system): the history holds no system message"},
		{[]*plugin.Message{user("u"), {Role: "robot"}}, `history: message 1 (robot): role "robot" is not user, assistant or tool`},
		{[]*plugin.Message{{Role: "user", ToolCalls: calls("a").ToolCalls}}, "history: message 0 (user): only assistant messages have tool_calls"},
		{[]*plugin.Message{tool("a")}, "history: message 0 (tool): a tool message must follow the assistant message"},
		{[]*plugin.Message{user("u"), tool("a")}, "history: message 1 (tool): a tool message must follow"},
		{[]*plugin.Message{calls("a"), tool("a"), user("u"), tool("a")}, "history: message 3 (tool): a tool message must follow"},
		{[]*plugin.Message{calls("a"), tool("b")}, `history: message 1 (tool): answers tool call id "b", which the preceding assistant message (message 0) does not have`},
		{[]*plugin.Message{calls("a"), tool("a"), calls("b"), tool("a")}, `message 3 (tool): answers tool call id "a", which the preceding assistant message (message 2) does not have`},
		{[]*plugin.Message{calls("a"), tool("a"), tool("a")}, `history: message 2 (tool): tool call "a" is answered twice`},
		{[]*plugin.Message{calls("a", "b"), tool("a"), user("u")}, `history: message 0 (assistant): tool call "b" (get_order) is not answered by a tool message before message 2`},
		{[]*plugin.Message{user("u"), calls("a")}, `history: message 1 (assistant): tool call "a" (get_order) is not answered by a tool message before message 2`},
		{[]*plugin.Message{calls("")}, "history: message 0 (assistant): tool call 0 (get_order) has no id"},
		{[]*plugin.Message{calls("a"), tool("a"), calls("a"), tool("a")}, `history: message 2 (assistant): tool call id "a" is used twice in the history`},
		{[]*plugin.Message{{Role: "assistant", ToolCalls: []*plugin.ToolCall{{Id: "a", Name: " "}}}}, `history: message 0 (assistant): tool call "a" has no name`},
	}
	for _, c := range bad {
		err := CheckHistory(c.h)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

func TestIDBase(t *testing.T) {
	cases := []struct {
		h    []*plugin.Message
		want int
	}{
		{nil, 0},
		{[]*plugin.Message{user("u")}, 0},
		// As the harness itself numbers: one assistant message, call_0_0.
		{[]*plugin.Message{user("u"), calls("call_0_0"), tool("call_0_0"), {Role: "assistant", Content: "ok"}}, 2},
		// Format-error turns left gaps: call_4_0 in the second message.
		{[]*plugin.Message{calls("call_0_0"), tool("call_0_0"), calls("call_4_0"), tool("call_4_0")}, 5},
		// Other id shapes do not count.
		{[]*plugin.Message{calls("call_9", "call_x_1", "call_7_", "fc_8_1", "call_99999999999_0")}, 1},
	}
	for i, c := range cases {
		if got := idBase(c.h); got != c.want {
			t.Errorf("case %d: idBase = %d, want %d", i, got, c.want)
		}
	}
}
