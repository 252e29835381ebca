package dataset

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/parquet-go/parquet-go"

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

// ftrlSchema is FTRL's parquet as its data processing makes it
// (Code/data_process/tool.py: pandas.DataFrame(records).to_parquet over
// the records Code/data_sample/data_sample.py writes), column by column:
// the path of each leaf, its physical type and logical type. Repetition
// (pandas writes every column optional) is not compared: weft writes
// required strings so that "" stays "" and never becomes None.
var ftrlSchema = [][3]string{
	{"messages.list.element.role", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.content", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.tool_calls.list.element.id", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.tool_calls.list.element.type", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.tool_calls.list.element.function.name", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.tool_calls.list.element.function.arguments", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.tool_call_id", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.name", "BYTE_ARRAY", "STRING"},
	{"messages.list.element.reasoning_content", "BYTE_ARRAY", "STRING"},
	{"tools", "BYTE_ARRAY", "STRING"},
	{"codes", "BYTE_ARRAY", "STRING"},
	{"unsolved_set", "BYTE_ARRAY", "STRING"},
	{"solve_rate", "DOUBLE", ""},
	{"data_source", "BYTE_ARRAY", "STRING"},
	{"split", "BYTE_ARRAY", "STRING"},
	{"answer", "BYTE_ARRAY", "STRING"},
	{"extra_info.index", "INT64", "INT(64,true)"},
	{"extra_info.sample_id", "BYTE_ARRAY", "STRING"},
	{"extra_info.scenario", "BYTE_ARRAY", "STRING"},
	{"extra_info.scenario_type", "BYTE_ARRAY", "STRING"},
	{"extra_info.variant", "BYTE_ARRAY", "STRING"},
	{"extra_info.step", "INT64", "INT(64,true)"},
}

// FTRLSchemaColumns returns the leaf columns of an FTRL parquet file as
// (path, physical type, logical type), in file order.
func ftrlLeaves(t *testing.T, b []byte) ([][3]string, []string) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var top []string
	for _, fl := range f.Schema().Fields() {
		top = append(top, fl.Name())
	}
	var out [][3]string
	for _, path := range f.Schema().Columns() {
		leaf, _ := f.Schema().Lookup(path...)
		typ := leaf.Node.Type()
		lt := ""
		if l := typ.LogicalType(); l != nil {
			lt = l.String()
		}
		out = append(out, [3]string{strings.Join(path, "."), typ.Kind().String(), lt})
	}
	return out, top
}

func TestFTRLParquetSchema(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFTRLParquet(&b, ftrlRecords()); err != nil {
		t.Fatal(err)
	}
	leaves, top := ftrlLeaves(t, b.Bytes())
	if diff := cmp.Diff(FTRLColumns, top); diff != "" {
		t.Errorf("top-level columns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(ftrlSchema, leaves); diff != "" {
		t.Errorf("leaf columns (-want +got):\n%s", diff)
	}
}

func TestFTRLParquetBadInput(t *testing.T) {
	if _, err := ReadFTRLParquet(bytes.NewReader([]byte("not parquet")), 11); err == nil || !strings.Contains(err.Error(), "dataset: reading FTRL parquet") {
		t.Errorf("err = %v", err)
	}
}
