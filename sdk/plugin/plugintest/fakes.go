package plugintest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/plugin"
)

// FakeModel is a scripted Model. Each Generate answers with the next of
// Replies, or calls Func when it is set. A reply is one of:
//
//   - a *plugin.GenerateResponse, answered as is (a copy);
//   - a *plugin.Message, the assistant message (a copy), finish reason
//     "stop";
//   - a string, an assistant message of that content, finish reason
//     "stop";
//   - an error, which Generate returns (a *plugin.HostError reaches the
//     plugin with its Service and Kind).
//
// When the script is used up, Generate returns a *plugin.HostError of
// Service "model" and Kind "exhausted". With Block set, Generate waits for
// its context to end and returns the context's error (for deadline
// checks). Every request is recorded (a copy), before it is answered.
// Safe for concurrent use.
type FakeModel struct {
	Replies []any
	Func    func(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error
	Block   bool

	mu       sync.Mutex
	next     int
	requests []*plugin.GenerateRequest
}

// NewFakeModel returns a FakeModel answering with replies in order (see
// FakeModel for the kinds of reply).
func NewFakeModel(replies ...any) *FakeModel {
	return &FakeModel{Replies: replies}
}

// Generate answers req from the script (or Func) and records it.
func (m *FakeModel) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	m.mu.Lock()
	m.requests = append(m.requests, proto.Clone(req).(*plugin.GenerateRequest))
	switch {
	case m.Func != nil:
		m.mu.Unlock()
		return m.Func(ctx, req, resp)
	case m.Block:
		m.mu.Unlock()
		<-ctx.Done()
		return ctx.Err()
	case m.next >= len(m.Replies):
		m.mu.Unlock()
		return &plugin.HostError{Service: failure.Model, Kind: "exhausted", Message: "the fake model's script is used up"}
	}
	r := m.Replies[m.next]
	m.next++
	m.mu.Unlock()
	proto.Reset(resp)
	switch r := r.(type) {
	case *plugin.GenerateResponse:
		proto.Merge(resp, r)
	case *plugin.Message:
		resp.Message, resp.FinishReason = proto.Clone(r).(*plugin.Message), "stop"
	case string:
		resp.Message, resp.FinishReason = &plugin.Message{Role: plugin.RoleAssistant, Content: r}, "stop"
	case error:
		return r
	default:
		panic(fmt.Sprintf("plugintest: FakeModel reply of type %T (want *plugin.GenerateResponse, *plugin.Message, string or error)", r))
	}
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
// tool is a tool error ("unknown tool NAME"). Every call is recorded and
// gets the next ledger index (LedgerBase, LedgerBase+1, ...; a harness
// that invents indices instead of passing the Env's on is caught by a
// LedgerBase other than 0).
//
// Err is the host failure ListTools returns when FailList is set, and the
// call numbered FailCall (1-based; 0 = none) returns, recorded with no
// result. Safe for concurrent use.
type FakeEnv struct {
	Tools      map[string]ToolFunc
	Defs       []*plugin.Tool
	LedgerBase uint64
	FailCall   int
	FailList   bool
	Err        error

	mu      sync.Mutex
	calls   []*plugin.CallToolRequest
	results []*plugin.CallToolResponse
}

// NewFakeEnv returns a FakeEnv of tools.
func NewFakeEnv(tools map[string]ToolFunc) *FakeEnv { return &FakeEnv{Tools: tools} }

// ListTools lists the tools.
func (e *FakeEnv) ListTools(_ context.Context, _ *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
	if e.FailList {
		return e.Err
	}
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

// CallTool runs the named tool and records the call and its result.
func (e *FakeEnv) CallTool(_ context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, proto.Clone(req).(*plugin.CallToolRequest))
	n := len(e.calls)
	if n == e.FailCall {
		e.results = append(e.results, nil)
		return e.Err
	}
	idx := e.LedgerBase + uint64(n-1)
	f, ok := e.Tools[req.GetName()]
	if !ok {
		resp.Content, resp.IsError, resp.LedgerIndex = "unknown tool "+req.GetName(), true, idx
		e.results = append(e.results, proto.Clone(resp).(*plugin.CallToolResponse))
		return nil
	}
	content, isErr, err := f(req.GetArguments())
	if err != nil {
		e.results = append(e.results, nil)
		return err
	}
	resp.Content, resp.IsError, resp.LedgerIndex = content, isErr, idx
	e.results = append(e.results, proto.Clone(resp).(*plugin.CallToolResponse))
	return nil
}

// Calls returns the calls received so far.
func (e *FakeEnv) Calls() []*plugin.CallToolRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*plugin.CallToolRequest(nil), e.calls...)
}

// Results returns the results of the calls received so far, one per call
// (nil for a call that failed with a host error).
func (e *FakeEnv) Results() []*plugin.CallToolResponse {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*plugin.CallToolResponse(nil), e.results...)
}

// JSONTool is a ToolFunc whose arguments must be a JSON object: f gets it
// decoded; arguments that are not a JSON object give the tool error
// "arguments: <why>", as a real session answers them.
func JSONTool(f func(args map[string]any) (content string, isError bool)) ToolFunc {
	return func(raw string) (string, bool, error) {
		var args map[string]any
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			return "arguments: " + err.Error(), true, nil
		}
		if args == nil {
			return "arguments: not a JSON object", true, nil
		}
		c, isErr := f(args)
		return c, isErr, nil
	}
}

// OrderTools are the tools of NewOrderEnv: get_order (read-only) and
// cancel_order, both taking an "order_id".
func OrderTools() []*plugin.Tool {
	return []*plugin.Tool{
		{Name: "get_order", Description: "Looks up an order by id.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
		{Name: "cancel_order", Description: "Cancels a pending order.",
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"},"reason":{"type":"string"}},"required":["order_id"]}`)},
	}
}

// NewOrderEnv returns a FakeEnv of two order tools (OrderTools):
// get_order answers {"order_id":ID,"status":"pending"}, cancel_order
// "cancelled ID"; ledger indices start at 0.
func NewOrderEnv() *FakeEnv {
	return &FakeEnv{Defs: OrderTools(), Tools: map[string]ToolFunc{
		"get_order": JSONTool(func(a map[string]any) (string, bool) {
			return fmt.Sprintf(`{"order_id":%q,"status":"pending"}`, a["order_id"]), false
		}),
		"cancel_order": JSONTool(func(a map[string]any) (string, bool) {
			return fmt.Sprintf("cancelled %v", a["order_id"]), false
		}),
	}}
}

// FakeUser says Messages in order, one per Next, then is done (Done true,
// empty content): with no Messages it is done at the opening. Err is
// returned by the Next numbered FailAt (1-based; 0 = none). Requests are
// recorded. Safe for concurrent use.
type FakeUser struct {
	Messages []string
	FailAt   int
	Err      error

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
	if len(u.requests) == u.FailAt {
		return u.Err
	}
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

// Host is the plugin.Host of a harness episode: m, e and u (State is not
// offered to harnesses: its calls fail with Kind "unavailable").
// A nil fake is not offered either.
func Host(m *FakeModel, e *FakeEnv, u *FakeUser) plugin.HostSet {
	var h plugin.HostSet
	if m != nil {
		h.ModelService = m
	}
	if e != nil {
		h.EnvService = e
	}
	if u != nil {
		h.UserService = u
	}
	return h
}

var (
	_ plugin.Model = (*FakeModel)(nil)
	_ plugin.Env   = (*FakeEnv)(nil)
	_ plugin.User  = (*FakeUser)(nil)
)

// Episode runs one episode of h in process (no gRPC: see RunHarness for
// the wire path) and returns the response with its turns' durations
// zeroed (Strip); a RunEpisode error fails t. Empty fields of req get the
// order scenario's defaults: episode id "ep1", system prompt "You are a
// retail agent.". req nil = all defaults.
func Episode(t testing.TB, h plugin.Harness, host plugin.Host, req *plugin.RunEpisodeRequest) *plugin.RunEpisodeResponse {
	t.Helper()
	if req == nil {
		req = &plugin.RunEpisodeRequest{}
	}
	if req.EpisodeId == "" {
		req.EpisodeId = "ep1"
	}
	if req.SystemPrompt == "" {
		req.SystemPrompt = "You are a retail agent."
	}
	resp := &plugin.RunEpisodeResponse{}
	if err := h.RunEpisode(t.Context(), host, req, resp); err != nil {
		t.Fatalf("RunEpisode: %v", err)
	}
	Strip(resp)
	return resp
}
