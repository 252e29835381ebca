package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
)

// encodeRequest maps req to a chat-completions JSON body.
//
// Beyond the OpenAI fields: an assistant message's Reasoning is sent as
// "reasoning_content" (vLLM chat templates such as Qwen3's read it) and a
// tool message's Name as "name". Tool parameter schemas are sent byte for
// byte, so their key order (which a chat template renders into the prompt)
// is kept.
func (c *Client) encodeRequest(req *Request) ([]byte, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(c.cfg.Model)}
	for i, m := range req.Messages {
		u, err := encodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		p.Messages = append(p.Messages, u)
	}
	if len(p.Messages) == 0 {
		return nil, errors.New("request has no messages")
	}
	if req.Format == FormatNative {
		for _, t := range req.Tools {
			if t.Name == "" {
				return nil, errors.New("tool without a name")
			}
			fn := shared.FunctionDefinitionParam{Name: t.Name}
			if t.Description != "" {
				fn.Description = param.NewOpt(t.Description)
			}
			if len(t.Parameters) > 0 {
				if !json.Valid(t.Parameters) {
					return nil, fmt.Errorf("tool %q: parameters are not valid JSON", t.Name)
				}
				fn.SetExtraFields(map[string]any{"parameters": json.RawMessage(t.Parameters)})
			}
			p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fn))
		}
	}
	s := req.Sampling
	if s.Temperature != nil {
		p.Temperature = param.NewOpt(*s.Temperature)
	}
	if s.TopP != nil {
		p.TopP = param.NewOpt(*s.TopP)
	}
	if s.MaxTokens > 0 {
		p.MaxTokens = param.NewOpt(int64(s.MaxTokens))
	}
	if s.Seed != nil {
		p.Seed = param.NewOpt(*s.Seed)
	}
	if len(s.Stop) > 0 {
		p.Stop = openai.ChatCompletionNewParamsStopUnion{OfStringArray: s.Stop}
	}
	if s.Logprobs {
		p.Logprobs = param.NewOpt(true)
	}
	if rf := req.ResponseFormat; rf != nil {
		if err := encodeResponseFormat(&p, rf); err != nil {
			return nil, err
		}
	}
	extra := map[string]any{}
	if c.cfg.ReturnTokenIDs {
		extra["return_token_ids"] = true
	}
	for k, v := range c.cfg.ExtraBody {
		extra[k] = v
	}
	if len(extra) > 0 {
		p.SetExtraFields(extra)
	}
	return p.MarshalJSON()
}

var formatNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// encodeResponseFormat sets p's response_format to {"type": "json_schema",
// "json_schema": {name, description?, schema, strict?}}; the schema is sent
// byte for byte.
func encodeResponseFormat(p *openai.ChatCompletionNewParams, rf *ResponseFormat) error {
	if !formatNameRE.MatchString(rf.Name) {
		return fmt.Errorf("response format name %q: want 1 to 64 of a-z, A-Z, 0-9, _ and -", rf.Name)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(rf.Schema, &probe); err != nil {
		return fmt.Errorf("response format %q: schema is not a JSON object: %v", rf.Name, err)
	}
	js := shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: rf.Name, Schema: json.RawMessage(rf.Schema)}
	if rf.Description != "" {
		js.Description = param.NewOpt(rf.Description)
	}
	if rf.Strict {
		js.Strict = param.NewOpt(true)
	}
	p.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{JSONSchema: js}}
	return nil
}

func encodeMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		u := openai.ToolMessage(m.Content, m.ToolCallID)
		if m.Name != "" {
			u.OfTool.SetExtraFields(map[string]any{"name": m.Name})
		}
		return u, nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "" {
				return openai.ChatCompletionMessageParamUnion{}, errors.New("assistant tool call without a function name")
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Function.Name,
						Arguments: tc.Function.Arguments,
					},
				},
			})
		}
		if m.Reasoning != "" {
			a.SetExtraFields(map[string]any{"reasoning_content": m.Reasoning})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
}

// wireResponse is the part of a chat-completions response the client reads,
// including vLLM's extensions.
type wireResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		Logprobs     *struct {
			Content []struct {
				Token   string  `json:"token"`
				Logprob float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
		TokenIDs []int64 `json:"token_ids"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
}

// decodeResponse maps a chat-completions body to a Response (first choice).
func decodeResponse(raw []byte) (*Response, error) {
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("response is not a chat completion: %w", err)
	}
	if len(w.Choices) == 0 {
		return nil, errors.New("response has no choices")
	}
	ch := w.Choices[0]
	content, err := decodeContent(ch.Message.Content)
	if err != nil {
		return nil, err
	}
	r := &Response{
		Message:      Message{Role: RoleAssistant, Content: content},
		FinishReason: ch.FinishReason,
		Model:        w.Model,
		TokenIDs:     ch.TokenIDs,
	}
	switch {
	case ch.Message.ReasoningContent != nil:
		r.Message.Reasoning = *ch.Message.ReasoningContent
	case ch.Message.Reasoning != nil:
		r.Message.Reasoning = *ch.Message.Reasoning
	}
	for i, tc := range ch.Message.ToolCalls {
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("tool call %d has no function name", i)
		}
		args, err := decodeArguments(tc.Function.Arguments)
		if err != nil {
			return nil, fmt.Errorf("tool call %d (%s): %w", i, tc.Function.Name, err)
		}
		typ := tc.Type
		if typ == "" {
			typ = "function"
		}
		r.Message.ToolCalls = append(r.Message.ToolCalls, ToolCall{
			ID: tc.ID, Type: typ, Function: FunctionCall{Name: tc.Function.Name, Arguments: args},
		})
	}
	if ch.Logprobs != nil && len(ch.Logprobs.Content) > 0 {
		r.Tokens = make([]string, len(ch.Logprobs.Content))
		r.Logprobs = make([]float64, len(ch.Logprobs.Content))
		for i, lp := range ch.Logprobs.Content {
			r.Tokens[i], r.Logprobs[i] = lp.Token, lp.Logprob
		}
	}
	if w.Usage != nil {
		r.Usage = Usage{PromptTokens: w.Usage.PromptTokens, CompletionTokens: w.Usage.CompletionTokens}
	}
	return r, nil
}

// decodeContent accepts a string, null, or an array of {"type":"text",
// "text":...} parts (joined).
func decodeContent(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("message content is neither a string nor an array of parts")
	}
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

// decodeArguments returns the arguments text: a JSON string's value as the
// model wrote it, or the JSON text itself when a server sent an object.
func decodeArguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	return string(raw), nil
}

// errorBodyMessage reads an error message from an error response body:
// OpenAI's {"error":{"message":...}}, {"error":"..."}, or vLLM's top-level
// {"message":...}; else the first 300 bytes of the body.
func errorBodyMessage(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var v struct {
		Message string          `json:"message"`
		Error   json.RawMessage `json:"error"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(b, &v) == nil {
		var inner struct {
			Message string `json:"message"`
		}
		var s string
		switch {
		case json.Unmarshal(v.Error, &inner) == nil && inner.Message != "":
			return inner.Message
		case json.Unmarshal(v.Error, &s) == nil && s != "":
			return s
		case v.Message != "":
			return v.Message
		case v.Detail != "":
			return v.Detail
		}
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
