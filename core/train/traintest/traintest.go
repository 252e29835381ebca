// Package traintest holds test fixtures for the training-data records of
// core/train: conversations and tool definitions that exercise every field
// and the edge cases the exporters in core/dataset must carry through
// (unicode, HTML-significant characters, empty content, invalid JSON tool
// arguments, reasoning). Each function returns a fresh copy.
package traintest

import (
	"encoding/json"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/train"
)

// Tools returns two offered tools: get_user (with a description and a JSON
// Schema) and ping (name only).
func Tools() []train.ToolDef {
	return []train.ToolDef{
		{Type: "function", Function: train.FunctionDef{
			Name: "get_user", Description: "Look a user up by id.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"string"}},"required":["user_id"]}`),
		}},
		{Type: "function", Function: train.FunctionDef{Name: "ping"}},
	}
}

// Conversation returns a conversation with a system prompt, unicode, HTML-significant
// characters, an assistant message with empty content and two tool calls
// (one with invalid JSON arguments), tool answers, reasoning and a final
// answer.
func Conversation() []model.Message {
	return []model.Message{
		{Role: model.RoleSystem, Content: "You are a helpful agent. <policy> & rules </policy>"},
		{Role: model.RoleUser, Content: "Bonjour ! Mon id est « u-42 » — 你好 🌍\nline two\ttab \"quoted\""},
		{Role: model.RoleAssistant, Content: "", Reasoning: "need the user first", ToolCalls: []model.ToolCall{
			{ID: "call_1", Type: "function", Function: model.FunctionCall{Name: "get_user", Arguments: `{"user_id": "u-42"}`}},
			{ID: "call_2", Type: "function", Function: model.FunctionCall{Name: "ping", Arguments: `{not json`}},
		}},
		{Role: model.RoleTool, ToolCallID: "call_1", Name: "get_user", Content: `{"name":"Zoë","city":"Zürich"}`},
		{Role: model.RoleTool, ToolCallID: "call_2", Name: "ping", Content: ""},
		{Role: model.RoleAssistant, Content: "Vous êtes Zoë, à Zürich. ✅"},
	}
}

// OneCall returns a conversation whose assistant makes one call at a time.
func OneCall() []model.Message {
	return []model.Message{
		{Role: model.RoleUser, Content: "ping"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Type: "function", Function: model.FunctionCall{Name: "ping", Arguments: "{}"}}}},
		{Role: model.RoleTool, ToolCallID: "c", Name: "ping", Content: "pong"},
		{Role: model.RoleAssistant, Content: "pong"},
	}
}
