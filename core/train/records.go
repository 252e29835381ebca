package train

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/core/model"
)

// Dataset records: the rows the drivers produce for trainers. Writing them
// to files (JSONL, parquet) is core/dataset's job; every format is described
// field by field in docs/datasets.md. Messages are model.Message
// throughout: the OpenAI chat-completions shape ({"role", "content", "tool_calls": [{"id",
// "type": "function", "function": {"name", "arguments"}}], "tool_call_id",
// "name", "reasoning_content"}), with "content" always present (possibly "")
// and the other keys omitted when empty.

// ToolDef is one offered tool in the OpenAI "tools" shape:
//
//	{"type": "function", "function": {"name": ..., "description": ..., "parameters": {JSON Schema}}}
//
// Type is "function". Parameters is the JSON Schema of the arguments object;
// the JSON writers compact it (whitespace is not preserved).
type ToolDef struct {
	Type     string      `json:"type"`
	Function FunctionDef `json:"function"`
}

// FunctionDef is the "function" object of a ToolDef: the tool's name, its
// description (omitted when empty) and the JSON Schema of its arguments
// (omitted when empty).
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ToolDefs converts the tools offered for native function calling into the
// OpenAI "tools" shape, in order. A nil or empty input gives nil.
func ToolDefs(tools []model.Tool) []ToolDef {
	if len(tools) == 0 {
		return nil
	}
	out := make([]ToolDef, len(tools))
	for i, t := range tools {
		out[i] = ToolDef{Type: "function", Function: FunctionDef{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	return out
}

// trajectoryJSON is the JSON encoding of the plugin protocol's Trajectory
// (pluginpb.Trajectory marshalled with encoding/json, as
// rollout.Outcome.Trajectory holds it). Only the messages matter here.
type trajectoryJSON struct {
	Messages []struct {
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"tool_calls"`
		ToolCallID       string `json:"tool_call_id"`
		Name             string `json:"name"`
		ReasoningContent string `json:"reasoning_content"`
	} `json:"messages"`
}

// MessagesFromTrajectory decodes the messages of a plugin-protocol
// Trajectory in its JSON form (rollout.Outcome.Trajectory: canonical OpenAI
// messages whose tool calls are {id, name, arguments}) into OpenAI chat
// messages, in order. Each tool call gets Type "function". An empty input
// gives nil and no error.
func MessagesFromTrajectory(raw json.RawMessage) ([]model.Message, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	var tr trajectoryJSON
	if err := json.Unmarshal(raw, &tr); err != nil {
		return nil, fmt.Errorf("train: decoding trajectory: %w", err)
	}
	if len(tr.Messages) == 0 {
		return nil, nil
	}
	out := make([]model.Message, len(tr.Messages))
	for i, m := range tr.Messages {
		msg := model.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name, Reasoning: m.ReasoningContent}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{
				ID: c.ID, Type: "function",
				Function: model.FunctionCall{Name: c.Name, Arguments: c.Arguments},
			})
		}
		out[i] = msg
	}
	return out, nil
}

// SFTRecord is one SFT example: a whole conversation (system first) and the
// tools offered in it. Its JSON encoding is one line of a TRL
// conversational dataset with tools:
//
//	{"messages": [message, ...], "tools": [ToolDef, ...]}
//
// "tools" is omitted when no tool was offered.
type SFTRecord struct {
	Messages []model.Message `json:"messages"`
	Tools    []ToolDef       `json:"tools,omitempty"`
}

// OpenAIRecord is one example of OpenAI's chat fine-tuning JSONL format:
//
//	{"messages": [message, ...], "tools": [ToolDef, ...], "parallel_tool_calls": false}
//
// "tools" is omitted when empty; "parallel_tool_calls" is omitted when nil.
// Build records with NewOpenAIRecord.
type OpenAIRecord struct {
	Messages          []model.Message `json:"messages"`
	Tools             []ToolDef       `json:"tools,omitempty"`
	ParallelToolCalls *bool           `json:"parallel_tool_calls,omitempty"`
}

// NewOpenAIRecord builds an OpenAI fine-tuning example from a conversation
// and its tools. The messages are copied without their reasoning_content
// (the fine-tuning API rejects unknown keys). ParallelToolCalls is set to
// false when tools are offered and no assistant message makes more than one
// tool call (the API's rule for examples trained without parallel calls);
// otherwise it is nil (the key is omitted).
func NewOpenAIRecord(msgs []model.Message, tools []ToolDef) OpenAIRecord {
	out := OpenAIRecord{Tools: tools}
	parallel := false
	if msgs != nil {
		out.Messages = make([]model.Message, len(msgs))
	}
	for i, m := range msgs {
		m.Reasoning = ""
		out.Messages[i] = m
		if m.Role == model.RoleAssistant && len(m.ToolCalls) > 1 {
			parallel = true
		}
	}
	if len(tools) > 0 && !parallel {
		f := false
		out.ParallelToolCalls = &f
	}
	return out
}

// RLSegment is one atomic turn (segment) of a GRPO group, for RL trainers
// that consume per-segment data. JSON shape:
//
//	{"group_id", "task_id", "turn", "prompt": [message, ...],
//	 "completion": [message, ...], "reward", "advantage", "masked",
//	 "patterns": [name, ...], "tools": [ToolDef, ...]}
//
// Fields:
//   - GroupID names the group of candidates sampled from the same restored
//     state; advantages are relative within it.
//   - TaskID is the task; Turn the 0-based index of the atomic turn in the
//     episode.
//   - Prompt is the conversation up to the turn (system first); Completion
//     is what the candidate produced in the turn: its assistant messages and
//     the tool messages answering their calls, in order.
//   - Reward is the candidate's scalar reward (e.g. FTRLReward); Advantage its
//     group-relative advantage after masking (CandidateAdvantages).
//   - Masked is whether a detector fired; Patterns the detectors that fired
//     (empty list, never null, in JSON).
//   - Tools are the tools offered (omitted when none).
//
// Reward and Advantage must be finite: JSON has no NaN.
type RLSegment struct {
	GroupID    string          `json:"group_id"`
	TaskID     string          `json:"task_id"`
	Turn       int             `json:"turn"`
	Prompt     []model.Message `json:"prompt"`
	Completion []model.Message `json:"completion"`
	Reward     float64         `json:"reward"`
	Advantage  float64         `json:"advantage"`
	Masked     bool            `json:"masked"`
	Patterns   []string        `json:"patterns"`
	Tools      []ToolDef       `json:"tools,omitempty"`
}

// MarshalJSON writes Patterns, Prompt and Completion as [] when nil: list
// fields are lists in JSON, never null.
func (s RLSegment) MarshalJSON() ([]byte, error) {
	type plain RLSegment
	s.Patterns = orEmpty(s.Patterns)
	s.Prompt = orEmpty(s.Prompt)
	s.Completion = orEmpty(s.Completion)
	return json.Marshal(plain(s))
}

// orEmpty is s, or an empty slice when s is nil (JSON [] rather than null).
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// VerlRLRecord is one row of a verl RL dataset (RLHFDataset): a prompt the
// trainer rolls out from, with what its reward function needs. Its JSON
// encoding (the rollout service's stream, docs/rollout-service.md) uses
// the parquet file's column names; extra_info.tools is the tools array
// there (the parquet column holds the same array as a JSON string).
//   - DataSource ("data_source") names the dataset; verl picks the reward
//     function by it.
//   - Prompt ("prompt") is the conversation to continue (system first).
//   - Ability ("ability") is the task category (e.g. "agent").
//   - RewardModel ("reward_model") is {"style", "ground_truth"}.
//   - ExtraInfo ("extra_info") is weft's bookkeeping for the row.
type VerlRLRecord struct {
	DataSource  string          `json:"data_source"`
	Prompt      []model.Message `json:"prompt"`
	Ability     string          `json:"ability"`
	RewardModel VerlRewardModel `json:"reward_model"`
	ExtraInfo   VerlExtraInfo   `json:"extra_info"`
}

// VerlRewardModel is verl's "reward_model" column: Style is "rule" for
// rule-based (executable) rewards; GroundTruth is what the reward function
// compares against, as text (JSON when structured).
type VerlRewardModel struct {
	Style       string `json:"style"`
	GroundTruth string `json:"ground_truth"`
}

// VerlExtraInfo is verl's "extra_info" column: Split ("train", "test", ...)
// and Index (row number within the split) as verl's own datasets carry
// them, then weft's fields: TaskID, Turn (0-based atomic turn), GroupID (the
// GRPO group of the state), Reward and Advantage of the segment the row
// came from (0 when none), Masked and Patterns (detectors that fired), and
// Tools offered (stored as a JSON string in the file).
type VerlExtraInfo struct {
	Split     string    `json:"split"`
	Index     int64     `json:"index"`
	TaskID    string    `json:"task_id"`
	Turn      int       `json:"turn"`
	GroupID   string    `json:"group_id"`
	Reward    float64   `json:"reward"`
	Advantage float64   `json:"advantage"`
	Masked    bool      `json:"masked"`
	Patterns  []string  `json:"patterns"`
	Tools     []ToolDef `json:"tools"`
}

// MarshalJSON writes Prompt as [] when nil (ExtraInfo's lists likewise):
// the row's JSON has the parquet row's list columns as lists, never null.
func (r VerlRLRecord) MarshalJSON() ([]byte, error) {
	type plain VerlRLRecord
	r.Prompt = orEmpty(r.Prompt)
	return json.Marshal(plain(r))
}

// MarshalJSON writes Patterns and Tools as [] when nil (a per-group row
// has no patterns; docs/datasets.md: "empty in the per-group rows").
func (e VerlExtraInfo) MarshalJSON() ([]byte, error) {
	type plain VerlExtraInfo
	e.Patterns = orEmpty(e.Patterns)
	e.Tools = orEmpty(e.Tools)
	return json.Marshal(plain(e))
}
