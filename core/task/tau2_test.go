package task

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const retailTasks = "../../examples/data/tau2-retail/tasks.json"

func loadRetail(t *testing.T) []*Tau2Task {
	t.Helper()
	tasks, err := LoadTau2File(retailTasks)
	if err != nil {
		t.Fatal(err)
	}
	return tasks
}

func byID(t *testing.T, tasks []*Tau2Task, id string) *Tau2Task {
	t.Helper()
	for _, x := range tasks {
		if x.ID == id {
			return x
		}
	}
	t.Fatalf("no task %q", id)
	return nil
}

// compactJSON normalises JSON text for comparison.
func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestLoadTau2RetailFile(t *testing.T) {
	tasks := loadRetail(t)
	if len(tasks) != 114 {
		t.Fatalf("got %d tasks, want 114", len(tasks))
	}
	if tasks[0].ID != "0" || tasks[113].ID != "113" {
		t.Errorf("ids: first %q, last %q", tasks[0].ID, tasks[113].ID)
	}

	t0 := tasks[0]
	wantScenario := Tau2Scenario{
		Domain:           "retail",
		ReasonForCall:    "You received your order #W2378156 and wish to exchange the mechanical keyboard for the same one but with clicky switches and the smart thermostat for one compatible with Google Home instead of Apple HomeKit. If there is no keyboard that is clicky, RGB backlight, full size, you'd go for no backlight.",
		KnownInfo:        "You are Yusuf Rossi in zip code 19122.",
		UnknownInfo:      "You do not remember your email address.",
		TaskInstructions: "You are detail-oriented and want to make sure everything is addressed in one go.",
	}
	if diff := cmp.Diff(wantScenario, t0.Scenario); diff != "" {
		t.Errorf("task 0 scenario (-want +got):\n%s", diff)
	}
	type act struct{ ID, Name, Args string }
	want := []act{
		{"0_0", "find_user_id_by_name_zip", `{"first_name":"Yusuf","last_name":"Rossi","zip":"19122"}`},
		{"0_1", "get_order_details", `{"order_id":"#W2378156"}`},
		{"0_2", "get_product_details", `{"product_id":"1656367028"}`},
		{"0_3", "get_product_details", `{"product_id":"4896585277"}`},
		{"0_4", "exchange_delivered_order_items", `{"item_ids":["1151293680","4983901480"],"new_item_ids":["7706410293","7747408585"],"order_id":"#W2378156","payment_method_id":"credit_card_9513926"}`},
	}
	var got []act
	for _, a := range t0.Actions {
		got = append(got, act{a.ID, a.Name, compactJSON(t, a.Arguments)})
		if a.CompareArgs != nil {
			t.Errorf("action %s: CompareArgs = %v, want nil (absent in the file)", a.ID, a.CompareArgs)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("task 0 actions (-want +got):\n%s", diff)
	}
	if len(t0.CommunicateInfo) != 0 || t0.NLAssertions != nil {
		t.Errorf("task 0: communicate %v, nl %v", t0.CommunicateInfo, t0.NLAssertions)
	}
	if diff := cmp.Diff([]string{"DB", "NL_ASSERTION"}, t0.RewardBasis); diff != "" {
		t.Errorf("task 0 reward basis:\n%s", diff)
	}

	if got := byID(t, tasks, "19").CommunicateInfo; !cmp.Equal(got, []string{"54.04", "41.64"}) {
		t.Errorf("task 19 communicate_info = %q", got)
	}
	if got := byID(t, tasks, "2").NLAssertions; !cmp.Equal(got, []string{"Agent should tell the user that there are 10 t-shirt options available."}) {
		t.Errorf("task 2 nl_assertions = %q", got)
	}
	// compare_args: [] in the file loads as an empty, non-nil slice.
	a := byID(t, tasks, "10").Actions[4]
	if a.ID != "10_4" || a.Name != "transfer_to_human_agents" || a.CompareArgs == nil || len(a.CompareArgs) != 0 {
		t.Errorf("task 10 action 4 = %+v", a)
	}
	// unknown_info null loads as "".
	nullUnknown := 0
	for _, x := range tasks {
		if x.Scenario.UnknownInfo == "" {
			nullUnknown++
		}
	}
	if nullUnknown != 25 {
		t.Errorf("%d tasks without unknown_info, want 25", nullUnknown)
	}
	for _, id := range []string{"24", "57"} {
		if n := len(byID(t, tasks, id).Actions); n != 0 {
			t.Errorf("task %s: %d actions, want 0", id, n)
		}
	}
	total := 0
	for _, x := range tasks {
		total += len(x.Actions)
	}
	if total != 550 {
		t.Errorf("%d actions in all, want 550", total)
	}
}

func TestBrief(t *testing.T) {
	tasks := loadRetail(t)
	want := "Reason for call:\n" +
		"You received your order #W2378156 and wish to exchange the mechanical keyboard for the same one but with clicky switches and the smart thermostat for one compatible with Google Home instead of Apple HomeKit. If there is no keyboard that is clicky, RGB backlight, full size, you'd go for no backlight.\n\n" +
		"What you know:\nYou are Yusuf Rossi in zip code 19122.\n\n" +
		"What you do not know:\nYou do not remember your email address.\n\n" +
		"How to behave:\nYou are detail-oriented and want to make sure everything is addressed in one go."
	if got := tasks[0].Brief(); got != want {
		t.Errorf("task 0 brief:\n%s\nwant:\n%s", got, want)
	}
	// Empty sections are left out; persona comes first.
	x := &Tau2Task{ID: "x", Scenario: Tau2Scenario{Persona: " Calm. ", ReasonForCall: "Cancel order #W1.", TaskInstructions: "Be brief."}}
	if got, want := x.Brief(), "Persona:\nCalm.\n\nReason for call:\nCancel order #W1.\n\nHow to behave:\nBe brief."; got != want {
		t.Errorf("brief = %q, want %q", got, want)
	}
	// Every retail brief carries its reason for call and is stable.
	for _, x := range tasks {
		b := x.Brief()
		if !strings.Contains(b, strings.TrimSpace(x.Scenario.ReasonForCall)) || b != x.Brief() {
			t.Errorf("task %s: brief lacks its reason or is unstable", x.ID)
		}
	}
}

func TestLoadTau2Instructions(t *testing.T) {
	tasks, err := LoadTau2(strings.NewReader(`[
		{"id": 7, "user_scenario": {"persona": "Terse.", "instructions": "Cancel everything."},
		 "evaluation_criteria": {"actions": [{"action_id": "a", "name": "cancel_pending_order", "arguments": null}]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := tasks[0]
	want := &Tau2Task{
		ID:       "7",
		Scenario: Tau2Scenario{Persona: "Terse.", TaskInstructions: "Cancel everything."},
		Actions:  []Tau2Action{{ID: "a", Name: "cancel_pending_order", Arguments: json.RawMessage(`{}`)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadTau2Errors(t *testing.T) {
	const scen = `"user_scenario": {"instructions": {"reason_for_call": "r"}}`
	const crit = `"evaluation_criteria": {"actions": []}`
	tests := []struct {
		name, in string
		index    int
		id       string
		field    string
		msg      string
	}{
		{"not array", `{"id": "0"}`, -1, "", "", "tau2 tasks: not a JSON array of tasks"},
		{"trailing", `[] []`, -1, "", "", "tau2 tasks: trailing data after the tasks array"},
		{"task not object", `[3]`, 0, "", "", "tau2 tasks: task 0: not a task object"},
		{"missing id", `[{` + scen + `,` + crit + `}]`, 0, "", "id", "tau2 tasks: task 0: id: missing"},
		{"empty id", `[{"id": "",` + scen + `,` + crit + `}]`, 0, "", "id", "tau2 tasks: task 0: id: empty"},
		{"bad id", `[{"id": 1.5,` + scen + `,` + crit + `}]`, 0, "", "id", "tau2 tasks: task 0: id: want a string or an integer, got 1.5"},
		{"duplicate id", `[{"id": "a",` + scen + `,` + crit + `},{"id": "a",` + scen + `,` + crit + `}]`, 1, "a", "id", `tau2 tasks: task 1 (id "a"): id: duplicate of task 0`},
		{"no scenario", `[{"id": "a",` + crit + `}]`, 0, "a", "user_scenario", `tau2 tasks: task 0 (id "a"): user_scenario: missing`},
		{"no instructions", `[{"id": "a", "user_scenario": {}, ` + crit + `}]`, 0, "a", "user_scenario.instructions", `tau2 tasks: task 0 (id "a"): user_scenario.instructions: missing`},
		{"bad instructions", `[{"id": "a", "user_scenario": {"instructions": 4}, ` + crit + `}]`, 0, "a", "user_scenario.instructions", `tau2 tasks: task 0 (id "a"): user_scenario.instructions: neither an object nor a string`},
		{"no reason", `[{"id": "a", "user_scenario": {"instructions": {"known_info": "k"}}, ` + crit + `}]`, 0, "a", "user_scenario.instructions.reason_for_call", `tau2 tasks: task 0 (id "a"): user_scenario.instructions.reason_for_call: missing or empty`},
		{"no criteria", `[{"id": "a",` + scen + `}]`, 0, "a", "evaluation_criteria", `tau2 tasks: task 0 (id "a"): evaluation_criteria: missing`},
		{"action no name", `[{"id": "a",` + scen + `, "evaluation_criteria": {"actions": [{"name": "x"}, {"arguments": {}}]}}]`, 0, "a", "evaluation_criteria.actions[1].name", `tau2 tasks: task 0 (id "a"): evaluation_criteria.actions[1].name: missing or empty`},
		{"action args array", `[{"id": "a",` + scen + `, "evaluation_criteria": {"actions": [{"name": "x", "arguments": [1]}]}}]`, 0, "a", "evaluation_criteria.actions[0].arguments", `tau2 tasks: task 0 (id "a"): evaluation_criteria.actions[0].arguments: not a JSON object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadTau2(strings.NewReader(tc.in))
			var te *Tau2Error
			if !errors.As(err, &te) {
				t.Fatalf("err = %v, want *Tau2Error", err)
			}
			if te.Index != tc.index || te.TaskID != tc.id || te.Field != tc.field {
				t.Errorf("got index %d id %q field %q, want %d %q %q", te.Index, te.TaskID, te.Field, tc.index, tc.id, tc.field)
			}
			if !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("message %q, want prefix %q", err.Error(), tc.msg)
			}
		})
	}
}

func TestLoadTau2FileErrors(t *testing.T) {
	if _, err := LoadTau2File("testdata/does-not-exist.json"); err == nil {
		t.Fatal("no error for a missing file")
	}
	dir := t.TempDir()
	path := dir + "/tasks.json"
	if err := writeFile(path, `[{"id": "z"}]`); err != nil {
		t.Fatal(err)
	}
	_, err := LoadTau2File(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+`: tau2 tasks: task 0 (id "z"): user_scenario: missing`) {
		t.Errorf("err = %v", err)
	}
}
