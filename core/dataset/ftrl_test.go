package dataset

import (
	"bytes"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"

	"github.com/weft-dev/weft/core/model"
)

func ftrlRecords() []FTRLRecord {
	return []FTRLRecord{
		{
			Messages: []model.Message{
				{Role: "user", Content: "What is the price of item 2323972008?"},
				{Role: "assistant", ToolCalls: []model.ToolCall{{ID: "call_0", Type: "function", Function: model.FunctionCall{Name: "get_item_price", Arguments: `{"item_id": "2323972008"}`}}}},
				{Role: "tool", Content: `{"price": "146.98"}`, ToolCallID: "call_0"},
			},
			Tools:       `[{"type": "function", "function": {"name": "get_item_price"}}]`,
			Codes:       `{"get_item_price": "def get_item_price(item_id):\n    ..."}`,
			UnsolvedSet: `{"get_item_price": []}`,
			SolveRate:   1, DataSource: "weft-ftrl/retail", Split: "train", Answer: "146.98",
			ExtraInfo: FTRLExtraInfo{Index: 1, SampleID: "s-s1", Scenario: "s", ScenarioType: "single_hop", Variant: "s-base", Step: 1},
		},
		{Messages: []model.Message{{Role: "user", Content: "q"}}, Tools: "[]", Codes: "{}", UnsolvedSet: `{"t": ["a, b"]}`, Split: "train"},
	}
}

func TestFTRLParquetRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ftrl.parquet")
	want := ftrlRecords()
	if err := WriteFTRLParquetFile(path, want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFTRLParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// pandasFTRLSchema is the footer schema pandas.DataFrame(records).
// to_parquet (pyarrow >= 13, whose compliant nested types name a list's
// element "element") writes for FTRL's JSONL (Code/data_process/tool.py
// over the records of Code/data_sample/data_sample.py, whose messages are
// the user's {role, content}, parse_qwen's {role, content, tool_calls:
// [{id, type, function: {arguments, name}}]} and get_feedback's {role,
// content, tool_call_id}), plus weft's extra_info dict, element by element
// below the root: path, physical type, repetition, logical type, converted
// type, children. pyarrow's rules (parquet/arrow/schema.cc FieldToNode,
// python/arrow/python/inference.cc): pandas' columns and inferred struct
// fields are nullable, so every element is OPTIONAL and a list's middle
// group REPEATED; an inferred struct orders its fields by name (a
// std::map); a str is BYTE_ARRAY STRING/UTF8; an int is INT64 with no
// annotation; a float DOUBLE; a list LIST/LIST.
var pandasFTRLSchema = [][6]string{
	{"messages", "", "OPTIONAL", "LIST", "LIST", "1"},
	{"messages.list", "", "REPEATED", "", "", "1"},
	{"messages.list.element", "", "OPTIONAL", "", "", "4"},
	{"messages.list.element.content", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.role", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.tool_call_id", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.tool_calls", "", "OPTIONAL", "LIST", "LIST", "1"},
	{"messages.list.element.tool_calls.list", "", "REPEATED", "", "", "1"},
	{"messages.list.element.tool_calls.list.element", "", "OPTIONAL", "", "", "3"},
	{"messages.list.element.tool_calls.list.element.function", "", "OPTIONAL", "", "", "2"},
	{"messages.list.element.tool_calls.list.element.function.arguments", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.tool_calls.list.element.function.name", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.tool_calls.list.element.id", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"messages.list.element.tool_calls.list.element.type", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"tools", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"codes", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"unsolved_set", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"solve_rate", "DOUBLE", "OPTIONAL", "", "", ""},
	{"data_source", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"split", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"answer", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"extra_info", "", "OPTIONAL", "", "", "6"},
	{"extra_info.index", "INT64", "OPTIONAL", "", "", ""},
	{"extra_info.sample_id", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"extra_info.scenario", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"extra_info.scenario_type", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
	{"extra_info.step", "INT64", "OPTIONAL", "", "", ""},
	{"extra_info.variant", "BYTE_ARRAY", "OPTIONAL", "STRING", "UTF8", ""},
}

// convertedTypes are parquet.thrift's names of the ConvertedType enum.
var convertedTypes = map[deprecated.ConvertedType]string{
	deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.MapKeyValue: "MAP_KEY_VALUE", deprecated.List: "LIST", deprecated.Enum: "ENUM",
	deprecated.Int8: "INT_8", deprecated.Int16: "INT_16", deprecated.Int32: "INT_32", deprecated.Int64: "INT_64",
	deprecated.Uint8: "UINT_8", deprecated.Uint16: "UINT_16", deprecated.Uint32: "UINT_32", deprecated.Uint64: "UINT_64",
}

// footerSchema returns the schema elements of parquet file b below the
// root, as pandasFTRLSchema spells them, and the root's name and number
// of children.
func footerSchema(t *testing.T, b []byte) ([][6]string, string, int) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	els := f.Metadata().Schema
	var out [][6]string
	i := 1
	var walk func(prefix string, n int)
	walk = func(prefix string, n int) {
		for ; n > 0; n-- {
			e := els[i]
			i++
			path := prefix + e.Name
			row := [6]string{path, "", e.RepetitionType.V.String(), "", "", ""}
			if e.Type.Valid {
				row[1] = e.Type.V.String()
			}
			if lt := e.LogicalType; lt != (format.LogicalType{}) {
				row[3] = lt.String()
			}
			if e.ConvertedType.Valid {
				row[4] = convertedTypes[e.ConvertedType.V]
			}
			if e.NumChildren.Valid {
				row[5] = strconv.Itoa(int(e.NumChildren.V))
			}
			out = append(out, row)
			if e.NumChildren.Valid {
				walk(path+".", int(e.NumChildren.V))
			}
		}
	}
	walk("", int(els[0].NumChildren.V))
	return out, els[0].Name, int(els[0].NumChildren.V)
}

// The file weft writes has, column by column and element by element, the
// schema pandas writes for FTRL's records: types, nesting, field order and
// nullability (the root's repetition, which pyarrow and parquet-go set
// differently and readers ignore, is not compared).
func TestFTRLParquetSchema(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFTRLParquet(&b, ftrlRecords()); err != nil {
		t.Fatal(err)
	}
	got, root, n := footerSchema(t, b.Bytes())
	if root != "schema" || n != len(FTRLColumns) {
		t.Errorf("root %q with %d children, want schema with %d", root, n, len(FTRLColumns))
	}
	if diff := cmp.Diff(pandasFTRLSchema, got); diff != "" {
		t.Errorf("schema elements (-pandas +weft):\n%s", diff)
	}
	var top []string
	for _, r := range got {
		if !strings.Contains(r[0], ".") {
			top = append(top, r[0])
		}
	}
	if diff := cmp.Diff(FTRLColumns, top); diff != "" {
		t.Errorf("top-level columns (-want +got):\n%s", diff)
	}
}

// Nulls sit where FTRL's data has them: a user or tool message has null
// tool_calls, a user or assistant message a null tool_call_id; "" stays "".
func TestFTRLParquetNulls(t *testing.T) {
	var b bytes.Buffer
	recs := ftrlRecords()
	if err := WriteFTRLParquet(&b, recs); err != nil {
		t.Fatal(err)
	}
	rows, err := parquet.Read[pqFTRLRow](bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	m := rows[0].Messages
	if len(m) != 3 || m[0].ToolCalls != nil || m[0].ToolCallID != nil || m[1].ToolCallID != nil || len(m[1].ToolCalls) != 1 ||
		m[2].ToolCalls != nil || m[2].ToolCallID == nil || *m[2].ToolCallID != "call_0" {
		t.Errorf("messages of row 0: %+v %+v %+v", *m[0], *m[1], *m[2])
	}
	if m[1].Content == nil || *m[1].Content != "" {
		t.Errorf("assistant content %v, want \"\" (not null)", m[1].Content)
	}
	if r := rows[1]; r.Answer == nil || *r.Answer != "" || r.SolveRate == nil || *r.SolveRate != 0 || r.ExtraInfo == nil || r.ExtraInfo.Index == nil {
		t.Errorf("row 1: %+v", r)
	}
}

// A message with a field FTRL's columns cannot hold is refused, nothing
// written.
func TestFTRLParquetRefusesUnstorable(t *testing.T) {
	for _, m := range []model.Message{{Role: "assistant", Content: "x", Reasoning: "thinking"}, {Role: "tool", Content: "x", Name: "t"}} {
		recs := ftrlRecords()
		recs[1].Messages = append(recs[1].Messages, m)
		var b bytes.Buffer
		err := WriteFTRLParquet(&b, recs)
		if !errors.Is(err, ErrFTRLMessage) || !strings.Contains(err.Error(), "record 1 message 1") || b.Len() != 0 {
			t.Errorf("%+v: err = %v, %d bytes written", m, err, b.Len())
		}
	}
}

func TestFTRLParquetBadInput(t *testing.T) {
	if _, err := ReadFTRLParquet(bytes.NewReader([]byte("not parquet")), 11); err == nil || !strings.Contains(err.Error(), "dataset: reading FTRL parquet") {
		t.Errorf("err = %v", err)
	}
}
