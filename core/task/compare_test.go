package task

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestCompareEmptyRoundTrip(t *testing.T) {
	c := Check{Kind: CheckRequiredCall, Tool: "x", Compare: []string{}}
	b, _ := json.Marshal(c)
	var back Check
	json.Unmarshal(b, &back)
	if back.Compare == nil || len(back.Compare) != 0 {
		t.Fatalf("%s -> %#v", b, back.Compare)
	}
	b2, _ := json.Marshal(Call{Tool: "y", Arguments: json.RawMessage(`{}`)})
	if string(b2) != `{"tool":"y","arguments":{}}` {
		t.Fatalf("%s", b2)
	}
}

// TestRetailCompareNone: tau2 actions with compare_args [] (transfer to a
// human: any summary will do) keep "compare no arguments" through the
// weft task file, so the required_call checks of tasks 10, 12 and 50 do
// not demand the gold summary sentence.
func TestRetailCompareNone(t *testing.T) {
	tasks, err := LoadFile("../../examples/data/tau2-retail/tasks.weft.json")
	if err != nil {
		t.Fatal(err)
	}
	none := map[string]bool{}
	for _, tk := range tasks {
		for _, a := range tk.Atomic {
			for _, c := range a.Checks {
				if c.Kind == CheckRequiredCall && c.Compare != nil && len(c.Compare) == 0 {
					none[tk.ID] = true
				}
			}
		}
	}
	for _, id := range []string{"10", "12", "50"} {
		if !none[id] {
			t.Errorf("task %s: its required_call check compares arguments; tau2 says compare none", id)
		}
	}
}

func TestLoadDefaultsArguments(t *testing.T) {
	in := `{"format":"weft.tasks/v1","tasks":[{"id":"t","brief":"b","modules":["m"],"atomic":[{"id":"a1","request":"r","reference":[{"tool":"x"}],"checks":[]}],"checks":[]}]}`
	tasks, err := Load(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(tasks[0].Atomic[0].Reference[0].Arguments); got != "{}" {
		t.Fatalf("arguments %q, want {}", got)
	}
	var b bytes.Buffer
	if err := Save(&b, tasks); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(&b); err != nil {
		t.Fatalf("Load(Save(...)): %v", err)
	}
}
