package plugintest

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/tools/txtar"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
)

// DiffMessages compares two message lists ("" = equal; else a go-cmp
// diff of their JSON, -want +got).
func DiffMessages(want, got []*plugin.Message) string {
	return Diff(&plugin.Trajectory{Messages: want}, &plugin.Trajectory{Messages: got})
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
	a := &txtar.Archive{Comment: []byte("Golden episode transcript; refresh with go test -update\n")}
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
// is set (a test's -update flag); a difference fails t with a go-cmp diff
// (-want +got).
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
		t.Fatalf("%v (run go test with -update to create it)", err)
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

// CheckSettingsSchema checks a harness's settings JSON Schema (the text of
// DescribeResponse.settings_schema) against the Go settings struct it
// describes: the schema compiles (JSON Schema 2020-12), forbids additional
// properties, names exactly the json fields of the struct value zero, and
// accepts defaults (the default settings, marshalled to JSON).
func CheckSettingsSchema(t *testing.T, schema string, zero, defaults any) {
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

// CheckDescribe calls h.Describe and checks its name, version, format and
// capabilities against want exactly (want's settings_schema is not
// compared); with settings non-nil it then checks the settings_schema
// against that Go settings struct and its defaults (CheckSettingsSchema).
// It returns the response.
func CheckDescribe(t *testing.T, h plugin.Harness, want *plugin.DescribeResponse, settings, defaults any) *plugin.DescribeResponse {
	t.Helper()
	d := new(plugin.DescribeResponse)
	if err := h.Describe(t.Context(), &plugin.DescribeRequest{}, d); err != nil {
		t.Fatalf("Describe: %v", err)
	}
	got := &plugin.DescribeResponse{Name: d.Name, Version: d.Version, Format: d.Format, Capabilities: d.Capabilities}
	exp := &plugin.DescribeResponse{Name: want.Name, Version: want.Version, Format: want.Format, Capabilities: want.Capabilities}
	if diff := Diff(exp, got); diff != "" {
		t.Errorf("Describe (-want +got):\n%s", diff)
	}
	if settings != nil {
		CheckSettingsSchema(t, plugin.SettingsJSON(d.SettingsSchema), settings, defaults)
	}
	return d
}
