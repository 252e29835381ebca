package dataset

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/weft-dev/weft/core/model"
)

// FTRLRecord is one row of FTRL's verl RL parquet: the record FTRL's
// Code/data_sample/data_sample.py writes per prefix, which
// Code/data_process/tool.py turns into parquet column for column, and which
// FTRL's trainer reads (data.prompt_key=messages; ToolRewardManager reads
// codes, unsolved_set, solve_rate, split, answer and data_source; verl's
// RLHFDataset reads extra_info.index when present). Tools, Codes and
// UnsolvedSet are JSON text, as FTRL keeps them (its code json.loads
// them). weft's one deliberate difference: each Codes value is the tool's
// implementation in the synthesized-server form (a Starlark function over
// the server's tables, run by weft's interpreter), not Python for exec.
// ExtraInfo carries verl's index and weft's provenance.
type FTRLRecord struct {
	Messages    []model.Message
	Tools       string // JSON array of OpenAI function schemas
	Codes       string // JSON object: tool name -> implementation
	UnsolvedSet string // JSON object: tool name -> answers still expected
	SolveRate   float64
	DataSource  string
	Split       string
	Answer      string
	ExtraInfo   FTRLExtraInfo
}

// FTRLExtraInfo is the extra_info column of an FTRL row: Index (verl's row
// index), then weft's SampleID, Scenario (its id), ScenarioType, Variant
// (the scaled toolset) and Step (tool-call turns in the prefix).
type FTRLExtraInfo struct {
	Index        int64
	SampleID     string
	Scenario     string
	ScenarioType string
	Variant      string
	Step         int64
}

// The FTRL row types are the schema pandas.DataFrame.to_parquet (pyarrow)
// gives the JSONL records of FTRL's data_sample.py: top-level columns in
// the records' key order; inside a struct, pyarrow's type inference
// (arrow/python/inference.cc, a std::map of keys) orders the fields by
// name; every column, list element and struct field is optional
// (nullable); Python ints are INT64 without a logical type. Pointers carry
// the nulls: FTRL's user and assistant messages have no tool_call_id, its
// user and tool messages no tool_calls.

type pqFTRLFunction struct {
	Arguments *string `parquet:"arguments"`
	Name      *string `parquet:"name"`
}

type pqFTRLToolCall struct {
	Function *pqFTRLFunction `parquet:"function"`
	ID       *string         `parquet:"id"`
	Type     *string         `parquet:"type"`
}

type pqFTRLMessage struct {
	Content    *string           `parquet:"content"`
	Role       *string           `parquet:"role"`
	ToolCallID *string           `parquet:"tool_call_id"`
	ToolCalls  []*pqFTRLToolCall `parquet:"tool_calls,optional,list"`
}

type pqFTRLExtra struct {
	Index        *int64  `parquet:"index"`
	SampleID     *string `parquet:"sample_id"`
	Scenario     *string `parquet:"scenario"`
	ScenarioType *string `parquet:"scenario_type"`
	Step         *int64  `parquet:"step"`
	Variant      *string `parquet:"variant"`
}

type pqFTRLRow struct {
	Messages    []*pqFTRLMessage `parquet:"messages,optional,list"`
	Tools       *string          `parquet:"tools"`
	Codes       *string          `parquet:"codes"`
	UnsolvedSet *string          `parquet:"unsolved_set"`
	SolveRate   *float64         `parquet:"solve_rate"`
	DataSource  *string          `parquet:"data_source"`
	Split       *string          `parquet:"split"`
	Answer      *string          `parquet:"answer"`
	ExtraInfo   *pqFTRLExtra     `parquet:"extra_info"`
}

// FTRLColumns are the top-level columns of an FTRL parquet file, in order.
var FTRLColumns = []string{"messages", "tools", "codes", "unsolved_set", "solve_rate", "data_source", "split", "answer", "extra_info"}

// ErrFTRLMessage marks a message WriteFTRLParquet cannot store: FTRL's
// messages have no name or reasoning_content column.
var ErrFTRLMessage = errors.New("dataset: message field FTRL's parquet has no column for")

// ftrlSchema is pqFTRLRow's schema with its INT64 leaves unannotated, as
// pyarrow writes an int64 (parquet-go annotates every Go int64 INT(64,
// true) and INT_64); it is computed once.
var ftrlSchema = parquet.NewSchema("schema", plainInt64Fields([]parquet.Field{rootField{parquet.SchemaOf(pqFTRLRow{})}})[0])

// plainInt64Type is an INT64 column type without logical or converted
// type.
type plainInt64Type struct{ parquet.Type }

func (plainInt64Type) LogicalType() *format.LogicalType         { return nil }
func (plainInt64Type) ConvertedType() *deprecated.ConvertedType { return nil }

// rootField is a schema's root node as a Field, so plainInt64Field wraps
// it too.
type rootField struct{ parquet.Node }

func (rootField) Name() string                           { return "schema" }
func (rootField) Value(base reflect.Value) reflect.Value { return base }

type plainInt64Field struct {
	parquet.Field
	fields []parquet.Field
}

func (f plainInt64Field) Fields() []parquet.Field { return f.fields }

func (f plainInt64Field) Type() parquet.Type {
	if t := f.Field.Type(); f.Field.Leaf() && t.Kind() == parquet.Int64 {
		return plainInt64Type{t}
	}
	return f.Field.Type()
}

func plainInt64Fields(fs []parquet.Field) []parquet.Field {
	out := make([]parquet.Field, len(fs))
	for i, f := range fs {
		out[i] = plainInt64Field{Field: f, fields: plainInt64Fields(f.Fields())}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func deref[T any](p *T) T {
	var z T
	if p == nil {
		return z
	}
	return *p
}

// nonEmpty is s, or nil (null) when s is "".
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// WriteFTRLParquet writes recs to w as FTRL's verl parquet, one row per
// record, in order, with the schema pandas.DataFrame(records).to_parquet
// gives FTRL's JSONL (Code/data_process/tool.py over data_sample.py's
// records), every column optional:
//
//	messages      LIST<STRUCT{content STRING, role STRING, tool_call_id STRING,
//	              tool_calls LIST<STRUCT{function STRUCT{arguments STRING, name STRING},
//	              id STRING, type STRING}>}>
//	tools, codes, unsolved_set   STRING (JSON text)
//	solve_rate    DOUBLE
//	data_source, split, answer   STRING
//	extra_info    STRUCT{index INT64, sample_id, scenario, scenario_type STRING,
//	              step INT64, variant STRING}
//
// A message's tool_call_id is null when empty and its tool_calls null when
// it has none, as in FTRL's data; content and role are always set. Errors:
// ErrFTRLMessage (wrapped, with the record and message) for a message
// with a name or reasoning content; the writer's.
func WriteFTRLParquet(w io.Writer, recs []FTRLRecord) error {
	rows := make([]pqFTRLRow, len(recs))
	for i, r := range recs {
		msgs := make([]*pqFTRLMessage, len(r.Messages))
		for j, m := range r.Messages {
			if m.Name != "" || m.Reasoning != "" {
				return fmt.Errorf("%w: record %d message %d has a name or reasoning content", ErrFTRLMessage, i, j)
			}
			p := &pqFTRLMessage{Content: ptr(m.Content), Role: ptr(m.Role), ToolCallID: nonEmpty(m.ToolCallID)}
			for _, c := range m.ToolCalls {
				p.ToolCalls = append(p.ToolCalls, &pqFTRLToolCall{ID: ptr(c.ID), Type: ptr(c.Type),
					Function: &pqFTRLFunction{Arguments: ptr(c.Function.Arguments), Name: ptr(c.Function.Name)}})
			}
			msgs[j] = p
		}
		e := r.ExtraInfo
		rows[i] = pqFTRLRow{
			Messages: msgs, Tools: ptr(r.Tools), Codes: ptr(r.Codes), UnsolvedSet: ptr(r.UnsolvedSet),
			SolveRate: ptr(r.SolveRate), DataSource: ptr(r.DataSource), Split: ptr(r.Split), Answer: ptr(r.Answer),
			ExtraInfo: &pqFTRLExtra{Index: ptr(e.Index), SampleID: ptr(e.SampleID), Scenario: ptr(e.Scenario),
				ScenarioType: ptr(e.ScenarioType), Step: ptr(e.Step), Variant: ptr(e.Variant)},
		}
	}
	pw := parquet.NewGenericWriter[pqFTRLRow](w, ftrlSchema)
	if _, err := pw.Write(rows); err != nil {
		return fmt.Errorf("dataset: writing FTRL parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("dataset: writing FTRL parquet: %w", err)
	}
	return nil
}

// WriteFTRLParquetFile is WriteFTRLParquet to a file at path (created or
// truncated).
func WriteFTRLParquetFile(path string, recs []FTRLRecord) error {
	return writeFile(path, func(w io.Writer) error { return WriteFTRLParquet(w, recs) })
}

// checkParquetFrame checks a parquet file's frame before parquet-go reads
// it: "PAR1" at both ends and a footer length that fits in the file
// (parquet-go allocates the length it reads, up to 4 GiB, before checking
// it).
func checkParquetFrame(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%d bytes, too short for a parquet file", size)
	}
	var head, tail [4]byte
	var foot [8]byte
	if _, err := r.ReadAt(head[:], 0); err != nil {
		return err
	}
	if _, err := r.ReadAt(foot[:], size-8); err != nil {
		return err
	}
	copy(tail[:], foot[4:])
	if string(head[:]) != "PAR1" || string(tail[:]) != "PAR1" {
		return errors.New("not a parquet file (no PAR1 magic at both ends)")
	}
	if n := int64(binary.LittleEndian.Uint32(foot[:4])); n > size-12 {
		return fmt.Errorf("footer length %d larger than the file (%d bytes)", n, size)
	}
	return nil
}

// ReadFTRLParquet reads an FTRL parquet file (WriteFTRLParquet's, or one
// pandas wrote from FTRL's JSONL: columns are matched by name, a missing
// column or a null reads as its zero value) from r, whose size in bytes is
// size. Errors: a file that is not parquet or whose columns do not convert
// (wrapped, "dataset: reading FTRL parquet"); a malformed file never
// panics.
func ReadFTRLParquet(r io.ReaderAt, size int64) (out []FTRLRecord, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("dataset: reading FTRL parquet: malformed file: %v", p)
		}
	}()
	if err := checkParquetFrame(r, size); err != nil {
		return nil, fmt.Errorf("dataset: reading FTRL parquet: %w", err)
	}
	rows, err := parquet.Read[pqFTRLRow](r, size)
	if err != nil {
		return nil, fmt.Errorf("dataset: reading FTRL parquet: %w", err)
	}
	out = make([]FTRLRecord, len(rows))
	for i, row := range rows {
		var msgs []model.Message
		for _, p := range row.Messages {
			var m model.Message
			if p != nil {
				m = model.Message{Role: deref(p.Role), Content: deref(p.Content), ToolCallID: deref(p.ToolCallID)}
				for _, c := range p.ToolCalls {
					var tc model.ToolCall
					if c != nil {
						tc = model.ToolCall{ID: deref(c.ID), Type: deref(c.Type)}
						if f := c.Function; f != nil {
							tc.Function = model.FunctionCall{Name: deref(f.Name), Arguments: deref(f.Arguments)}
						}
					}
					m.ToolCalls = append(m.ToolCalls, tc)
				}
			}
			msgs = append(msgs, m)
		}
		e := deref(row.ExtraInfo)
		out[i] = FTRLRecord{
			Messages: msgs, Tools: deref(row.Tools), Codes: deref(row.Codes), UnsolvedSet: deref(row.UnsolvedSet),
			SolveRate: deref(row.SolveRate), DataSource: deref(row.DataSource), Split: deref(row.Split), Answer: deref(row.Answer),
			ExtraInfo: FTRLExtraInfo{Index: deref(e.Index), SampleID: deref(e.SampleID), Scenario: deref(e.Scenario),
				ScenarioType: deref(e.ScenarioType), Variant: deref(e.Variant), Step: deref(e.Step)},
		}
	}
	return out, nil
}

// ReadFTRLParquetFile is ReadFTRLParquet of the file at path.
func ReadFTRLParquetFile(path string) ([]FTRLRecord, error) {
	return readFile(path, ReadFTRLParquet)
}
