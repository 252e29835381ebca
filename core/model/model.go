package model

import (
	"context"
	"encoding/json"
)

// Policy generates the next assistant message of a conversation. It is the
// model under training or evaluation: an OpenAI-compatible endpoint
// (Client) or an offline stand-in (package scripted). Implementations are
// safe for concurrent use.
//
// Errors are typed (*Error with a Kind) so that callers tell an
// infrastructure failure (endpoint down, timeout, rate limited after the
// retries, garbage response) from a policy outcome: a policy that answers
// badly returns a normal Response.
type Policy interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}

// Format is how the harness expects the model to express tool calls. Real
// models follow the prompt; the scripted policy reads it and answers in the
// same shape.
type Format int

const (
	// FormatNative is OpenAI function calling: tools in the request, calls
	// in Message.ToolCalls.
	FormatNative Format = iota + 1
	// FormatHermes is <tool_call>{"name":...,"arguments":...}</tool_call>
	// blocks in the content.
	FormatHermes
	// FormatReAct is tau-bench's "Thought: ...\nAction: {"name":...,
	// "arguments":...}" text; talking to the user is the action "respond"
	// with {"content": text}.
	FormatReAct
)

func (f Format) String() string {
	switch f {
	case FormatNative:
		return "native"
	case FormatHermes:
		return "hermes"
	case FormatReAct:
		return "react"
	}
	return "unspecified"
}

// Chat roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message in the OpenAI chat-completions shape (its
// JSON encoding is that shape).
type Message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool name on tool messages.
	Name string `json:"name,omitempty"`
	// Reasoning is reasoning text some servers return beside the content
	// ("reasoning_content").
	Reasoning string `json:"reasoning_content,omitempty"`
}

// ToolCall is a function call in an assistant message (OpenAI shape).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its arguments as JSON text
// exactly as the model wrote them (they may be invalid JSON).
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Tool is a tool offered for native function calling.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments object.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// Sampling holds sampling parameters (OpenAI names). Nil pointers leave
// the endpoint's default.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// MaxTokens caps the completion; 0 = endpoint default.
	MaxTokens int      `json:"max_tokens,omitempty"`
	Seed      *int64   `json:"seed,omitempty"`
	Stop      []string `json:"stop,omitempty"`
	// Logprobs asks for per-token logprobs (and token ids where the
	// endpoint returns them, as vLLM does).
	Logprobs bool `json:"logprobs,omitempty"`
}

// Request is one generation request.
type Request struct {
	// Messages, system first, exactly as the harness rendered them.
	Messages []Message
	// Tools for native function calling (empty for text protocols).
	Tools    []Tool
	Sampling Sampling
	Format   Format
	// EpisodeID names the episode (for logs, metrics and the scripted
	// policy's per-episode plan); may be empty.
	EpisodeID string
	// ResponseFormat, when set, asks for structured output: the content
	// is one JSON value following its schema (OpenAI "response_format"
	// {"type": "json_schema", ...}; vLLM and SGLang honour it with guided
	// decoding). Nil leaves free text.
	ResponseFormat *ResponseFormat
}

// ResponseFormat is a JSON-schema structured-output request: Name (1..64
// of a-z A-Z 0-9 _ -) names the format, Schema is the JSON Schema the
// answer must follow, Strict asks the endpoint to enforce it exactly (only
// a subset of JSON Schema is allowed then: OpenAI requires every property
// required and additionalProperties false). The client checks only that
// Name is well formed and Schema is a JSON object; the answer still comes
// back as Message.Content text for the caller to decode and check.
type ResponseFormat struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict,omitempty"`
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Response is the generated assistant message.
type Response struct {
	Message Message
	// FinishReason: "stop", "tool_calls", "length", ...
	FinishReason string
	Usage        Usage
	// TokenIDs are the completion's token ids, when the endpoint returns
	// them (vLLM with return_token_ids); nil otherwise.
	TokenIDs []int64
	// Tokens and Logprobs (same length) when Sampling.Logprobs was set and
	// the endpoint returned them.
	Tokens   []string
	Logprobs []float64
	// Model is the model name the endpoint reported.
	Model string
}
