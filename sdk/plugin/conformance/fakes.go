package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
)

// Tools the fake environment offers.
const (
	// toolEcho returns "echo: " + its "text" argument.
	toolEcho = "echo"
	// toolLookup always answers with a tool error naming its "order_id".
	toolLookup = "lookup_order"
)

// call is one tool call the scripted model means to make.
type call struct {
	name string
	args map[string]any
}

// step is what the scripted model does on one Generate.
type step struct {
	calls   []call // tool calls to make
	say     string // a message to the user (when no calls)
	garbage bool   // output the harness cannot parse
	block   bool   // block until the request's context ends
	err     error  // fail the Generate with this error
}

// script picks the step of the n-th Generate (0-based) of an episode.
type script func(n int) step

// fakeModel answers Generate by script, rendering each step in the
// harness's declared format, and records what it received and returned.
type fakeModel struct {
	format plugin.OutputFormat
	codec  plugin.Model // custom formats: renders native-shaped intents
	script script
	// max is the most Generate calls the model answers; the next one fails
	// with a HostError of kind "conformance_cap" so that a harness ignoring
	// its limits still ends.
	max int
	// barrier, if set, is called before the first answer (concurrency).
	barrier func(ctx context.Context) error

	mu     sync.Mutex
	reqs   []*plugin.GenerateRequest
	resps  []*plugin.Message
	capHit bool
}

func (m *fakeModel) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, proto.Clone(req).(*plugin.GenerateRequest))
	if n >= m.max {
		m.capHit = true
		m.mu.Unlock()
		return &plugin.HostError{Service: "model", Kind: "conformance_cap",
			Message: fmt.Sprintf("conformance: the harness asked for more than %d generations in one episode", m.max)}
	}
	m.mu.Unlock()
	if n == 0 && m.barrier != nil {
		if err := m.barrier(ctx); err != nil {
			return err
		}
	}
	st := m.script(n)
	switch {
	case st.err != nil:
		return st.err
	case st.block:
		<-ctx.Done()
		return ctx.Err()
	}
	msg, finish, err := m.render(ctx, n, st)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.resps = append(m.resps, proto.Clone(msg).(*plugin.Message))
	m.mu.Unlock()
	resp.Message = msg
	resp.FinishReason = finish
	resp.Usage = &plugin.Usage{PromptTokens: 10, CompletionTokens: 5}
	resp.Model = "conformance-scripted"
	return nil
}

// requests returns the Generate requests received so far and the messages
// answered (one fewer than requests when the last Generate failed).
func (m *fakeModel) requests() ([]*plugin.GenerateRequest, []*plugin.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*plugin.GenerateRequest(nil), m.reqs...), append([]*plugin.Message(nil), m.resps...)
}

func argsJSON(args map[string]any) string {
	b, err := json.Marshal(args)
	if err != nil {
		panic(err) // the scripts only use strings
	}
	return string(b)
}

// render writes step st of the n-th turn as an assistant message in the
// model's format; it returns the message and its finish reason.
func (m *fakeModel) render(ctx context.Context, n int, st step) (*plugin.Message, string, error) {
	msg := &plugin.Message{Role: plugin.RoleAssistant}
	switch m.format {
	case plugin.FormatNative:
		for i, c := range st.calls {
			msg.ToolCalls = append(msg.ToolCalls, &plugin.ToolCall{
				Id: fmt.Sprintf("call_conf_%d_%d", n, i), Name: c.name, Arguments: argsJSON(c.args)})
		}
		if !st.garbage && len(st.calls) == 0 {
			msg.Content = st.say
		}
		// garbage: no content and no tool calls.
	case plugin.FormatHermes:
		var parts []string
		for _, c := range st.calls {
			parts = append(parts, fmt.Sprintf("<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.name, argsJSON(c.args)))
		}
		switch {
		case st.garbage:
			msg.Content = "<tool_call>\n{\"name\": \"echo\", \"arguments\": {\"text\": \n</tool_call>"
		case len(parts) > 0:
			msg.Content = strings.Join(parts, "\n")
		default:
			msg.Content = st.say
		}
	case plugin.FormatReAct:
		switch {
		case st.garbage:
			msg.Content = "Thought:\nI am not sure what to do.\nAction:\nsomething that is not JSON"
		case len(st.calls) > 0:
			c := st.calls[0] // ReAct has one action per turn
			msg.Content = fmt.Sprintf("Thought:\nI should call %s.\nAction:\n{\"name\": %q, \"arguments\": %s}", c.name, c.name, argsJSON(c.args))
		default:
			msg.Content = fmt.Sprintf("Thought:\nI can answer the user now.\nAction:\n{\"name\": \"respond\", \"arguments\": %s}",
				argsJSON(map[string]any{"content": st.say}))
		}
	default:
		intent := &plugin.Message{Role: plugin.RoleAssistant}
		for i, c := range st.calls {
			intent.ToolCalls = append(intent.ToolCalls, &plugin.ToolCall{
				Id: fmt.Sprintf("call_conf_%d_%d", n, i), Name: c.name, Arguments: argsJSON(c.args)})
		}
		if !st.garbage && len(st.calls) == 0 {
			intent.Content = st.say
		}
		var out plugin.GenerateResponse
		err := m.codec.Generate(ctx, &plugin.GenerateRequest{Messages: []*plugin.Message{intent}, Format: m.format}, &out)
		if err != nil {
			return nil, "", fmt.Errorf("conformance: Options.Model rendering a custom-format answer: %w", err)
		}
		if out.Message == nil {
			return nil, "", fmt.Errorf("conformance: Options.Model rendered no message")
		}
		msg = out.Message
		if msg.Role == "" {
			msg.Role = plugin.RoleAssistant
		}
	}
	finish := "stop"
	if len(msg.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	return msg, finish, nil
}

// fakeEnv offers toolEcho and toolLookup and records every call. Ledger
// indices start at ledgerBase so that a harness inventing them is caught.
type fakeEnv struct {
	failCall error // if set, CallTool fails with it
	failList error // if set, ListTools fails with it

	mu    sync.Mutex
	calls []*plugin.CallToolRequest
	resps []*plugin.CallToolResponse
}

const ledgerBase = 7000

func envTools() []*plugin.Tool {
	return []*plugin.Tool{
		{Name: toolEcho, Description: "Returns the given text.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		{Name: toolLookup, Description: "Looks up an order by id.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
	}
}

func (e *fakeEnv) ListTools(ctx context.Context, req *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
	if e.failList != nil {
		return e.failList
	}
	resp.Tools = envTools()
	return nil
}

func (e *fakeEnv) CallTool(ctx context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, proto.Clone(req).(*plugin.CallToolRequest))
	if e.failCall != nil {
		e.resps = append(e.resps, nil)
		return e.failCall
	}
	resp.LedgerIndex = uint64(ledgerBase + len(e.calls) - 1)
	var args map[string]any
	if err := json.Unmarshal([]byte(req.Arguments), &args); err != nil {
		resp.IsError = true
		resp.Content = "error: arguments are not a JSON object: " + err.Error()
	} else {
		switch req.Name {
		case toolEcho:
			resp.Content = fmt.Sprintf("echo: %v", args["text"])
		case toolLookup:
			resp.IsError = true
			resp.Content = fmt.Sprintf("error: no order %v", args["order_id"])
		default:
			resp.IsError = true
			resp.Content = "error: unknown tool " + req.Name
		}
	}
	e.resps = append(e.resps, proto.Clone(resp).(*plugin.CallToolResponse))
	return nil
}

func (e *fakeEnv) recorded() ([]*plugin.CallToolRequest, []*plugin.CallToolResponse) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*plugin.CallToolRequest(nil), e.calls...), append([]*plugin.CallToolResponse(nil), e.resps...)
}

// fakeUser opens with opening and is done at its second Next.
type fakeUser struct {
	opening string
	fail    error

	mu   sync.Mutex
	reqs []*plugin.UserRequest
}

func (u *fakeUser) Next(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reqs = append(u.reqs, proto.Clone(req).(*plugin.UserRequest))
	if u.fail != nil {
		return u.fail
	}
	if len(u.reqs) == 1 {
		resp.Content = u.opening
		return nil
	}
	resp.Done = true
	return nil
}

func (u *fakeUser) recorded() []*plugin.UserRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*plugin.UserRequest(nil), u.reqs...)
}

// noState is the State service a harness never gets.
type noState struct{}

func (noState) Query(ctx context.Context, req *plugin.QueryRequest, resp *plugin.QueryResponse) error {
	return noState{}.err()
}

func (noState) Hash(ctx context.Context, req *plugin.HashRequest, resp *plugin.HashResponse) error {
	return noState{}.err()
}

func (noState) Diff(ctx context.Context, req *plugin.DiffRequest, resp *plugin.DiffResponse) error {
	return noState{}.err()
}

func (noState) err() error {
	return &plugin.HostError{Service: "state", Kind: "unavailable", Message: "the State service is not offered to harnesses"}
}

// fakeHost is one episode's host services.
type fakeHost struct {
	model *fakeModel
	env   *fakeEnv
	user  *fakeUser
}

func (h *fakeHost) Model() plugin.Model { return h.model }
func (h *fakeHost) Env() plugin.Env     { return h.env }
func (h *fakeHost) User() plugin.User   { return h.user }
func (h *fakeHost) State() plugin.State { return noState{} }
