package dataset

import (
	"bytes"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/core/train/traintest"
)

func sampleSFT() []train.SFTRecord {
	return []train.SFTRecord{
		{Messages: traintest.Conversation(), Tools: traintest.Tools()},
		{Messages: traintest.OneCall(), Tools: traintest.Tools()[1:]},
		{Messages: []model.Message{{Role: model.RoleUser, Content: ""}, {Role: model.RoleAssistant, Content: "no tools here"}}},
	}
}

func sampleSegments() []train.RLSegment {
	conv := traintest.Conversation()
	return []train.RLSegment{
		{GroupID: "g-1", TaskID: "t-1", Turn: 0, Prompt: conv[:2], Completion: conv[2:6], Reward: 1, Advantage: 0.866, Masked: false, Patterns: nil, Tools: traintest.Tools()},
		{GroupID: "g-1", TaskID: "t-1", Turn: 0, Prompt: conv[:2], Completion: traintest.OneCall()[1:], Reward: 0, Advantage: 0, Masked: true, Patterns: []string{"hallucinated_tool", "repeated_call"}},
		{GroupID: "g-2", TaskID: "t-ü", Turn: 3, Prompt: conv[:1], Completion: []model.Message{{Role: model.RoleAssistant, Content: ""}}, Reward: 0.25, Advantage: -1.5},
	}
}

func sampleVerl() []train.VerlRLRecord {
	conv := traintest.Conversation()
	return []train.VerlRLRecord{
		{
			DataSource: "weft/retail", Prompt: conv[:4], Ability: "agent",
			RewardModel: train.VerlRewardModel{Style: "rule", GroundTruth: `{"task_id":"t-1"}`},
			ExtraInfo: train.VerlExtraInfo{Split: "train", Index: 0, TaskID: "t-1", Turn: 1, GroupID: "g-1",
				Reward: 0.5, Advantage: -0.25, Masked: true, Patterns: []string{"early_stop"}, Tools: traintest.Tools()},
		},
		{
			DataSource: "weft/airline", Prompt: conv[:2], Ability: "agent",
			RewardModel: train.VerlRewardModel{Style: "rule", GroundTruth: "Zoë"},
			ExtraInfo:   train.VerlExtraInfo{Split: "test", Index: 7, TaskID: "t-ü"},
		},
	}
}

// roundTrip compares read-back records with the input; nil and empty
// slices are the same (an empty list is written either way).
func roundTrip(t *testing.T, want, got any) {
	t.Helper()
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
}

func TestSFTJSONLRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSFTJSONL(&buf, sampleSFT()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Fatalf("lines = %d, want 3", n)
	}
	got, err := ReadSFTJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSFT(), got)
}

func TestSFTJSONLShape(t *testing.T) {
	rec := train.SFTRecord{Messages: traintest.OneCall()[:3], Tools: traintest.Tools()[1:]}
	var buf bytes.Buffer
	if err := WriteSFTJSONL(&buf, []train.SFTRecord{rec}); err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"ping"},` +
		`{"role":"assistant","content":"","tool_calls":[{"id":"c","type":"function","function":{"name":"ping","arguments":"{}"}}]},` +
		`{"role":"tool","content":"pong","tool_call_id":"c","name":"ping"}],` +
		`"tools":[{"type":"function","function":{"name":"ping"}}]}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
}

func TestJSONLNoHTMLEscapingAndBlankLines(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSFTJSONL(&buf, sampleSFT()[:1]); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "<policy> & rules") || !strings.Contains(buf.String(), "你好 🌍") {
		t.Errorf("text escaped: %s", buf.String())
	}
	got, err := ReadSFTJSONL(strings.NewReader("\n" + buf.String() + "\n  \n"))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSFT()[:1], got)
	// A last line without its newline is read too.
	got, err = ReadSFTJSONL(strings.NewReader(strings.TrimSuffix(buf.String(), "\n")))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSFT()[:1], got)
}

func TestReadJSONLError(t *testing.T) {
	_, err := ReadSFTJSONL(strings.NewReader(`{"messages":[]}` + "\n{oops\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err = %v, want a line 2 error", err)
	}
}

func TestRLJSONLRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteRLJSONL(&buf, sampleSegments()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRLJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSegments(), got)
}

func TestRLJSONLShape(t *testing.T) {
	seg := train.RLSegment{GroupID: "g", TaskID: "t", Turn: 2,
		Prompt:     []model.Message{{Role: "user", Content: "hi"}},
		Completion: []model.Message{{Role: "assistant", Content: "yo"}},
		Reward:     0.5, Advantage: -1}
	var buf bytes.Buffer
	if err := WriteRLJSONL(&buf, []train.RLSegment{seg}); err != nil {
		t.Fatal(err)
	}
	want := `{"group_id":"g","task_id":"t","turn":2,"prompt":[{"role":"user","content":"hi"}],` +
		`"completion":[{"role":"assistant","content":"yo"}],"reward":0.5,"advantage":-1,"masked":false,"patterns":[]}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
}

func TestRLJSONLRejectsNaN(t *testing.T) {
	seg := train.RLSegment{Reward: math.NaN()}
	if err := WriteRLJSONL(&bytes.Buffer{}, []train.RLSegment{seg}); err == nil || !strings.Contains(err.Error(), "record 0") {
		t.Fatalf("err = %v, want a record 0 error", err)
	}
}

func TestOpenAIJSONLRoundTrip(t *testing.T) {
	recs := []train.OpenAIRecord{
		train.NewOpenAIRecord(traintest.Conversation(), traintest.Tools()),
		train.NewOpenAIRecord(traintest.OneCall(), traintest.Tools()[1:]),
		train.NewOpenAIRecord([]model.Message{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}, nil),
	}
	var buf bytes.Buffer
	if err := WriteOpenAIJSONL(&buf, recs); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("lines = %d, want 3", len(lines))
	}
	if strings.Contains(lines[0], "parallel_tool_calls") || strings.Contains(lines[0], "reasoning_content") {
		t.Errorf("line 0 = %s: want no parallel_tool_calls (two calls in one message) and no reasoning_content", lines[0])
	}
	if !strings.HasSuffix(lines[1], `"parallel_tool_calls":false}`) {
		t.Errorf("line 1 = %s: want parallel_tool_calls false", lines[1])
	}
	if strings.Contains(lines[2], "parallel_tool_calls") || strings.Contains(lines[2], "tools") {
		t.Errorf("line 2 = %s: want no tools and no parallel_tool_calls", lines[2])
	}
	got, err := ReadOpenAIJSONL(&buf)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, recs, got)
}

func TestSFTParquetRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSFTParquet(&buf, sampleSFT()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSFTParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSFT(), got)

	path := filepath.Join(t.TempDir(), "sft.parquet")
	if err := WriteSFTParquetFile(path, sampleSFT()); err != nil {
		t.Fatal(err)
	}
	got, err = ReadSFTParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleSFT(), got)
}

// leafPaths returns the dotted paths of a parquet file's leaf columns, in
// schema order.
func leafPaths(t *testing.T, data []byte) []string {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range f.Schema().Columns() {
		out = append(out, strings.Join(p, "."))
	}
	return out
}

func TestSFTParquetSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSFTParquet(&buf, sampleSFT()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"messages.list.element.role",
		"messages.list.element.content",
		"messages.list.element.tool_calls.list.element.id",
		"messages.list.element.tool_calls.list.element.type",
		"messages.list.element.tool_calls.list.element.function.name",
		"messages.list.element.tool_calls.list.element.function.arguments",
		"messages.list.element.tool_call_id",
		"messages.list.element.name",
		"messages.list.element.reasoning_content",
		"tools",
	}
	if diff := cmp.Diff(want, leafPaths(t, buf.Bytes())); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	// The tools column is the JSON array of the OpenAI tools shape.
	rows, err := parquet.Read[pqSFTRow](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rows[1].Tools, `[{"type":"function","function":{"name":"ping"}}]`; got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
	if got := rows[2].Tools; got != "[]" {
		t.Errorf("tools = %s, want []", got)
	}
}

func TestVerlRLParquetRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteVerlRLParquet(&buf, sampleVerl()); err != nil {
		t.Fatal(err)
	}
	got, err := ReadVerlRLParquet(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleVerl(), got)

	path := filepath.Join(t.TempDir(), "rl.parquet")
	if err := WriteVerlRLParquetFile(path, sampleVerl()); err != nil {
		t.Fatal(err)
	}
	got, err = ReadVerlRLParquetFile(path)
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, sampleVerl(), got)
}

func TestVerlRLParquetSchema(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteVerlRLParquet(&buf, sampleVerl()); err != nil {
		t.Fatal(err)
	}
	var top []string
	for _, p := range leafPaths(t, buf.Bytes()) {
		if !strings.HasPrefix(p, "prompt.") {
			top = append(top, p)
		}
	}
	want := []string{
		"data_source", "ability", "reward_model.style", "reward_model.ground_truth",
		"extra_info.split", "extra_info.index", "extra_info.task_id", "extra_info.turn", "extra_info.group_id",
		"extra_info.reward", "extra_info.advantage", "extra_info.masked", "extra_info.patterns.list.element", "extra_info.tools",
	}
	if diff := cmp.Diff(want, top); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
}

func TestParquetReadErrors(t *testing.T) {
	if _, err := ReadSFTParquet(strings.NewReader("not parquet"), 11); err == nil {
		t.Error("ReadSFTParquet: want an error")
	}
	if _, err := ReadVerlRLParquetFile(filepath.Join(t.TempDir(), "missing.parquet")); err == nil {
		t.Error("ReadVerlRLParquetFile: want an error")
	}
}
