package harnesstest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/weft-dev/weft/sdk/plugin"
	"golang.org/x/tools/txtar"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// Host is a plugin.Host of fakes; State is never offered to harnesses.
type Host struct {
	M plugin.Model
	E plugin.Env
	U plugin.User
}

func (h *Host) Model() plugin.Model { return h.M }
func (h *Host) Env() plugin.Env     { return h.E }
func (h *Host) User() plugin.User   { return h.U }
func (h *Host) State() plugin.State { return nil }

// Model answers Generate with Replies in order (a reply is the assistant
// content, or a full *plugin.Message, or an error to return); past the
// end it returns a HostError "exhausted". It records every request.
type Model struct {
	mu       sync.Mutex
	Replies  []any
	Requests []*plugin.GenerateRequest
	// Block makes Generate wait for its context to end and return its
	// error (for deadline tests).
	Block bool
}

func (m *Model) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Requests = append(m.Requests, proto.Clone(req).(*plugin.GenerateRequest))
	if m.Block {
		<-ctx.Done()
		return &plugin.HostError{Service: "model", Kind: "deadline", Message: ctx.Err().Error()}
	}
	i := len(m.Requests) - 1
	if i >= len(m.Replies) {
		return &plugin.HostError{Service: "model", Kind: "exhausted", Message: "no more scripted replies"}
	}
	switch r := m.Replies[i].(type) {
	case string:
		resp.Message = &plugin.Message{Role: plugin.RoleAssistant, Content: r}
	case *plugin.Message:
		resp.Message = proto.Clone(r).(*plugin.Message)
	case error:
		return r
	default:
		panic(fmt.Sprintf("harnesstest: reply of type %T", r))
	}
	resp.FinishReason = "stop"
	return nil
}

// Env offers two tools, get_order (read-only) and cancel_order, and
// records the calls that reach it. get_order answers with the order JSON,
// cancel_order with "cancelled <id>"; an unknown tool or arguments that
// are not a JSON object give an is_error result, like a real session.
// Err is returned by ListTools when FailList is set, and by the call
// numbered FailCall (1-based) when FailCall > 0.
type Env struct {
	mu       sync.Mutex
	Calls    []*plugin.CallToolRequest
	FailCall int
	FailList bool
	Err      error
}

// Tools are the Env's tools.
func Tools() []*plugin.Tool {
	return []*plugin.Tool{
		{Name: "get_order", Description: "Looks up an order by id.", ReadOnly: true,
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"]}`)},
		{Name: "cancel_order", Description: "Cancels a pending order.",
			InputSchema: plugin.MustJSONValue(`{"type":"object","properties":{"order_id":{"type":"string"},"reason":{"type":"string"}},"required":["order_id"]}`)},
	}
}

func (e *Env) ListTools(ctx context.Context, req *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
	if e.FailList {
		return e.Err
	}
	resp.Tools = Tools()
	return nil
}

func (e *Env) CallTool(ctx context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.Calls = append(e.Calls, proto.Clone(req).(*plugin.CallToolRequest))
	if e.FailCall == len(e.Calls) {
		return e.Err
	}
	resp.LedgerIndex = uint64(len(e.Calls) - 1)
	var args map[string]any
	if err := json.Unmarshal([]byte(req.Arguments), &args); err != nil {
		resp.Content, resp.IsError = "arguments: "+err.Error(), true
		return nil
	}
	switch req.Name {
	case "get_order":
		resp.Content = fmt.Sprintf(`{"order_id":%q,"status":"pending"}`, args["order_id"])
	case "cancel_order":
		resp.Content = fmt.Sprintf("cancelled %v", args["order_id"])
	default:
		resp.Content, resp.IsError = "unknown tool "+req.Name, true
	}
	return nil
}

// User opens with Opening ("" = done at once), answers the messages to
// it with Replies in order, then is done. It records every request.
type User struct {
	mu       sync.Mutex
	Opening  string
	Replies  []string // replies before done
	Requests []*plugin.UserRequest
	Err      error // returned from the call numbered FailAt (1-based)
	FailAt   int
}

func (u *User) Next(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.Requests = append(u.Requests, proto.Clone(req).(*plugin.UserRequest))
	n := len(u.Requests)
	if n == u.FailAt {
		return u.Err
	}
	switch {
	case n == 1 && u.Opening == "":
		resp.Done = true
	case n == 1:
		resp.Content = u.Opening
	case n-2 < len(u.Replies):
		resp.Content = u.Replies[n-2]
	default:
		resp.Done = true
	}
	return nil
}

// Strip zeroes the durations of resp's turns (wall-clock values).
func Strip(resp *plugin.RunEpisodeResponse) {
	for _, t := range resp.GetTrajectory().GetTurns() {
		t.DurationMs = 0
	}
}

// JSON renders m as indented protojson (stable for golden files).
func JSON(m proto.Message) string {
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(m)
	if err != nil {
		panic(err)
	}
	// protojson randomizes whitespace; normalize through encoding/json.
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		panic(err)
	}
	return indent(v)
}

// indent is v as indented JSON without HTML escaping.
func indent(v any) string {
	var out strings.Builder
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return out.String()
}

// RenderPrompt renders messages as readable text, one block per message.
func RenderPrompt(msgs []*plugin.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("=== " + m.Role)
		if m.Name != "" {
			b.WriteString(" name=" + m.Name)
		}
		if m.ToolCallId != "" {
			b.WriteString(" tool_call_id=" + m.ToolCallId)
		}
		b.WriteString("\n")
		if m.Content != "" {
			b.WriteString(m.Content)
			if !strings.HasSuffix(m.Content, "\n") {
				b.WriteString("\n")
			}
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "[tool_call %s] %s %s\n", c.Id, c.Name, c.Arguments)
		}
	}
	return b.String()
}

// Transcript is the golden archive of an episode: per turn its rendered
// prompt, raw response and parsed calls (and format error), then the
// canonical messages as JSON and the termination.
func Transcript(resp *plugin.RunEpisodeResponse) *txtar.Archive {
	a := &txtar.Archive{Comment: []byte("Golden episode transcript; refresh with go test ./plugins/harness/... -update\n")}
	add := func(name, data string) {
		if data != "" && !strings.HasSuffix(data, "\n") {
			data += "\n"
		}
		a.Files = append(a.Files, txtar.File{Name: name, Data: []byte(data)})
	}
	tr := resp.GetTrajectory()
	for _, t := range tr.GetTurns() {
		p := fmt.Sprintf("turn%d/", t.Index)
		add(p+"prompt", RenderPrompt(t.Prompt))
		add(p+"response", t.GetResponse().GetContent())
		for _, c := range t.GetResponse().GetToolCalls() {
			add(p+"response.tool_call."+c.Id, c.Name+" "+c.Arguments)
		}
		calls := make([]json.RawMessage, 0, len(t.Calls))
		for _, c := range t.Calls {
			calls = append(calls, json.RawMessage(JSON(c)))
		}
		add(p+"calls.json", indent(calls))
		if t.FormatError != "" {
			add(p+"format_error", t.FormatError)
		}
	}
	msgs := make([]json.RawMessage, 0, len(tr.GetMessages()))
	for _, m := range tr.GetMessages() {
		msgs = append(msgs, json.RawMessage(JSON(m)))
	}
	add("messages.json", indent(msgs))
	add("termination", tr.GetTermination())
	return a
}

// Golden compares a against the archive at path, or writes it when update
// is set.
func Golden(t *testing.T, path string, a *txtar.Archive, update bool) {
	t.Helper()
	got := txtar.Format(a)
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./plugins/harness/... -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; refresh with -update if intended):\n%s", path, diff)
	}
}

// Diff compares protocol messages with cmp using protocmp semantics
// (via JSON, so field order and pointer identity do not matter).
func Diff(want, got proto.Message) string {
	return cmp.Diff(JSON(want), JSON(got))
}

// CheckSchema checks a settings JSON Schema: it compiles, forbids
// additional properties, names exactly the json fields of the settings
// struct zero, and accepts defaults (the default settings marshalled).
func CheckSchema(t *testing.T, schema string, zero, defaults any) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("settings.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("settings.json")
	if err != nil {
		t.Fatalf("schema: %v", err)
	}
	var top struct {
		AdditionalProperties *bool                      `json:"additionalProperties"`
		Properties           map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal([]byte(schema), &top); err != nil {
		t.Fatal(err)
	}
	if top.AdditionalProperties == nil || *top.AdditionalProperties {
		t.Error(`schema allows additional properties`)
	}
	var fields []string
	rt := reflect.TypeOf(zero)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		fields = append(fields, name)
	}
	var props []string
	for p := range top.Properties {
		props = append(props, p)
	}
	sort.Strings(fields)
	sort.Strings(props)
	if diff := cmp.Diff(fields, props); diff != "" {
		t.Errorf("schema properties differ from the settings fields (-fields +schema):\n%s", diff)
	}
	b, err := json.Marshal(defaults)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("defaults %s do not validate: %v", b, err)
	}
}
