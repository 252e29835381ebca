package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

// chain is a valid three-task composed task: a1 -> a2 -> a3.
func chain() *Task {
	call := Call{Tool: "cancel_pending_order", Arguments: json.RawMessage(`{"order_id":"#W1","reason":"no longer needed"}`)}
	return &Task{
		ID: "t1", Modules: []string{"retail"}, Brief: "Cancel things.",
		Atomic: []Atomic{
			{ID: "a1", Request: "r1", Reference: []Call{call}, Checks: []Check{{Kind: CheckChangedRows}}},
			{ID: "a2", Request: "r2", After: []string{"a1"}, Reference: []Call{call},
				Checks: []Check{{Kind: CheckSQL, SQL: "SELECT 1", Expect: json.RawMessage(`[[1]]`)}}},
			{ID: "a3", Request: "r3", After: []string{"a2", "a1"}, Checks: []Check{
				{Kind: CheckRequiredCall, Tool: "get_order_details", Arguments: json.RawMessage(`{"order_id":"#W1"}`)},
				{Kind: CheckForbiddenCall, Tool: "transfer_to_human_agents"},
			}, Rubric: []RubricItem{{ID: "polite", Criterion: "The agent is polite."}}},
		},
		Checks: []Check{{Kind: CheckStateEqual}, {Kind: CheckCommunicate, Text: "42"}, {Kind: CheckUnchanged}},
	}
}

func TestValidateOK(t *testing.T) {
	if err := chain().Validate(); err != nil {
		t.Fatal(err)
	}
	empty := &Task{ID: "e", Brief: "b"}
	if err := empty.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestValidateErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mut    func(*Task)
		atomic string
		field  string
		is     error
	}{
		{"no id", func(t *Task) { t.ID = "" }, "", "id", nil},
		{"no brief", func(t *Task) { t.Brief = " " }, "", "brief", nil},
		{"atomic no id", func(t *Task) { t.Atomic[1].ID = "" }, "", "atomic[1].id", nil},
		{"duplicate atomic id", func(t *Task) { t.Atomic[2].ID = "a1" }, "a1", "id", nil},
		{"no request", func(t *Task) { t.Atomic[1].Request = "" }, "a2", "request", nil},
		{"unknown after", func(t *Task) { t.Atomic[2].After = []string{"a2", "zz"} }, "a3", "after[1]", nil},
		{"self after", func(t *Task) { t.Atomic[0].After = []string{"a1"} }, "a1", "after[0]", ErrCycle},
		{"cycle", func(t *Task) { t.Atomic[0].After = []string{"a3"} }, "", "atomic", ErrCycle},
		{"not topological", func(t *Task) { t.Atomic[0], t.Atomic[1] = t.Atomic[1], t.Atomic[0] }, "a2", "after[0]", nil},
		{"call no tool", func(t *Task) { t.Atomic[0].Reference[0].Tool = "" }, "a1", "reference[0].tool", nil},
		{"call args", func(t *Task) { t.Atomic[0].Reference = []Call{{Tool: "x", Arguments: json.RawMessage(`"s"`)}} }, "a1", "reference[0].arguments", nil},
		{"unknown kind", func(t *Task) { t.Atomic[1].Checks[0].Kind = "vibes" }, "a2", "checks[0].kind", ErrUnknownCheck},
		{"empty kind", func(t *Task) { t.Checks[0].Kind = "" }, "", "checks[0].kind", nil},
		{"sql no sql", func(t *Task) { t.Atomic[1].Checks[0].SQL = "" }, "a2", "checks[0].sql", nil},
		{"sql no expect", func(t *Task) { t.Atomic[1].Checks[0].Expect = nil }, "a2", "checks[0].expect", nil},
		{"sql bad expect", func(t *Task) { t.Atomic[1].Checks[0].Expect = json.RawMessage(`[1]`) }, "a2", "checks[0].expect", nil},
		{"required no tool", func(t *Task) { t.Atomic[2].Checks[0].Tool = "" }, "a3", "checks[0].tool", nil},
		{"forbidden bad args", func(t *Task) { t.Atomic[2].Checks[1].Arguments = json.RawMessage(`[]`) }, "a3", "checks[1].arguments", nil},
		{"communicate no text", func(t *Task) { t.Checks[1].Text = "" }, "", "checks[1].text", nil},
		{"changed_rows overall", func(t *Task) { t.Checks[2].Kind = CheckChangedRows }, "", "checks[2].kind", nil},
		{"changed_rows no reference", func(t *Task) { t.Atomic[2].Checks[0] = Check{Kind: CheckChangedRows} }, "a3", "checks[0].kind", nil},
		{"rubric dup", func(t *Task) {
			t.Atomic[2].Rubric = append(t.Atomic[2].Rubric, RubricItem{ID: "polite", Criterion: "c"})
		}, "a3", "rubric[1].id", nil},
		{"rubric weight", func(t *Task) { t.Rubric = []RubricItem{{ID: "w", Criterion: "c", Weight: -1}} }, "", "rubric[0].weight", nil},
		{"rubric criterion", func(t *Task) { t.Rubric = []RubricItem{{ID: "w"}} }, "", "rubric[0].criterion", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := chain()
			tc.mut(task)
			err := task.Validate()
			var te *Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *Error", err)
			}
			wantTask := task.ID
			if te.Task != wantTask || te.Atomic != tc.atomic || te.Field != tc.field {
				t.Errorf("err = %#v (%v), want task %q atomic %q field %q", te, err, wantTask, tc.atomic, tc.field)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err = %v, want %v", err, tc.is)
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	err := &Error{Task: "12", Atomic: "a2", Field: "after[0]", Err: errors.New(`unknown atomic task "zz"`)}
	if got := err.Error(); got != `task "12": atomic "a2": after[0]: unknown atomic task "zz"` {
		t.Errorf("Error() = %s", got)
	}
	if got := (&Error{Field: "format", Err: errors.New("bad")}).Error(); got != "task: format: bad" {
		t.Errorf("Error() = %s", got)
	}
}

func TestOrder(t *testing.T) {
	task := chain()
	if got := task.Order(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("chain order = %v", got)
	}
	// A diamond listed out of order: d after b and c, b and c after a.
	d := &Task{Atomic: []Atomic{
		{ID: "d", After: []string{"c", "b"}},
		{ID: "c", After: []string{"a"}},
		{ID: "b", After: []string{"a", "a"}},
		{ID: "a"},
		{ID: "e", After: []string{"missing"}},
	}}
	want := []int{3, 1, 2, 0, 4}
	for range 3 {
		if got := d.Order(); !reflect.DeepEqual(got, want) {
			t.Fatalf("diamond order = %v, want %v", got, want)
		}
	}
	cyc := &Task{Atomic: []Atomic{{ID: "x", After: []string{"y"}}, {ID: "y", After: []string{"x"}}, {ID: "z"}}}
	if got := cyc.Order(); !reflect.DeepEqual(got, []int{2}) {
		t.Errorf("cycle order = %v", got)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	tasks := []*Task{chain(), {ID: "t2", Brief: "b", Meta: map[string]any{"k": "<v&>"}}}
	var buf bytes.Buffer
	if err := Save(&buf, tasks); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "{\n  \"format\": \"weft.tasks/v1\",\n  \"tasks\": [") || !strings.HasSuffix(buf.String(), "}\n") {
		t.Errorf("saved = %s", buf.String())
	}
	if !strings.Contains(buf.String(), `"<v&>"`) {
		t.Error("HTML characters escaped")
	}
	got, err := Load(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "t1" || len(got[0].Atomic) != 3 || got[0].Atomic[2].Checks[0].Tool != "get_order_details" ||
		got[1].Meta["k"] != "<v&>" {
		t.Errorf("loaded = %+v", got)
	}
	var again bytes.Buffer
	if err := Save(&again, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("Save(Load(b)) != b")
	}
	// An empty file saves "tasks": [].
	var empty bytes.Buffer
	if err := Save(&empty, nil); err != nil || empty.String() != "{\n  \"format\": \"weft.tasks/v1\",\n  \"tasks\": []\n}\n" {
		t.Errorf("empty = %q, %v", empty.String(), err)
	}
}

func TestSaveInvalid(t *testing.T) {
	bad := chain()
	bad.Atomic[0].Request = ""
	var buf bytes.Buffer
	if err := Save(&buf, []*Task{bad}); err == nil || buf.Len() != 0 {
		t.Errorf("err = %v, wrote %d bytes", err, buf.Len())
	}
	if err := Save(&buf, []*Task{nil}); err == nil {
		t.Error("nil task: no error")
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, task, field, msg string }{
		{"not json", `[`, "", "", "not a weft task file"},
		{"trailing", `{"format":"weft.tasks/v1","tasks":[]} {}`, "", "", "trailing data"},
		{"format", `{"format":"weft.tasks/v0","tasks":[]}`, "", "format", `"weft.tasks/v0"`},
		{"unknown field", `{"format":"weft.tasks/v1","tasks":[{"id":"x","brief":"b","colour":1}]}`, "", "", "colour"},
		{"null task", `{"format":"weft.tasks/v1","tasks":[null]}`, "", "tasks[0]", "null task"},
		{"dup task", `{"format":"weft.tasks/v1","tasks":[{"id":"x","brief":"b"},{"id":"x","brief":"b"}]}`, "x", "id", "tasks[1] duplicates tasks[0]"},
		{"invalid task", `{"format":"weft.tasks/v1","tasks":[{"id":"x","brief":"b","checks":[{"kind":"sql"}]}]}`, "x", "checks[0].sql", "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(strings.NewReader(tc.in))
			var te *Error
			if !errors.As(err, &te) || te.Task != tc.task || te.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want task %q field %q containing %q", err, tc.task, tc.field, tc.msg)
			}
		})
	}
	if _, err := LoadFile("testdata/no-such-file.json"); err == nil {
		t.Error("missing file: no error")
	}
}

// TestDocsExample: the example in docs/tasks.md loads and validates.
func TestDocsExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/tasks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "## Example\n\n```json\n")
	if !ok {
		t.Fatal("no example in docs/tasks.md")
	}
	example, _, _ := strings.Cut(rest, "```")
	tasks, err := Load(strings.NewReader(example))
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || len(tasks[0].Atomic) != 2 || tasks[0].Atomic[0].Request != RenderRequest(tasks[0].Atomic[0].Reference[2]) ||
		tasks[0].Atomic[1].Request != RenderRequest(tasks[0].Atomic[1].Reference[0]) {
		t.Errorf("example = %+v", tasks)
	}
}

// FuzzLoad: Load never panics, and what it accepts saves and loads back to
// the same bytes.
func FuzzLoad(f *testing.F) {
	f.Add(`{"format":"weft.tasks/v1","tasks":[]}`)
	f.Add(`{"format":"weft.tasks/v1","tasks":[{"id":"x","brief":"b","atomic":[{"id":"a","request":"r","after":["a"]}]}]}`)
	var buf bytes.Buffer
	if err := Save(&buf, []*Task{chain()}); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.String())
	f.Fuzz(func(t *testing.T, in string) {
		tasks, err := Load(strings.NewReader(in))
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		if err := Save(&a, tasks); err != nil {
			t.Fatalf("Save of loaded tasks: %v", err)
		}
		again, err := Load(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if err := Save(&b, again); err != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Fatalf("save/load not stable: %v", err)
		}
	})
}

// A task file written before the version field existed loads as version 0
// and saves byte for byte as it was; a revised task (version 2) keeps its
// version through Save and Load; a negative version is refused with
// ErrVersion naming the field, and nothing is written.
func TestVersionField(t *testing.T) {
	old := chain()
	var b bytes.Buffer
	if err := Save(&b, []*Task{old}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `"version"`) {
		t.Fatalf("a version-0 task wrote a version field:\n%s", b.String())
	}
	ts, err := Load(bytes.NewReader(b.Bytes()))
	if err != nil || ts[0].Version != 0 {
		t.Fatalf("old file: version %v, err %v", ts, err)
	}
	rev := chain()
	rev.Version = 2
	var rb bytes.Buffer
	if err := Save(&rb, []*Task{rev}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rb.String(), `"version": 2,`) {
		t.Fatalf("revised task file has no version 2:\n%s", rb.String())
	}
	back, err := Load(bytes.NewReader(rb.Bytes()))
	if err != nil || back[0].Version != 2 {
		t.Fatalf("revised file: %v, err %v", back, err)
	}
	bad := chain()
	bad.Version = -1
	var w bytes.Buffer
	err = Save(&w, []*Task{bad})
	var te *Error
	if !errors.Is(err, ErrVersion) || !errors.As(err, &te) || te.Field != "version" || te.Task != "t1" || w.Len() != 0 {
		t.Fatalf("negative version: err %v, wrote %d bytes", err, w.Len())
	}
}
