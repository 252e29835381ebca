package train_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/core/train/traintest"
)

func TestNewOpenAIRecord(t *testing.T) {
	in := traintest.Conversation()
	rec := train.NewOpenAIRecord(in, traintest.Tools())
	want := traintest.Conversation()
	want[2].Reasoning = ""
	if diff := cmp.Diff(want, rec.Messages); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if in[2].Reasoning != "need the user first" {
		t.Error("NewOpenAIRecord modified its input")
	}
	if rec.ParallelToolCalls != nil {
		t.Errorf("ParallelToolCalls = %v, want nil", *rec.ParallelToolCalls)
	}
	rec = train.NewOpenAIRecord(traintest.OneCall(), traintest.Tools())
	if rec.ParallelToolCalls == nil || *rec.ParallelToolCalls {
		t.Errorf("ParallelToolCalls = %v, want false", rec.ParallelToolCalls)
	}
}

func TestMessagesFromTrajectory(t *testing.T) {
	raw := json.RawMessage(`{
		"messages": [
			{"role": "system", "content": "sys"},
			{"role": "user", "content": "héllo"},
			{"role": "assistant", "reasoning_content": "hmm", "tool_calls": [
				{"id": "call_1", "name": "get_user", "arguments": "{\"user_id\":\"u\"}"},
				{"id": "call_2", "name": "nope", "arguments": "{bad"}
			]},
			{"role": "tool", "tool_call_id": "call_1", "name": "get_user", "content": "{}"},
			{"role": "assistant", "content": "done"}
		],
		"turns": [{"index": 0}],
		"termination": "done",
		"tool_calls": 2
	}`)
	got, err := train.MessagesFromTrajectory(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Message{
		{Role: "system", Content: "sys"},
		{Role: "user", Content: "héllo"},
		{Role: "assistant", Reasoning: "hmm", ToolCalls: []model.ToolCall{
			{ID: "call_1", Type: "function", Function: model.FunctionCall{Name: "get_user", Arguments: `{"user_id":"u"}`}},
			{ID: "call_2", Type: "function", Function: model.FunctionCall{Name: "nope", Arguments: "{bad"}},
		}},
		{Role: "tool", ToolCallID: "call_1", Name: "get_user", Content: "{}"},
		{Role: "assistant", Content: "done"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	for _, in := range []string{"", "  ", `{}`, `{"messages":[]}`} {
		got, err := train.MessagesFromTrajectory(json.RawMessage(in))
		if err != nil || got != nil {
			t.Errorf("MessagesFromTrajectory(%q) = %v, %v; want nil, nil", in, got, err)
		}
	}
	if _, err := train.MessagesFromTrajectory(json.RawMessage(`{"messages": 3}`)); err == nil {
		t.Error("want a decoding error")
	}
}

func TestToolDefs(t *testing.T) {
	got := train.ToolDefs([]model.Tool{
		{Name: "get_user", Description: "Look a user up by id.", Parameters: traintest.Tools()[0].Function.Parameters},
		{Name: "ping"},
	})
	if diff := cmp.Diff(traintest.Tools(), got); diff != "" {
		t.Errorf("ToolDefs (-want +got):\n%s", diff)
	}
	if train.ToolDefs(nil) != nil {
		t.Error("ToolDefs(nil) != nil")
	}
}
