package train

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/parquet-go/parquet-go"

	"github.com/weft-dev/weft/core/model"
)

// Dataset exporters. Every format is described field by field in
// docs/datasets.md. Messages are model.Message throughout: the OpenAI
// chat-completions shape ({"role", "content", "tool_calls": [{"id",
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

// MarshalJSON writes Patterns as [] when it is nil.
func (s RLSegment) MarshalJSON() ([]byte, error) {
	type plain RLSegment
	if s.Patterns == nil {
		s.Patterns = []string{}
	}
	return json.Marshal(plain(s))
}

// WriteSFTJSONL writes recs to w as TRL conversational JSONL, one record per
// line, in order.
func WriteSFTJSONL(w io.Writer, recs []SFTRecord) error { return writeJSONL(w, recs) }

// ReadSFTJSONL reads TRL conversational JSONL (as WriteSFTJSONL writes it).
// Blank lines are skipped.
func ReadSFTJSONL(r io.Reader) ([]SFTRecord, error) { return readJSONL[SFTRecord](r) }

// WriteOpenAIJSONL writes recs to w as OpenAI chat fine-tuning JSONL, one
// record per line, in order.
func WriteOpenAIJSONL(w io.Writer, recs []OpenAIRecord) error { return writeJSONL(w, recs) }

// ReadOpenAIJSONL reads OpenAI chat fine-tuning JSONL. Blank lines are
// skipped.
func ReadOpenAIJSONL(r io.Reader) ([]OpenAIRecord, error) { return readJSONL[OpenAIRecord](r) }

// WriteRLJSONL writes segs to w as per-segment RL JSONL, one segment per
// line, in order.
func WriteRLJSONL(w io.Writer, segs []RLSegment) error { return writeJSONL(w, segs) }

// ReadRLJSONL reads per-segment RL JSONL. Blank lines are skipped.
func ReadRLJSONL(r io.Reader) ([]RLSegment, error) { return readJSONL[RLSegment](r) }

func writeJSONL[T any](w io.Writer, recs []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("train: record %d: %w", i, err)
		}
	}
	return bw.Flush()
}

func readJSONL[T any](r io.Reader) ([]T, error) {
	br := bufio.NewReader(r)
	var out []T
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var rec T
			if jerr := json.Unmarshal(b, &rec); jerr != nil {
				return out, fmt.Errorf("train: line %d: %w", line, jerr)
			}
			out = append(out, rec)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// Parquet row types. Messages are nested structs (a LIST of STRUCT); tool
// definitions, whose JSON Schemas have no fixed shape, are one JSON string.

type pqFunction struct {
	Name      string `parquet:"name"`
	Arguments string `parquet:"arguments"`
}

type pqToolCall struct {
	ID       string     `parquet:"id"`
	Type     string     `parquet:"type"`
	Function pqFunction `parquet:"function"`
}

type pqMessage struct {
	Role             string       `parquet:"role"`
	Content          string       `parquet:"content"`
	ToolCalls        []pqToolCall `parquet:"tool_calls,list"`
	ToolCallID       string       `parquet:"tool_call_id,optional"`
	Name             string       `parquet:"name,optional"`
	ReasoningContent string       `parquet:"reasoning_content,optional"`
}

type pqSFTRow struct {
	Messages []pqMessage `parquet:"messages,list"`
	Tools    string      `parquet:"tools"`
}

type pqRewardModel struct {
	Style       string `parquet:"style"`
	GroundTruth string `parquet:"ground_truth"`
}

type pqExtraInfo struct {
	Split     string   `parquet:"split"`
	Index     int64    `parquet:"index"`
	TaskID    string   `parquet:"task_id"`
	Turn      int64    `parquet:"turn"`
	GroupID   string   `parquet:"group_id"`
	Reward    float64  `parquet:"reward"`
	Advantage float64  `parquet:"advantage"`
	Masked    bool     `parquet:"masked"`
	Patterns  []string `parquet:"patterns,list"`
	Tools     string   `parquet:"tools"`
}

type pqRLRow struct {
	DataSource  string        `parquet:"data_source"`
	Prompt      []pqMessage   `parquet:"prompt,list"`
	Ability     string        `parquet:"ability"`
	RewardModel pqRewardModel `parquet:"reward_model"`
	ExtraInfo   pqExtraInfo   `parquet:"extra_info"`
}

func toPQMessages(msgs []model.Message) []pqMessage {
	out := make([]pqMessage, len(msgs))
	for i, m := range msgs {
		p := pqMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name, ReasoningContent: m.Reasoning}
		if len(m.ToolCalls) > 0 {
			p.ToolCalls = make([]pqToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				p.ToolCalls[j] = pqToolCall{ID: c.ID, Type: c.Type, Function: pqFunction{Name: c.Function.Name, Arguments: c.Function.Arguments}}
			}
		}
		out[i] = p
	}
	return out
}

func fromPQMessages(ps []pqMessage) []model.Message {
	if len(ps) == 0 {
		return nil
	}
	out := make([]model.Message, len(ps))
	for i, p := range ps {
		m := model.Message{Role: p.Role, Content: p.Content, ToolCallID: p.ToolCallID, Name: p.Name, Reasoning: p.ReasoningContent}
		if len(p.ToolCalls) > 0 {
			m.ToolCalls = make([]model.ToolCall, len(p.ToolCalls))
			for j, c := range p.ToolCalls {
				m.ToolCalls[j] = model.ToolCall{ID: c.ID, Type: c.Type, Function: model.FunctionCall{Name: c.Function.Name, Arguments: c.Function.Arguments}}
			}
		}
		out[i] = m
	}
	return out
}

// toolsJSON encodes tools as a JSON array ("[]" for none).
func toolsJSON(tools []ToolDef) (string, error) {
	if len(tools) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(tools)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// parseTools decodes toolsJSON's output ("", "[]" and "null" give nil).
func parseTools(s string) ([]ToolDef, error) {
	var tools []ToolDef
	if s == "" {
		return nil, nil
	}
	if err := json.Unmarshal([]byte(s), &tools); err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, nil
	}
	return tools, nil
}

// WriteSFTParquet writes recs to w as a verl multi-turn SFT parquet file
// (MultiTurnSFTDataset, messages_key "messages", tools_key "tools"), one row
// per record, in order. Columns: "messages", a LIST of STRUCT {role,
// content, tool_calls: LIST of STRUCT {id, type, function: STRUCT {name,
// arguments}}, tool_call_id (nullable), name (nullable), reasoning_content
// (nullable)}; and "tools", a STRING holding the JSON array of ToolDef ("[]"
// when none), which a loader decodes with json.loads.
func WriteSFTParquet(w io.Writer, recs []SFTRecord) error {
	rows := make([]pqSFTRow, len(recs))
	for i, r := range recs {
		tools, err := toolsJSON(r.Tools)
		if err != nil {
			return fmt.Errorf("train: record %d: tools: %w", i, err)
		}
		rows[i] = pqSFTRow{Messages: toPQMessages(r.Messages), Tools: tools}
	}
	return parquet.Write(w, rows)
}

// WriteSFTParquetFile is WriteSFTParquet to a file at path (created or
// truncated).
func WriteSFTParquetFile(path string, recs []SFTRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteSFTParquet(w, recs) })
}

// ReadSFTParquet reads a file written by WriteSFTParquet from r, whose size
// in bytes is size.
func ReadSFTParquet(r io.ReaderAt, size int64) ([]SFTRecord, error) {
	rows, err := parquet.Read[pqSFTRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("train: reading SFT parquet: %w", err)
	}
	out := make([]SFTRecord, len(rows))
	for i, row := range rows {
		tools, err := parseTools(row.Tools)
		if err != nil {
			return nil, fmt.Errorf("train: row %d: tools: %w", i, err)
		}
		out[i] = SFTRecord{Messages: fromPQMessages(row.Messages), Tools: tools}
	}
	return out, nil
}

// ReadSFTParquetFile is ReadSFTParquet of the file at path.
func ReadSFTParquetFile(path string) ([]SFTRecord, error) {
	return readFile(path, ReadSFTParquet)
}

// VerlRLRecord is one row of a verl RL dataset (RLHFDataset): a prompt the
// trainer rolls out from, with what its reward function needs.
//   - DataSource ("data_source") names the dataset; verl picks the reward
//     function by it.
//   - Prompt ("prompt") is the conversation to continue (system first).
//   - Ability ("ability") is the task category (e.g. "agent").
//   - RewardModel ("reward_model") is {"style", "ground_truth"}.
//   - ExtraInfo ("extra_info") is weft's bookkeeping for the row.
type VerlRLRecord struct {
	DataSource  string
	Prompt      []model.Message
	Ability     string
	RewardModel VerlRewardModel
	ExtraInfo   VerlExtraInfo
}

// VerlRewardModel is verl's "reward_model" column: Style is "rule" for
// rule-based (executable) rewards; GroundTruth is what the reward function
// compares against, as text (JSON when structured).
type VerlRewardModel struct {
	Style       string
	GroundTruth string
}

// VerlExtraInfo is verl's "extra_info" column: Split ("train", "test", ...)
// and Index (row number within the split) as verl's own datasets carry
// them, then weft's fields: TaskID, Turn (0-based atomic turn), GroupID (the
// GRPO group of the state), Reward and Advantage of the segment the row
// came from (0 when none), Masked and Patterns (detectors that fired), and
// Tools offered (stored as a JSON string in the file).
type VerlExtraInfo struct {
	Split     string
	Index     int64
	TaskID    string
	Turn      int
	GroupID   string
	Reward    float64
	Advantage float64
	Masked    bool
	Patterns  []string
	Tools     []ToolDef
}

// WriteVerlRLParquet writes recs to w as a verl RL parquet file, one row
// per record, in order. Columns: "data_source" STRING; "prompt" a LIST of
// message STRUCT (as in WriteSFTParquet); "ability" STRING; "reward_model"
// STRUCT {style, ground_truth: STRING}; "extra_info" STRUCT {split, index
// INT64, task_id, turn INT64, group_id, reward DOUBLE, advantage DOUBLE,
// masked BOOLEAN, patterns LIST of STRING, tools STRING (JSON array)}.
func WriteVerlRLParquet(w io.Writer, recs []VerlRLRecord) error {
	rows := make([]pqRLRow, len(recs))
	for i, r := range recs {
		tools, err := toolsJSON(r.ExtraInfo.Tools)
		if err != nil {
			return fmt.Errorf("train: record %d: tools: %w", i, err)
		}
		e := r.ExtraInfo
		rows[i] = pqRLRow{
			DataSource:  r.DataSource,
			Prompt:      toPQMessages(r.Prompt),
			Ability:     r.Ability,
			RewardModel: pqRewardModel{Style: r.RewardModel.Style, GroundTruth: r.RewardModel.GroundTruth},
			ExtraInfo: pqExtraInfo{
				Split: e.Split, Index: e.Index, TaskID: e.TaskID, Turn: int64(e.Turn), GroupID: e.GroupID,
				Reward: e.Reward, Advantage: e.Advantage, Masked: e.Masked, Patterns: e.Patterns, Tools: tools,
			},
		}
	}
	return parquet.Write(w, rows)
}

// WriteVerlRLParquetFile is WriteVerlRLParquet to a file at path (created
// or truncated).
func WriteVerlRLParquetFile(path string, recs []VerlRLRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteVerlRLParquet(w, recs) })
}

// ReadVerlRLParquet reads a file written by WriteVerlRLParquet from r, whose
// size in bytes is size.
func ReadVerlRLParquet(r io.ReaderAt, size int64) ([]VerlRLRecord, error) {
	rows, err := parquet.Read[pqRLRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("train: reading verl RL parquet: %w", err)
	}
	out := make([]VerlRLRecord, len(rows))
	for i, row := range rows {
		tools, err := parseTools(row.ExtraInfo.Tools)
		if err != nil {
			return nil, fmt.Errorf("train: row %d: tools: %w", i, err)
		}
		e := row.ExtraInfo
		var patterns []string
		if len(e.Patterns) > 0 {
			patterns = e.Patterns
		}
		out[i] = VerlRLRecord{
			DataSource:  row.DataSource,
			Prompt:      fromPQMessages(row.Prompt),
			Ability:     row.Ability,
			RewardModel: VerlRewardModel{Style: row.RewardModel.Style, GroundTruth: row.RewardModel.GroundTruth},
			ExtraInfo: VerlExtraInfo{
				Split: e.Split, Index: e.Index, TaskID: e.TaskID, Turn: int(e.Turn), GroupID: e.GroupID,
				Reward: e.Reward, Advantage: e.Advantage, Masked: e.Masked, Patterns: patterns, Tools: tools,
			},
		}
	}
	return out, nil
}

// ReadVerlRLParquetFile is ReadVerlRLParquet of the file at path.
func ReadVerlRLParquetFile(path string) ([]VerlRLRecord, error) {
	return readFile(path, ReadVerlRLParquet)
}

func writeFile(path string, write func(io.Writer) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		return err
	}
	return bw.Flush()
}

func readFile[T any](path string, read func(io.ReaderAt, int64) ([]T, error)) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return read(f, st.Size())
}
