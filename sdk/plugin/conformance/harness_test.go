package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

// testHarness is a small harness speaking native, Hermes or ReAct (or, as
// a "custom" format, Hermes under OUTPUT_FORMAT_UNSPECIFIED). Its flaws
// make the broken harnesses the conformance tests must catch.
type testHarness struct {
	format plugin.OutputFormat
	schema string

	ignoreMaxTurns   bool // never checks max_turns
	panicOnGarbage   bool // panics on unparseable output
	dropResults      bool // tool results never reach the model
	returnHostErrors bool // returns host errors instead of a Failure
	noResume         bool // does not declare the resume capability
	ignoreHistory    bool // declares resume but ignores the history
	historyIDs       bool // numbers calls from 0 in a resumed run (reusing history ids)
	ignoreOpenDone   bool // runs the episode though the user is done at the opening
}

func (h *testHarness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version, resp.Format, resp.SettingsSchema = "test-harness", "0.1.0", h.format, schemaValue(h.schema)
	if !h.noResume {
		resp.Capabilities = []string{plugin.CapabilityResume}
	}
	return nil
}

var hermesRE = regexp.MustCompile(`(?s)<tool_call>(.*?)</tool_call>`)

type action struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// parse returns the calls of an answer, or the message it says to the user.
func (h *testHarness) parse(m *plugin.Message, turn int) ([]*plugin.ToolCall, string, error) {
	var acts []action
	switch h.format {
	case plugin.FormatNative:
		if len(m.ToolCalls) == 0 && m.Content == "" {
			return nil, "", errors.New("empty answer")
		}
		return m.ToolCalls, m.Content, nil
	case plugin.FormatReAct:
		_, after, ok := strings.Cut(m.Content, "Action:")
		var a action
		if !ok || json.Unmarshal([]byte(after), &a) != nil {
			return nil, "", errors.New("no JSON Action")
		}
		if a.Name == "respond" {
			var r struct{ Content string }
			err := json.Unmarshal(a.Arguments, &r)
			return nil, r.Content, err
		}
		acts = []action{a}
	default:
		blocks := hermesRE.FindAllStringSubmatch(m.Content, -1)
		if len(blocks) == 0 && strings.Contains(m.Content, "<tool_call>") || m.Content == "" {
			return nil, "", errors.New("unterminated <tool_call>")
		}
		if len(blocks) == 0 {
			return nil, m.Content, nil
		}
		for _, b := range blocks {
			var a action
			if err := json.Unmarshal([]byte(b[1]), &a); err != nil {
				return nil, "", fmt.Errorf("bad <tool_call> JSON: %v", err)
			}
			acts = append(acts, a)
		}
	}
	var calls []*plugin.ToolCall
	for i, a := range acts {
		calls = append(calls, &plugin.ToolCall{Id: fmt.Sprintf("call_%d_%d", turn, i), Name: a.Name, Arguments: string(a.Arguments)})
	}
	return calls, "", nil
}

// render writes history messages as this harness prompts its own turns.
func (h *testHarness) render(history []*plugin.Message) []*plugin.Message {
	var out []*plugin.Message
	for _, m := range history {
		switch {
		case h.format == plugin.FormatNative:
			out = append(out, m)
		case m.Role == plugin.RoleTool:
			out = append(out, &plugin.Message{Role: plugin.RoleUser, Content: "<tool_response>" + m.Content + "</tool_response>"})
		case m.Role == plugin.RoleAssistant && len(m.ToolCalls) > 0:
			text := m.Content
			for _, c := range m.ToolCalls {
				call := fmt.Sprintf("{\"name\":%q,\"arguments\":%s}", c.Name, c.Arguments)
				if h.format == plugin.FormatReAct {
					text += "Action: " + call
					break // one action a turn
				}
				text += "<tool_call>" + call + "</tool_call>"
			}
			out = append(out, &plugin.Message{Role: plugin.RoleAssistant, Content: text})
		default:
			out = append(out, m)
		}
	}
	return out
}

func (h *testHarness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	if settings := plugin.SettingsJSON(req.Settings); h.schema != "" && settings != "" {
		var s map[string]any
		if err := json.Unmarshal([]byte(settings), &s); err != nil || len(s) > 0 {
			return fmt.Errorf("settings %s: this harness takes none", settings)
		}
	}
	tr := &plugin.Trajectory{}
	resp.Trajectory = tr
	lim := req.GetLimits()
	parent := ctx
	if ms := lim.GetEpisodeTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	stop := func(err error, tctx context.Context) error {
		switch {
		case ctx.Err() != nil && parent.Err() == nil:
			tr.Termination = plugin.TerminationEpisodeDeadline
		case tctx != nil && tctx.Err() != nil && ctx.Err() == nil:
			tr.Termination = plugin.TerminationTurnDeadline
		case h.returnHostErrors:
			return err
		default:
			tr.Termination, resp.Failure = plugin.TerminationFailure, plugin.FailureFromError(err)
		}
		return nil
	}
	var tools plugin.ListToolsResponse
	if err := host.Env().ListTools(ctx, &plugin.ListToolsRequest{}, &tools); err != nil {
		return stop(err, nil)
	}
	history := req.History
	if h.ignoreHistory || h.noResume {
		history = nil
	}
	var open plugin.UserResponse
	if err := host.User().Next(ctx, &plugin.UserRequest{Messages: slices.Clone(history)}, &open); err != nil {
		return stop(err, nil)
	}
	sys := req.SystemPrompt + "\nTools:"
	for _, t := range tools.Tools {
		sys += "\n" + t.Name + ": " + t.Description
	}
	system := &plugin.Message{Role: plugin.RoleSystem, Content: sys}
	if open.Done && !h.ignoreOpenDone {
		tr.Messages = append([]*plugin.Message{system}, history...)
		tr.Termination = plugin.TerminationDone
		return nil
	}
	user := &plugin.Message{Role: plugin.RoleUser, Content: open.Content}
	prompt := append(append([]*plugin.Message{system}, h.render(history)...), user)
	tr.Messages = append(append([]*plugin.Message{system}, history...), user)
	idBase := 0 // turn numbers in call ids start past the history's
	for _, m := range history {
		if m.Role == plugin.RoleAssistant && !h.historyIDs {
			idBase++
		}
	}
	for turn := 0; ; turn++ {
		if m := lim.GetMaxTurns(); m > 0 && turn >= int(m) && !h.ignoreMaxTurns {
			tr.Termination = plugin.TerminationMaxTurns
			return nil
		}
		tctx, cancel := ctx, context.CancelFunc(func() {})
		if ms := lim.GetTurnTimeoutMs(); ms > 0 {
			tctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		}
		term, err := h.turn(tctx, host, req, tr, &prompt, tools.Tools, turn, idBase)
		if err != nil {
			err = stop(err, tctx)
		}
		cancel()
		if err != nil || term != "" || tr.Termination != "" {
			if tr.Termination == "" {
				tr.Termination = term
			}
			return err
		}
	}
}

// turn runs one turn; it returns a termination when the episode ends.
func (h *testHarness) turn(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, tr *plugin.Trajectory, prompt *[]*plugin.Message, tools []*plugin.Tool, n, idBase int) (string, error) {
	g := &plugin.GenerateRequest{Messages: *prompt, Sampling: req.Sampling, Format: h.format}
	if h.format == plugin.FormatNative {
		g.Tools = tools
	}
	var out plugin.GenerateResponse
	if err := host.Model().Generate(ctx, g, &out); err != nil {
		return "", err
	}
	t := &plugin.Turn{Index: int32(n), Prompt: slices.Clone(*prompt), Response: out.Message}
	tr.Turns = append(tr.Turns, t)
	calls, say, err := h.parse(out.Message, idBase+n)
	*prompt = append(*prompt, out.Message)
	if err != nil {
		if h.panicOnGarbage {
			panic("cannot parse: " + err.Error())
		}
		t.FormatError = err.Error()
		tr.FormatErrors++
		tr.Messages = append(tr.Messages, &plugin.Message{Role: plugin.RoleAssistant, Content: out.Message.Content})
		*prompt = append(*prompt, &plugin.Message{Role: plugin.RoleUser, Content: "Your answer could not be parsed: " + err.Error()})
		return "", nil
	}
	tr.Messages = append(tr.Messages, &plugin.Message{Role: plugin.RoleAssistant, Content: say, ToolCalls: calls})
	if len(calls) == 0 {
		var ur plugin.UserResponse
		if err := host.User().Next(ctx, &plugin.UserRequest{Messages: slices.Clone(tr.Messages)}, &ur); err != nil {
			return "", err
		}
		t.UserReply = ur.Content
		if ur.Done {
			return plugin.TerminationDone, nil
		}
		msg := &plugin.Message{Role: plugin.RoleUser, Content: ur.Content}
		tr.Messages, *prompt = append(tr.Messages, msg), append(*prompt, msg)
		return "", nil
	}
	t.Calls = calls
	over := false
	for _, c := range calls {
		res := &plugin.ToolResult{CallId: c.Id, Name: c.Name}
		if m := req.GetLimits().GetMaxToolCalls(); m > 0 && tr.ToolCalls >= m {
			res.Content, res.IsError, over = "not run: max_tool_calls reached", true, true
		} else {
			var cr plugin.CallToolResponse
			if err := host.Env().CallTool(ctx, &plugin.CallToolRequest{Name: c.Name, Arguments: c.Arguments, CallId: c.Id}, &cr); err != nil {
				return "", err
			}
			tr.ToolCalls++
			res.Content, res.IsError, res.LedgerIndex = cr.Content, cr.IsError, &cr.LedgerIndex
		}
		t.Results = append(t.Results, res)
		msg := &plugin.Message{Role: plugin.RoleTool, Content: res.Content, ToolCallId: c.Id, Name: c.Name}
		tr.Messages = append(tr.Messages, msg)
		if !h.dropResults {
			if h.format != plugin.FormatNative {
				msg = &plugin.Message{Role: plugin.RoleUser, Content: "<tool_response>" + res.Content + "</tool_response>"}
			}
			*prompt = append(*prompt, msg)
		}
	}
	if over {
		return plugin.TerminationMaxToolCalls, nil
	}
	return "", nil
}

// schemaValue is the settings schema JSON as a Value (nil for "").
func schemaValue(s string) *plugin.Value {
	if s == "" {
		return nil
	}
	return plugin.MustJSONValue(s)
}
