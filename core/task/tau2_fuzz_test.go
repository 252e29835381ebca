package task

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

func writeFile(path, s string) error { return os.WriteFile(path, []byte(s), 0o644) }

// FuzzLoadTau2 checks that any input either loads into tasks that satisfy
// the loader's promises or fails with a *Tau2Error, never panics.
func FuzzLoadTau2(f *testing.F) {
	f.Add(`[{"id":"0","user_scenario":{"instructions":{"reason_for_call":"r","known_info":"k"}},"evaluation_criteria":{"actions":[{"action_id":"0_0","name":"get_order_details","arguments":{"order_id":"#W1"}}],"communicate_info":["1"]}}]`)
	f.Add(`[{"id":3,"user_scenario":{"instructions":"free text"},"evaluation_criteria":{"actions":null}}]`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, in string) {
		tasks, err := LoadTau2(strings.NewReader(in))
		if err != nil {
			var te *Tau2Error
			if !errors.As(err, &te) {
				t.Fatalf("error %v is not a *Tau2Error", err)
			}
			return
		}
		ids := map[string]bool{}
		for _, x := range tasks {
			if x.ID == "" || ids[x.ID] {
				t.Fatalf("empty or duplicate id %q", x.ID)
			}
			ids[x.ID] = true
			if x.Scenario.ReasonForCall == "" && x.Scenario.TaskInstructions == "" {
				t.Fatalf("task %q has no reason and no instructions", x.ID)
			}
			for _, a := range x.Actions {
				var m map[string]any
				if a.Name == "" || json.Unmarshal(a.Arguments, &m) != nil || m == nil {
					t.Fatalf("task %q: bad action %+v", x.ID, a)
				}
			}
			_ = x.Brief()
		}
	})
}
