package host

import (
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/sdk/plugin"
)

// ModelMessages converts protocol messages to core/model messages (same
// length and order).
func ModelMessages(in []*plugin.Message) []model.Message {
	out := make([]model.Message, len(in))
	for i, m := range in {
		out[i] = ModelMessage(m)
	}
	return out
}

// ModelMessage converts one protocol message (nil gives the zero Message).
func ModelMessage(m *plugin.Message) model.Message {
	if m == nil {
		return model.Message{}
	}
	mm := model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallId, Name: m.Name, Reasoning: m.ReasoningContent}
	for _, tc := range m.ToolCalls {
		mm.ToolCalls = append(mm.ToolCalls, model.ToolCall{ID: tc.Id, Type: "function",
			Function: model.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return mm
}

// PluginMessage converts a core/model message to the protocol's.
func PluginMessage(m model.Message) *plugin.Message {
	pm := &plugin.Message{Role: m.Role, Content: m.Content, ToolCallId: m.ToolCallID, Name: m.Name, ReasoningContent: m.Reasoning}
	for _, tc := range m.ToolCalls {
		pm.ToolCalls = append(pm.ToolCalls, &plugin.ToolCall{Id: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return pm
}

// PluginMessages converts core/model messages to the protocol's.
func PluginMessages(in []model.Message) []*plugin.Message {
	out := make([]*plugin.Message, len(in))
	for i, m := range in {
		out[i] = PluginMessage(m)
	}
	return out
}

// ModelFormat maps the protocol's output format to core/model's (0 for
// unspecified).
func ModelFormat(f plugin.OutputFormat) model.Format {
	switch f {
	case plugin.FormatNative:
		return model.FormatNative
	case plugin.FormatHermes:
		return model.FormatHermes
	case plugin.FormatReAct:
		return model.FormatReAct
	}
	return 0
}

// ModelRequest converts a Generate request.
func ModelRequest(req *plugin.GenerateRequest) *model.Request {
	mr := &model.Request{Messages: ModelMessages(req.Messages), Format: ModelFormat(req.Format), EpisodeID: req.EpisodeId}
	for _, t := range req.Tools {
		mt := model.Tool{Name: t.Name, Description: t.Description}
		if t.InputSchema != nil {
			mt.Parameters, _ = plugin.ValueJSON(t.InputSchema)
		}
		mr.Tools = append(mr.Tools, mt)
	}
	if s := req.Sampling; s != nil {
		mr.Sampling = model.Sampling{Temperature: s.Temperature, TopP: s.TopP, MaxTokens: int(s.MaxTokens),
			Seed: s.Seed, Stop: s.Stop, Logprobs: s.Logprobs}
	}
	return mr
}

// FillGenerateResponse copies a core/model response into resp.
func FillGenerateResponse(r *model.Response, resp *plugin.GenerateResponse) {
	resp.Message = PluginMessage(r.Message)
	resp.FinishReason = r.FinishReason
	resp.Usage = &plugin.Usage{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens}
	resp.TokenIds = r.TokenIDs
	resp.Tokens = r.Tokens
	resp.Logprobs = r.Logprobs
	resp.Model = r.Model
}
