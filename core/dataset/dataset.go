package dataset

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
	"github.com/weft-dev/weft/core/train"
)

// WriteSFTJSONL writes recs to w as TRL conversational JSONL, one record per
// line, in order.
func WriteSFTJSONL(w io.Writer, recs []train.SFTRecord) error { return writeJSONL(w, recs) }

// ReadSFTJSONL reads TRL conversational JSONL (as WriteSFTJSONL writes it).
// Blank lines are skipped.
func ReadSFTJSONL(r io.Reader) ([]train.SFTRecord, error) { return readJSONL[train.SFTRecord](r) }

// WriteOpenAIJSONL writes recs to w as OpenAI chat fine-tuning JSONL, one
// record per line, in order.
func WriteOpenAIJSONL(w io.Writer, recs []train.OpenAIRecord) error { return writeJSONL(w, recs) }

// ReadOpenAIJSONL reads OpenAI chat fine-tuning JSONL. Blank lines are
// skipped.
func ReadOpenAIJSONL(r io.Reader) ([]train.OpenAIRecord, error) {
	return readJSONL[train.OpenAIRecord](r)
}

// WriteRLJSONL writes segs to w as per-segment RL JSONL, one segment per
// line, in order.
func WriteRLJSONL(w io.Writer, segs []train.RLSegment) error { return writeJSONL(w, segs) }

// ReadRLJSONL reads per-segment RL JSONL. Blank lines are skipped.
func ReadRLJSONL(r io.Reader) ([]train.RLSegment, error) { return readJSONL[train.RLSegment](r) }

func writeJSONL[T any](w io.Writer, recs []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("dataset: record %d: %w", i, err)
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
				return out, fmt.Errorf("dataset: line %d: %w", line, jerr)
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
func toolsJSON(tools []train.ToolDef) (string, error) {
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
func parseTools(s string) ([]train.ToolDef, error) {
	var tools []train.ToolDef
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
// (nullable)}; and "tools", a STRING holding the JSON array of train.ToolDef ("[]"
// when none), which a loader decodes with json.loads.
func WriteSFTParquet(w io.Writer, recs []train.SFTRecord) error {
	rows := make([]pqSFTRow, len(recs))
	for i, r := range recs {
		tools, err := toolsJSON(r.Tools)
		if err != nil {
			return fmt.Errorf("dataset: record %d: tools: %w", i, err)
		}
		rows[i] = pqSFTRow{Messages: toPQMessages(r.Messages), Tools: tools}
	}
	return parquet.Write(w, rows)
}

// WriteSFTParquetFile is WriteSFTParquet to a file at path (created or
// truncated).
func WriteSFTParquetFile(path string, recs []train.SFTRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteSFTParquet(w, recs) })
}

// ReadSFTParquet reads a file written by WriteSFTParquet from r, whose size
// in bytes is size.
func ReadSFTParquet(r io.ReaderAt, size int64) ([]train.SFTRecord, error) {
	rows, err := parquet.Read[pqSFTRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("dataset: reading SFT parquet: %w", err)
	}
	out := make([]train.SFTRecord, len(rows))
	for i, row := range rows {
		tools, err := parseTools(row.Tools)
		if err != nil {
			return nil, fmt.Errorf("dataset: row %d: tools: %w", i, err)
		}
		out[i] = train.SFTRecord{Messages: fromPQMessages(row.Messages), Tools: tools}
	}
	return out, nil
}

// ReadSFTParquetFile is ReadSFTParquet of the file at path.
func ReadSFTParquetFile(path string) ([]train.SFTRecord, error) {
	return readFile(path, ReadSFTParquet)
}

// WriteVerlRLParquet writes recs to w as a verl RL parquet file, one row
// per record, in order. Columns: "data_source" STRING; "prompt" a LIST of
// message STRUCT (as in WriteSFTParquet); "ability" STRING; "reward_model"
// STRUCT {style, ground_truth: STRING}; "extra_info" STRUCT {split, index
// INT64, task_id, turn INT64, group_id, reward DOUBLE, advantage DOUBLE,
// masked BOOLEAN, patterns LIST of STRING, tools STRING (JSON array)}.
func WriteVerlRLParquet(w io.Writer, recs []train.VerlRLRecord) error {
	rows := make([]pqRLRow, len(recs))
	for i, r := range recs {
		tools, err := toolsJSON(r.ExtraInfo.Tools)
		if err != nil {
			return fmt.Errorf("dataset: record %d: tools: %w", i, err)
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
func WriteVerlRLParquetFile(path string, recs []train.VerlRLRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteVerlRLParquet(w, recs) })
}

// ReadVerlRLParquet reads a file written by WriteVerlRLParquet from r, whose
// size in bytes is size.
func ReadVerlRLParquet(r io.ReaderAt, size int64) ([]train.VerlRLRecord, error) {
	rows, err := parquet.Read[pqRLRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("dataset: reading verl RL parquet: %w", err)
	}
	out := make([]train.VerlRLRecord, len(rows))
	for i, row := range rows {
		tools, err := parseTools(row.ExtraInfo.Tools)
		if err != nil {
			return nil, fmt.Errorf("dataset: row %d: tools: %w", i, err)
		}
		e := row.ExtraInfo
		var patterns []string
		if len(e.Patterns) > 0 {
			patterns = e.Patterns
		}
		out[i] = train.VerlRLRecord{
			DataSource:  row.DataSource,
			Prompt:      fromPQMessages(row.Prompt),
			Ability:     row.Ability,
			RewardModel: train.VerlRewardModel{Style: row.RewardModel.Style, GroundTruth: row.RewardModel.GroundTruth},
			ExtraInfo: train.VerlExtraInfo{
				Split: e.Split, Index: e.Index, TaskID: e.TaskID, Turn: int(e.Turn), GroupID: e.GroupID,
				Reward: e.Reward, Advantage: e.Advantage, Masked: e.Masked, Patterns: patterns, Tools: tools,
			},
		}
	}
	return out, nil
}

// ReadVerlRLParquetFile is ReadVerlRLParquet of the file at path.
func ReadVerlRLParquetFile(path string) ([]train.VerlRLRecord, error) {
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
