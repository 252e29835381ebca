package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
	"google.golang.org/protobuf/proto"
)

// Parsed is a protocol's reading of one assistant message.
//
// Three shapes:
//   - Calls non-empty: the calls run in order (FormatError may also be set
//     when some of the message's calls could not be read; the readable
//     ones still run and the feedback goes back with their results);
//   - no Calls, FormatError set: a format-error turn; the message is kept
//     out of the canonical conversation and feedback goes to the model;
//   - no Calls, no FormatError: a message to the user.
type Parsed struct {
	// Calls to run, in order, each with its id. Run keeps ids unique in
	// the conversation: it rewrites in place (c.Id) the id of a call that is
	// empty or already used (in the history or by an earlier call), so
	// Canonical.ToolCalls and Prompt's tool calls must hold the same
	// *ToolCall values as Calls when they carry ids.
	Calls []*plugin.ToolCall
	// Canonical is the assistant message for the canonical trajectory:
	// content without call markup, tool_calls = Calls. Unused for a
	// format-error turn without calls.
	Canonical *plugin.Message
	// FormatError says why (part of) the message could not be read.
	FormatError string
	// Prompt is the assistant message as it goes back into later prompts;
	// nil means the response's role, content and tool calls (reasoning
	// text dropped).
	Prompt *plugin.Message
}

// Protocol is what a harness supplies for one episode.
type Protocol interface {
	// Format is the output format the model is asked for.
	Format() plugin.OutputFormat
	// Offer returns the tools offered to the model, from the tools Env
	// lists (a subset, in order).
	Offer(listed []*plugin.Tool) []*plugin.Tool
	// NativeTools reports whether the offered tools go in
	// GenerateRequest.Tools (native function calling) rather than in the
	// system prompt.
	NativeTools() bool
	// System renders the system message content from the domain policy
	// (RunEpisodeRequest.SystemPrompt) and the offered tools.
	System(policy string, offered []*plugin.Tool) string
	// Parse reads one assistant message. turn is the number to use in the
	// ids of the calls it assigns (CallID(turn, i)): the run's 0-based turn
	// index plus the offset that keeps them clear of the history's ids
	// (see Run).
	Parse(msg *plugin.Message, turn int) Parsed
	// Render returns the prompt form of a canonical assistant message of
	// the history (RunEpisodeRequest.History): the message as this protocol
	// would have put its own parsed turn back into the prompt, so that a
	// resumed conversation reads as if the harness had produced it. It must
	// not modify canonical.
	Render(canonical *plugin.Message) *plugin.Message
	// Refuse reports whether the harness refuses call itself (the call
	// never reaches Env) and the error text the model gets instead.
	Refuse(call *plugin.ToolCall) (reason string, refused bool)
	// Observe renders the prompt messages that follow an assistant turn:
	// the results of its calls, in call order (possibly none), then the
	// corrective feedback for formatError when it is non-empty.
	Observe(results []*plugin.ToolResult, formatError string) []*plugin.Message
}

// Run drives one episode with p and fills resp.Trajectory (and
// resp.Failure on a host failure; the partial trajectory is kept). Host
// failures are resp.Failure, never an error; the only error is an invalid
// req.History (see CheckHistory), returned before any host call.
//
// Resuming (req.History non-empty): the history follows the system message
// in Trajectory.Messages as given (cloned), and goes into the prompt in the
// protocol's format: user messages as they are, assistant messages as
// p.Render gives them, and each run of tool messages after an assistant
// message as p.Observe of their results (call id, name, content; tool
// messages carry no is_error, so an error result is rendered like any
// other). The first User.Next gets the history; the first generation
// follows the user message it returns. The prompt is then the one the
// harness would have built had it produced the history itself, except for
// what the canonical messages do not keep (format-error turns and their
// feedback, the raw text of text-protocol replies, is_error marks).
// History calls do not run again. Turn indexes, limits and the
// Trajectory's counters cover this run only; the ids of new calls never
// repeat a history id: Parse gets turn numbers offset by the number of
// assistant messages in the history, raised past any history id of the
// form "call_<k>_<i>", and a call whose id is still taken is renamed.
//
// Limits (req.Limits; 0 = none): max_turns counts generations (format-error
// turns included) and ends with "max_turns" before the generation past
// it; max_tool_calls ends with "max_tool_calls" before the call that would
// exceed it, even mid-message (the turn's Calls keep every parsed call; the
// canonical assistant message, Results and tool messages only the calls
// that ran, so every canonical tool call is answered); turn_timeout_ms bounds one Generate plus the turn's calls
// ("turn_deadline"); episode_timeout_ms bounds the whole episode, User
// included ("episode_deadline"). A deadline is a termination, not a
// failure. Any other error of a host call ends the episode with
// termination "failure" and resp.Failure = plugin.FailureFromError(err).
//
// Turns are 0-based; Turn.DurationMs is wall-clock milliseconds of the
// generation, the calls and the user's reply. Format-error turns without
// calls stay out of the canonical messages (Trajectory.Messages), which
// are what User.Next receives.
func Run(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse, p Protocol) error {
	if err := CheckHistory(req.GetHistory()); err != nil {
		return err
	}
	r := &runner{parent: ctx, host: host, req: req, p: p, tr: &plugin.Trajectory{},
		used: map[string]bool{}, idBase: idBase(req.GetHistory())}
	resp.Trajectory = r.tr
	lim := req.GetLimits()
	r.ep = ctx
	if ms := lim.GetEpisodeTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		r.ep, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	err := r.run()
	var e *ended
	if errors.As(err, &e) {
		r.tr.Termination = e.termination
		return nil
	}
	r.tr.Termination = plugin.TerminationFailure
	resp.Failure = plugin.FailureFromError(err)
	return nil
}

// ended is how the loop stops without a failure.
type ended struct{ termination string }

func (e *ended) Error() string { return "episode ended: " + e.termination }

type runner struct {
	parent, ep context.Context
	host       plugin.Host
	req        *plugin.RunEpisodeRequest
	p          Protocol
	tr         *plugin.Trajectory
	prompt     []*plugin.Message // what the model sees
	used       map[string]bool   // call ids of the conversation so far
	idBase     int               // added to turn indexes for call ids
}

func end(termination string) error { return &ended{termination} }

// classify turns a host call's error into the episode's end: a deadline of
// the episode or of the turn is a limit, anything else a failure.
func (r *runner) classify(err error, turn context.Context) error {
	if r.parent.Err() == nil {
		if r.ep.Err() != nil {
			return end(plugin.TerminationEpisodeDeadline)
		}
		if turn != nil && turn.Err() != nil {
			return end(plugin.TerminationTurnDeadline)
		}
	}
	return err
}

func (r *runner) run() error {
	lim := r.req.GetLimits()
	var lt plugin.ListToolsResponse
	if err := r.host.Env().ListTools(r.ep, &plugin.ListToolsRequest{}, &lt); err != nil {
		return r.classify(err, nil)
	}
	offered := r.p.Offer(lt.Tools)
	system := &plugin.Message{Role: plugin.RoleSystem, Content: r.p.System(r.req.GetSystemPrompt(), offered)}
	r.tr.Messages = []*plugin.Message{system}
	r.prompt = []*plugin.Message{system}
	r.resume()

	var ur plugin.UserResponse
	opening := &plugin.UserRequest{Messages: slices.Clone(r.tr.Messages[1:])}
	if err := r.host.User().Next(r.ep, opening, &ur); err != nil {
		return r.classify(err, nil)
	}
	if ur.Done {
		return end(plugin.TerminationDone)
	}
	r.addUser(ur.Content)

	for turn := 0; ; turn++ {
		if m := lim.GetMaxTurns(); m > 0 && turn >= int(m) {
			return end(plugin.TerminationMaxTurns)
		}
		if r.ep.Err() != nil {
			return r.classify(r.ep.Err(), nil)
		}
		if err := r.turn(turn, offered); err != nil {
			return err
		}
	}
}

// resume appends the history to the canonical messages and renders it
// into the prompt (see Run); it has been checked by CheckHistory.
func (r *runner) resume() {
	hist := r.req.GetHistory()
	for i := 0; i < len(hist); {
		m := proto.Clone(hist[i]).(*plugin.Message)
		i++
		r.tr.Messages = append(r.tr.Messages, m)
		if m.Role != plugin.RoleAssistant {
			r.prompt = append(r.prompt, m)
			continue
		}
		names := map[string]string{}
		for _, c := range m.ToolCalls {
			r.used[c.Id] = true
			names[c.Id] = c.Name
		}
		r.prompt = append(r.prompt, r.p.Render(m))
		var results []*plugin.ToolResult
		for ; i < len(hist) && hist[i].GetRole() == plugin.RoleTool; i++ {
			t := proto.Clone(hist[i]).(*plugin.Message)
			r.tr.Messages = append(r.tr.Messages, t)
			name := t.Name
			if name == "" {
				name = names[t.ToolCallId]
			}
			results = append(results, &plugin.ToolResult{CallId: t.ToolCallId, Name: name, Content: t.Content})
		}
		if len(results) > 0 {
			r.prompt = append(r.prompt, r.p.Observe(results, "")...)
		}
	}
}

// CheckHistory checks a RunEpisodeRequest.History: every message is a
// user, assistant or tool message; every tool call of an assistant
// message has an id unique in the history and a name; tool messages
// directly follow the assistant message whose calls they answer, each
// answering a different one of its calls, and every call is answered
// before the next user or assistant message. An error names the message
// (0-based index in the history) and what is wrong with it.
func CheckHistory(history []*plugin.Message) error {
	bad := func(i int, format string, a ...any) error {
		return fmt.Errorf("history: message %d (%s): %s", i, history[i].GetRole(), fmt.Sprintf(format, a...))
	}
	ids := map[string]bool{}
	var open map[string]bool // calls of the last assistant message: id -> answered
	last := -1               // index of that assistant message
	unanswered := func(before int) error {
		for _, c := range history[last].GetToolCalls() {
			if !open[c.Id] {
				return bad(last, "tool call %q (%s) is not answered by a tool message before message %d", c.Id, c.Name, before)
			}
		}
		return nil
	}
	for i, m := range history {
		if m == nil {
			return fmt.Errorf("history: message %d is nil", i)
		}
		if m.Role != plugin.RoleTool && last >= 0 {
			if err := unanswered(i); err != nil {
				return err
			}
			open, last = nil, -1
		}
		if m.Role != plugin.RoleAssistant && len(m.ToolCalls) > 0 {
			return bad(i, "only assistant messages have tool_calls")
		}
		switch m.Role {
		case plugin.RoleUser:
		case plugin.RoleAssistant:
			open, last = map[string]bool{}, i
			for k, c := range m.ToolCalls {
				switch {
				case c.GetId() == "":
					return bad(i, "tool call %d (%s) has no id", k, c.GetName())
				case ids[c.Id]:
					return bad(i, "tool call id %q is used twice in the history", c.Id)
				case strings.TrimSpace(c.Name) == "":
					return bad(i, "tool call %q has no name", c.Id)
				}
				ids[c.Id] = true
				open[c.Id] = false
			}
		case plugin.RoleTool:
			answered, ok := open[m.ToolCallId]
			switch {
			case last < 0:
				return bad(i, "a tool message must follow the assistant message whose tool call it answers")
			case !ok:
				return bad(i, "answers tool call id %q, which the preceding assistant message (message %d) does not have", m.ToolCallId, last)
			case answered:
				return bad(i, "tool call %q is answered twice", m.ToolCallId)
			}
			open[m.ToolCallId] = true
		case plugin.RoleSystem:
			return bad(i, "the history holds no system message (the harness renders its own)")
		default:
			return bad(i, "role %q is not user, assistant or tool", m.Role)
		}
	}
	if last >= 0 {
		return unanswered(len(history))
	}
	return nil
}

// idBase is the number added to a resumed run's turn indexes in its call
// ids: the number of assistant messages in history, raised past k for
// every history id "call_<k>_<i>" (CallID's form), so that CallID never
// gives a history id again.
func idBase(history []*plugin.Message) int {
	assistants, past := 0, 0
	for _, m := range history {
		if m.GetRole() != plugin.RoleAssistant {
			continue
		}
		assistants++
		for _, c := range m.ToolCalls {
			if k, ok := callIDTurn(c.GetId()); ok && k >= past {
				past = k + 1
			}
		}
	}
	return max(assistants, past)
}

// callIDTurn reads k of an id "call_<k>_<i>" (decimal, k below 1<<30).
func callIDTurn(id string) (int, bool) {
	rest, ok := strings.CutPrefix(id, "call_")
	if !ok {
		return 0, false
	}
	ks, is, ok := strings.Cut(rest, "_")
	if !ok || !digits(ks) || !digits(is) || len(ks) > 9 {
		return 0, false
	}
	k, err := strconv.Atoi(ks)
	return k, err == nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// uniqueIDs gives every call of parsed an id unused in the conversation:
// an empty or taken id becomes CallID(turn, i), with a "_<n>" suffix if
// that is taken too. It rewrites the *ToolCall values in place.
func (r *runner) uniqueIDs(calls []*plugin.ToolCall, turn int) {
	for i, c := range calls {
		if c.Id == "" || r.used[c.Id] {
			id := CallID(turn, i)
			for n := 1; r.used[id]; n++ {
				id = fmt.Sprintf("%s_%d", CallID(turn, i), n)
			}
			c.Id = id
		}
		r.used[c.Id] = true
	}
}

func (r *runner) addUser(content string) {
	m := &plugin.Message{Role: plugin.RoleUser, Content: content}
	r.tr.Messages = append(r.tr.Messages, m)
	r.prompt = append(r.prompt, m)
}

// turn runs one model generation and what follows it; a nil error means
// the episode goes on.
func (r *runner) turn(index int, offered []*plugin.Tool) error {
	start := time.Now()
	tctx := r.ep
	if ms := r.req.GetLimits().GetTurnTimeoutMs(); ms > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeout(r.ep, time.Duration(ms)*time.Millisecond)
		defer cancel()
	}
	t := &plugin.Turn{Index: int32(index), Prompt: slices.Clone(r.prompt)}
	r.tr.Turns = append(r.tr.Turns, t)
	defer func() { t.DurationMs = time.Since(start).Milliseconds() }()

	greq := &plugin.GenerateRequest{Messages: t.Prompt, Sampling: r.req.GetSampling(), Format: r.p.Format()}
	if r.p.NativeTools() {
		greq.Tools = offered
	}
	var gr plugin.GenerateResponse
	if err := r.host.Model().Generate(tctx, greq, &gr); err != nil {
		return r.classify(err, tctx)
	}
	msg := gr.Message
	if msg == nil {
		msg = &plugin.Message{Role: plugin.RoleAssistant}
	}
	t.Response = msg
	parsed := r.p.Parse(msg, r.idBase+index)
	r.uniqueIDs(parsed.Calls, r.idBase+index)
	t.Calls = parsed.Calls
	t.FormatError = parsed.FormatError
	if parsed.FormatError != "" {
		r.tr.FormatErrors++
	}
	if parsed.Prompt != nil {
		r.prompt = append(r.prompt, parsed.Prompt)
	} else {
		r.prompt = append(r.prompt, promptAssistant(msg))
	}

	if len(parsed.Calls) == 0 && parsed.FormatError != "" {
		r.prompt = append(r.prompt, r.p.Observe(nil, parsed.FormatError)...)
		return nil
	}
	r.tr.Messages = append(r.tr.Messages, parsed.Canonical)

	if len(parsed.Calls) > 0 {
		for _, c := range parsed.Calls {
			if m := r.req.GetLimits().GetMaxToolCalls(); m > 0 && r.tr.ToolCalls >= m {
				answeredOnly(parsed.Canonical, t.Results)
				return end(plugin.TerminationMaxToolCalls)
			}
			res, err := r.call(tctx, c)
			if err != nil {
				answeredOnly(parsed.Canonical, t.Results)
				return r.classify(err, tctx)
			}
			r.tr.ToolCalls++
			t.Results = append(t.Results, res)
			r.tr.Messages = append(r.tr.Messages, &plugin.Message{
				Role: plugin.RoleTool, Content: res.Content, ToolCallId: res.CallId, Name: res.Name,
			})
		}
		r.prompt = append(r.prompt, r.p.Observe(t.Results, parsed.FormatError)...)
		return nil
	}

	var ur plugin.UserResponse
	if err := r.host.User().Next(r.ep, &plugin.UserRequest{Messages: slices.Clone(r.tr.Messages)}, &ur); err != nil {
		return r.classify(err, nil)
	}
	t.UserReply = ur.Content
	if ur.Done {
		return end(plugin.TerminationDone)
	}
	r.addUser(ur.Content)
	return nil
}

// answeredOnly drops from the canonical assistant message the tool calls
// that never ran (the episode ended mid-message), so every tool call in
// Trajectory.Messages is answered by a tool message, as chat-completions
// data must be; Turn.Calls keeps every parsed call.
func answeredOnly(canonical *plugin.Message, results []*plugin.ToolResult) {
	if canonical == nil {
		return
	}
	ran := make(map[string]bool, len(results))
	for _, res := range results {
		ran[res.CallId] = true
	}
	var kept []*plugin.ToolCall
	for _, c := range canonical.ToolCalls {
		if ran[c.Id] {
			kept = append(kept, c)
		}
	}
	canonical.ToolCalls = kept
}

func (r *runner) call(ctx context.Context, c *plugin.ToolCall) (*plugin.ToolResult, error) {
	if reason, refused := r.p.Refuse(c); refused {
		return &plugin.ToolResult{CallId: c.Id, Name: c.Name, Content: reason, IsError: true}, nil
	}
	var cr plugin.CallToolResponse
	args := c.Arguments
	if args == "" {
		args = "{}"
	}
	if err := r.host.Env().CallTool(ctx, &plugin.CallToolRequest{Name: c.Name, Arguments: args, CallId: c.Id}, &cr); err != nil {
		return nil, err
	}
	return &plugin.ToolResult{
		CallId: c.Id, Name: c.Name, Content: cr.Content, IsError: cr.IsError,
		LedgerIndex: proto.Uint64(cr.LedgerIndex),
	}, nil
}

// promptAssistant is the assistant message as it goes back into the
// prompt: the response's role, content and tool calls (reasoning text
// dropped).
func promptAssistant(m *plugin.Message) *plugin.Message {
	return &plugin.Message{Role: plugin.RoleAssistant, Content: m.GetContent(), ToolCalls: m.GetToolCalls()}
}

// CallID is the id a text protocol gives the i-th call (0-based) of turn
// (0-based): "call_<turn>_<i>".
func CallID(turn, i int) string { return fmt.Sprintf("call_%d_%d", turn, i) }

// DecodeSettings decodes a harness's settings JSON object into v, strictly:
// "" leaves v as is (the defaults); unknown fields, trailing data or a
// non-object are an error naming the harness.
func DecodeSettings(harness, settings string, v any) error {
	if settings == "" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(settings)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s harness: settings: %v", harness, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%s harness: settings: trailing data after the JSON object", harness)
	}
	return nil
}

// Schema returns t's input schema as JSON for rendering in a prompt: the
// schema as given when it is a valid JSON object, else {"type":"object"}.
func Schema(t *plugin.Tool) json.RawMessage {
	js, _ := plugin.ValueJSON(t.GetInputSchema())
	s := bytes.TrimSpace(js)
	var obj map[string]json.RawMessage
	if len(s) == 0 || json.Unmarshal(s, &obj) != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, s) != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	return buf.Bytes()
}
