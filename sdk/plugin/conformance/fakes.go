package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
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

// scriptedModel answers Generate by script, rendering each step in the
// harness's declared format; it is the Func of a plugintest.FakeModel,
// which records the requests. It records the messages it answered.
type scriptedModel struct {
	fake   *plugintest.FakeModel
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
	n      int
	resps  []*plugin.Message
	capHit bool
}

func newScriptedModel(format plugin.OutputFormat, codec plugin.Model, sc script, max int) *scriptedModel {
	m := &scriptedModel{format: format, codec: codec, script: sc, max: max}
	m.fake = &plugintest.FakeModel{Func: m.generate}
	return m
}

func (m *scriptedModel) generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	m.mu.Lock()
	n := m.n
	m.n++
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
func (m *scriptedModel) requests() ([]*plugin.GenerateRequest, []*plugin.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fake.Requests(), append([]*plugin.Message(nil), m.resps...)
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
func (m *scriptedModel) render(ctx context.Context, n int, st step) (*plugin.Message, string, error) {
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

// ledgerBase is the first ledger index of the fake environment, so that
// a harness inventing indices is caught.
const ledgerBase = 7000

func envTools() []*plugin.Tool {
	return []*plugin.Tool{
		{Name: toolEcho, Description: "Returns the given text.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		{Name: toolLookup, Description: "Looks up an order by id.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
	}
}

// newEnv is the checks' environment: toolEcho and toolLookup, ledger
// indices from ledgerBase.
func newEnv() *plugintest.FakeEnv {
	return &plugintest.FakeEnv{Defs: envTools(), LedgerBase: ledgerBase, Tools: map[string]plugintest.ToolFunc{
		toolEcho: plugintest.JSONTool(func(a map[string]any) (string, bool) {
			return fmt.Sprintf("echo: %v", a["text"]), false
		}),
		toolLookup: plugintest.JSONTool(func(a map[string]any) (string, bool) {
			return fmt.Sprintf("error: no order %v", a["order_id"]), true
		}),
	}}
}

// fakeHost is one episode's fake host services: the scripted model, the
// environment and a user who opens and is done at the second Next.
type fakeHost struct {
	model *scriptedModel
	env   *plugintest.FakeEnv
	user  *plugintest.FakeUser
}

// services is the plugin.Host of the episode (no State: harnesses never
// get one).
func (h *fakeHost) services() plugin.HostSet { return plugintest.Host(h.model.fake, h.env, h.user) }
