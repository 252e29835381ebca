package plugintest

import (
	"context"
	"sort"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
)

// FakeModel is a scripted Model. Each Generate answers with the next of
// Responses (a copy), or calls Func when it is set. When the script is
// used up, Generate returns a *plugin.HostError with Kind "exhausted".
// Every request is recorded (a copy). Safe for concurrent use.
type FakeModel struct {
	Responses []*plugin.GenerateResponse
	Func      func(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error

	mu       sync.Mutex
	next     int
	requests []*plugin.GenerateRequest
}

// NewFakeModel returns a FakeModel answering with responses in order.
func NewFakeModel(responses ...*plugin.GenerateResponse) *FakeModel {
	return &FakeModel{Responses: responses}
}

// Generate answers req from the script (or Func) and records it.
func (m *FakeModel) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	m.mu.Lock()
	m.requests = append(m.requests, proto.Clone(req).(*plugin.GenerateRequest))
	if m.Func != nil {
		m.mu.Unlock()
		return m.Func(ctx, req, resp)
	}
	if m.next >= len(m.Responses) {
		m.mu.Unlock()
		return &plugin.HostError{Service: "model", Kind: "exhausted", Message: "the fake model's script is used up"}
	}
	r := m.Responses[m.next]
	m.next++
	m.mu.Unlock()
	proto.Reset(resp)
	proto.Merge(resp, r)
	return nil
}

// Requests returns the requests received so far.
func (m *FakeModel) Requests() []*plugin.GenerateRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*plugin.GenerateRequest(nil), m.requests...)
}

// Text is a GenerateResponse with an assistant message of content and
// finish reason "stop".
func Text(content string) *plugin.GenerateResponse {
	return &plugin.GenerateResponse{
		Message:      &plugin.Message{Role: plugin.RoleAssistant, Content: content},
		FinishReason: "stop",
	}
}

// Calls is a GenerateResponse with an assistant message making calls
// (native function calling) and finish reason "tool_calls".
func Calls(calls ...*plugin.ToolCall) *plugin.GenerateResponse {
	return &plugin.GenerateResponse{
		Message:      &plugin.Message{Role: plugin.RoleAssistant, ToolCalls: calls},
		FinishReason: "tool_calls",
	}
}

// ToolFunc is a fake tool: it gets the call's arguments (JSON text) and
// returns the result's content and whether it is a tool error the model
// reads. A non-nil err is a host failure (return a *plugin.HostError to
// choose its Kind; other errors reach the plugin as Kind "internal").
type ToolFunc func(args string) (content string, isError bool, err error)

// FakeEnv is a tool environment of ToolFuncs. ListTools lists Defs when
// set, else the tool names (sorted, schema "{}"). CallTool of an unknown
// tool is a tool error ("unknown tool: NAME"). Every call is recorded and
// gets the next ledger index (0, 1, ...). Safe for concurrent use.
type FakeEnv struct {
	Tools map[string]ToolFunc
	Defs  []*plugin.Tool

	mu    sync.Mutex
	calls []*plugin.CallToolRequest
}

// NewFakeEnv returns a FakeEnv of tools.
func NewFakeEnv(tools map[string]ToolFunc) *FakeEnv { return &FakeEnv{Tools: tools} }

// ListTools lists the tools.
func (e *FakeEnv) ListTools(_ context.Context, _ *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
	if e.Defs != nil {
		resp.Tools = make([]*plugin.Tool, len(e.Defs))
		for i, d := range e.Defs {
			resp.Tools[i] = proto.Clone(d).(*plugin.Tool)
		}
		return nil
	}
	names := make([]string, 0, len(e.Tools))
	for n := range e.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		resp.Tools = append(resp.Tools, &plugin.Tool{Name: n, InputSchema: plugin.MustJSONValue("{}")})
	}
	return nil
}

// CallTool runs the named tool and records the call.
func (e *FakeEnv) CallTool(_ context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
	e.mu.Lock()
	idx := uint64(len(e.calls))
	e.calls = append(e.calls, proto.Clone(req).(*plugin.CallToolRequest))
	e.mu.Unlock()
	f, ok := e.Tools[req.GetName()]
	if !ok {
		resp.Content, resp.IsError, resp.LedgerIndex = "unknown tool: "+req.GetName(), true, idx
		return nil
	}
	content, isErr, err := f(req.GetArguments())
	if err != nil {
		return err
	}
	resp.Content, resp.IsError, resp.LedgerIndex = content, isErr, idx
	return nil
}

// Calls returns the calls received so far.
func (e *FakeEnv) Calls() []*plugin.CallToolRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*plugin.CallToolRequest(nil), e.calls...)
}

// FakeUser says Messages in order, one per Next, then is done (Done true,
// empty content). Requests are recorded. Safe for concurrent use.
type FakeUser struct {
	Messages []string

	mu       sync.Mutex
	next     int
	requests []*plugin.UserRequest
}

// NewFakeUser returns a FakeUser saying messages.
func NewFakeUser(messages ...string) *FakeUser { return &FakeUser{Messages: messages} }

// Next returns the next scripted message, or done.
func (u *FakeUser) Next(_ context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.requests = append(u.requests, proto.Clone(req).(*plugin.UserRequest))
	if u.next >= len(u.Messages) {
		resp.Content, resp.Done = "", true
		return nil
	}
	resp.Content = u.Messages[u.next]
	u.next++
	return nil
}

// Requests returns the requests received so far.
func (u *FakeUser) Requests() []*plugin.UserRequest {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*plugin.UserRequest(nil), u.requests...)
}

var (
	_ plugin.Model = (*FakeModel)(nil)
	_ plugin.Env   = (*FakeEnv)(nil)
	_ plugin.User  = (*FakeUser)(nil)
)
