package train

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/parquet-go/parquet-go"

	"github.com/weft-dev/weft/core/model"
)

var sampleTools = []ToolDef{
	{Type: "function", Function: FunctionDef{
		Name: "get_user", Description: "Look a user up by id.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"user_id":{"type":"string"}},"required":["user_id"]}`),
	}},
	{Type: "function", Function: FunctionDef{Name: "ping"}},
}

// sampleConversation has a system prompt, unicode, HTML-significant
// characters, an assistant message with empty content and two tool calls
// (one with invalid JSON arguments), tool answers, reasoning and a final
// answer.
func sampleConversation() []model.Message {
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

// oneCall is a conversation whose assistant makes one call at a time.
func oneCall() []model.Message {
	return []model.Message{
		{Role: model.RoleUser, Content: "ping"},
		{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c", Type: "function", Function: model.FunctionCall{Name: "ping", Arguments: "{}"}}}},
		{Role: model.RoleTool, ToolCallID: "c", Name: "ping", Content: "pong"},
		{Role: model.RoleAssistant, Content: "pong"},
	}
}

func sampleSFT() []SFTRecord {
	return []SFTRecord{
		{Messages: sampleConversation(), Tools: sampleTools},
		{Messages: oneCall(), Tools: sampleTools[1:]},
		{Messages: []model.Message{{Role: model.RoleUser, Content: ""}, {Role: model.RoleAssistant, Content: "no tools here"}}},
	}
}

func sampleSegments() []RLSegment {
	conv := sampleConversation()
	return []RLSegment{
		{GroupID: "g-1", TaskID: "t-1", Turn: 0, Prompt: conv[:2], Completion: conv[2:6], Reward: 1, Advantage: 0.866, Masked: false, Patterns: nil, Tools: sampleTools},
		{GroupID: "g-1", TaskID: "t-1", Turn: 0, Prompt: conv[:2], Completion: oneCall()[1:], Reward: 0, Advantage: 0, Masked: true, Patterns: []string{"hallucinated_tool", "repeated_call"}},
		{GroupID: "g-2", TaskID: "t-ü", Turn: 3, Prompt: conv[:1], Completion: []model.Message{{Role: model.RoleAssistant, Content: ""}}, Reward: 0.25, Advantage: -1.5},
	}
}

func sampleVerl() []VerlRLRecord {
	conv := sampleConversation()
	return []VerlRLRecord{
		{
			DataSource: "weft/retail", Prompt: conv[:4], Ability: "agent",
			RewardModel: VerlRewardModel{Style: "rule", GroundTruth: `{"task_id":"t-1"}`},
			ExtraInfo: VerlExtraInfo{Split: "train", Index: 0, TaskID: "t-1", Turn: 1, GroupID: "g-1",
				Reward: 0.5, Advantage: -0.25, Masked: true, Patterns: []string{"early_stop"}, Tools: sampleTools},
		},
		{
			DataSource: "weft/airline", Prompt: conv[:2], Ability: "agent",
			RewardModel: VerlRewardModel{Style: "rule", GroundTruth: "Zoë"},
			ExtraInfo:   VerlExtraInfo{Split: "test", Index: 7, TaskID: "t-ü"},
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
	rec := SFTRecord{Messages: oneCall()[:3], Tools: sampleTools[1:]}
	var buf bytes.Buffer
	if err := WriteSFTJSONL(&buf, []SFTRecord{rec}); err != nil {
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
	seg := RLSegment{GroupID: "g", TaskID: "t", Turn: 2,
		Prompt:     []model.Message{{Role: "user", Content: "hi"}},
		Completion: []model.Message{{Role: "assistant", Content: "yo"}},
		Reward:     0.5, Advantage: -1}
	var buf bytes.Buffer
	if err := WriteRLJSONL(&buf, []RLSegment{seg}); err != nil {
		t.Fatal(err)
	}
	want := `{"group_id":"g","task_id":"t","turn":2,"prompt":[{"role":"user","content":"hi"}],` +
		`"completion":[{"role":"assistant","content":"yo"}],"reward":0.5,"advantage":-1,"masked":false,"patterns":[]}` + "\n"
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("line (-want +got):\n%s", diff)
	}
}

func TestRLJSONLRejectsNaN(t *testing.T) {
	seg := RLSegment{Reward: math.NaN()}
	if err := WriteRLJSONL(&bytes.Buffer{}, []RLSegment{seg}); err == nil || !strings.Contains(err.Error(), "record 0") {
		t.Fatalf("err = %v, want a record 0 error", err)
	}
}

func TestOpenAIJSONLRoundTrip(t *testing.T) {
	recs := []OpenAIRecord{
		NewOpenAIRecord(sampleConversation(), sampleTools),
		NewOpenAIRecord(oneCall(), sampleTools[1:]),
		NewOpenAIRecord([]model.Message{{Role: "user", Content: "x"}, {Role: "assistant", Content: "y"}}, nil),
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

func TestNewOpenAIRecord(t *testing.T) {
	in := sampleConversation()
	rec := NewOpenAIRecord(in, sampleTools)
	want := sampleConversation()
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
	rec = NewOpenAIRecord(oneCall(), sampleTools)
	if rec.ParallelToolCalls == nil || *rec.ParallelToolCalls {
		t.Errorf("ParallelToolCalls = %v, want false", rec.ParallelToolCalls)
	}
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
	got, err := MessagesFromTrajectory(raw)
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
		got, err := MessagesFromTrajectory(json.RawMessage(in))
		if err != nil || got != nil {
			t.Errorf("MessagesFromTrajectory(%q) = %v, %v; want nil, nil", in, got, err)
		}
	}
	if _, err := MessagesFromTrajectory(json.RawMessage(`{"messages": 3}`)); err == nil {
		t.Error("want a decoding error")
	}
}

func TestToolDefs(t *testing.T) {
	got := ToolDefs([]model.Tool{
		{Name: "get_user", Description: "Look a user up by id.", Parameters: sampleTools[0].Function.Parameters},
		{Name: "ping"},
	})
	if diff := cmp.Diff(sampleTools, got); diff != "" {
		t.Errorf("ToolDefs (-want +got):\n%s", diff)
	}
	if ToolDefs(nil) != nil {
		t.Error("ToolDefs(nil) != nil")
	}
}
