package task

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	retailTau2Path = "../../examples/data/tau2-retail/tasks.json"
	retailGolden   = "../../examples/data/tau2-retail/tasks.weft.json"
	airlineTau2    = "../../examples/data/tau2-airline/tasks.json"
	airlineTools   = "../../examples/data/tau2-airline/tools.json"
)

// retailRO is the retail module's tool set (the readOnlyHint annotations of
// examples/modules/retail's manifest), written out here: the product reads
// it from the built module (internal/pipeline).
var retailRO = Tau2Tools{
	"calculate": true, "find_user_id_by_name_zip": true, "find_user_id_by_email": true,
	"get_order_details": true, "get_product_details": true, "get_item_details": true,
	"get_user_details": true, "list_all_product_types": true, "transfer_to_human_agents": true,
	"cancel_pending_order": false, "modify_pending_order_address": false, "modify_pending_order_items": false,
	"modify_pending_order_payment": false, "modify_user_address": false, "return_delivered_order_items": false,
	"exchange_delivered_order_items": false,
}

// retailFailedPath lists the gold actions that fail in the retail module
// (plugins/host's TestGoldReplayRetail keeps it equal to the module's
// replay).
const retailFailedPath = "testdata/tau2-retail-failed-actions.json"

// retailFailed reads retailFailedPath: task id -> failed gold actions.
func retailFailed(t testing.TB) map[string][]FailedAction {
	t.Helper()
	b, err := os.ReadFile(retailFailedPath)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string][]FailedAction
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// fixtureReplay is a Replay from a failed-actions list: the listed actions
// fail with their error text, every other succeeds.
func fixtureReplay(failed map[string][]FailedAction) func(*Tau2Task, []Call) ([]ActionOutcome, error) {
	return func(tk *Tau2Task, calls []Call) ([]ActionOutcome, error) {
		out := make([]ActionOutcome, len(calls))
		for _, f := range failed[tk.ID] {
			out[f.Action] = ActionOutcome{Failed: true, Reason: f.Error}
		}
		return out, nil
	}
}

var retailOpts = Tau2Options{Modules: []string{"retail"}, Tools: retailRO, Source: "tau2-retail"}

func convertRetail(t *testing.T) ([]*Tau2Task, []*Task) {
	t.Helper()
	retailOpts := retailOpts
	retailOpts.Replay = fixtureReplay(retailFailed(t))
	raw, err := LoadTau2File(retailTau2Path)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := ConvertTau2File(retailTau2Path, retailOpts)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 114 || len(conv) != 114 {
		t.Fatalf("got %d raw and %d converted tasks, want 114", len(raw), len(conv))
	}
	return raw, conv
}

func TestFromTau2AllRetail(t *testing.T) {
	raw, conv := convertRetail(t)
	zeroAtomic, readOnlyOnly, totalAtomic := checkConverted(t, raw, conv, retailRO, retailFailed(t), "tau2-retail")
	// Facts of the retail split, counted by hand from tasks.json.
	// Two tasks have no actions; task 105's only action fails.
	if zeroAtomic != 3 {
		t.Errorf("%d tasks without atomic tasks, want 3", zeroAtomic)
	}
	// 184 state-changing gold actions, 2 of which fail (tasks 64 and 105).
	if totalAtomic != 182 || readOnlyOnly != 8 {
		t.Errorf("%d atomic tasks, %d read-only-only tasks; want 182 and 8", totalAtomic, readOnlyOnly)
	}
}

// checkConverted checks the promises of FromTau2 on every task of a
// converted file against its raw tasks and the domain's tools, and
// returns the tasks without atomic tasks, the tasks with only read-only
// actions and the number of atomic tasks. failed lists the gold actions
// that fail (task id -> actions; nil = none).
func checkConverted(t *testing.T, raw []*Tau2Task, conv []*Task, tools Tau2Tools, failed map[string][]FailedAction, source string) (zeroAtomic, readOnlyOnly, totalAtomic int) {
	t.Helper()
	for i, rt := range raw {
		ct := conv[i]
		if ct.ID != rt.ID || ct.Source != source+":"+rt.ID {
			t.Errorf("task %d: id %q source %q", i, ct.ID, ct.Source)
		}
		if ct.Brief != rt.Brief() {
			t.Errorf("task %s: brief differs from Tau2Task.Brief", rt.ID)
		}
		fails := map[int]bool{}
		for _, f := range failed[rt.ID] {
			fails[f.Action] = true
		}
		// A failed state-changing gold action starts no atomic task.
		changing, succeeding := 0, 0
		for k, a := range rt.Actions {
			if fails[k] {
				continue
			}
			succeeding++
			if !tools[a.Name] {
				changing++
			}
		}
		want := changing
		if changing == 0 && succeeding > 0 {
			want = 1
			readOnlyOnly++
		}
		if want == 0 {
			zeroAtomic++
		}
		if len(ct.Atomic) != want {
			t.Errorf("task %s: %d atomic tasks, want %d", rt.ID, len(ct.Atomic), want)
		}
		totalAtomic += len(ct.Atomic)
		// The reference calls concatenated are the gold actions exactly.
		var calls []Call
		for k, a := range ct.Atomic {
			first := len(calls)
			calls = append(calls, a.Reference...)
			if k == 0 && a.After != nil || k > 0 && !reflect.DeepEqual(a.After, []string{ct.Atomic[k-1].ID}) {
				t.Errorf("task %s atomic %s: After = %v", rt.ID, a.ID, a.After)
			}
			if changing > 0 {
				// Each atomic task ends in its state-changing action, except the last which may add reads.
				nChanging := 0
				for j, c := range a.Reference {
					if !tools[c.Tool] && !fails[first+j] {
						nChanging++
					}
				}
				if nChanging != 1 || len(a.Checks) != 1 || a.Checks[0].Kind != CheckChangedRows {
					t.Errorf("task %s atomic %s: %d changing calls, checks %+v", rt.ID, a.ID, nChanging, a.Checks)
				}
				if k < len(ct.Atomic)-1 && tools[a.Reference[len(a.Reference)-1].Tool] {
					t.Errorf("task %s atomic %s does not end with its action", rt.ID, a.ID)
				}
			}
		}
		if want == 0 {
			// No atomic task holds the calls (task 105's failed
			// exchange changes nothing, so the reference is empty).
			if len(calls) != 0 {
				t.Errorf("task %s: %d reference calls without atomic tasks", rt.ID, len(calls))
			}
			continue
		}
		if len(calls) != len(rt.Actions) {
			t.Fatalf("task %s: %d reference calls, %d gold actions", rt.ID, len(calls), len(rt.Actions))
		}
		for k, a := range rt.Actions {
			c := calls[k]
			if c.Tool != a.Name || !jsonEqual(t, c.Arguments, a.Arguments) || !reflect.DeepEqual(c.Compare, a.CompareArgs) {
				t.Errorf("task %s call %d = %s %s %v, gold %s %s %v", rt.ID, k, c.Tool, c.Arguments, c.Compare, a.Name, a.Arguments, a.CompareArgs)
			}
		}
		// Overall checks: state_equal then the communicate texts.
		if len(ct.Checks) != 1+len(rt.CommunicateInfo) || ct.Checks[0].Kind != CheckStateEqual {
			t.Errorf("task %s: checks %+v", rt.ID, ct.Checks)
		}
		for k, info := range rt.CommunicateInfo {
			if c := ct.Checks[1+k]; c.Kind != CheckCommunicate || c.Text != info {
				t.Errorf("task %s: check %d = %+v, want communicate %q", rt.ID, 1+k, c, info)
			}
		}
		if len(ct.Rubric) != len(rt.NLAssertions) {
			t.Errorf("task %s: %d rubric items, %d nl_assertions", rt.ID, len(ct.Rubric), len(rt.NLAssertions))
		}
		if strings.Contains(strings.ToLower(ct.Identity), "you") {
			t.Errorf("task %s: identity %q still in the second person", rt.ID, ct.Identity)
		}
	}
	return zeroAtomic, readOnlyOnly, totalAtomic
}

// TestFromTau2AllAirline converts tau2-bench's 50 airline tasks with the
// read-only set of the airline's own tools.json: the loader and the
// conversion are generic over tau2 domains (no airline code in weft).
func TestFromTau2AllAirline(t *testing.T) {
	tools, err := LoadTau2Tools(airlineTools)
	if err != nil {
		t.Fatal(err)
	}
	var ro []string
	for _, n := range tools.Names() {
		if tools[n] {
			ro = append(ro, n)
		}
	}
	wantRO := []string{"calculate", "get_flight_status", "get_reservation_details", "get_user_details",
		"list_all_airports", "search_direct_flight", "search_onestop_flight", "transfer_to_human_agents"}
	if len(tools) != 14 || !reflect.DeepEqual(ro, wantRO) {
		t.Fatalf("airline tools: %d, read-only %v; want 14 and %v", len(tools), ro, wantRO)
	}
	raw, err := LoadTau2File(airlineTau2)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := ConvertTau2File(airlineTau2, Tau2Options{Modules: []string{"airline"}, Tools: tools, Source: "tau2-airline"})
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 50 || len(conv) != 50 {
		t.Fatalf("got %d raw and %d converted tasks, want 50", len(raw), len(conv))
	}
	zeroAtomic, readOnlyOnly, totalAtomic := checkConverted(t, raw, conv, tools, nil, "tau2-airline")
	// Counted from tasks.json and tools.json by a script outside weft.
	if zeroAtomic != 7 || readOnlyOnly != 17 || totalAtomic != 66 {
		t.Errorf("%d tasks without actions, %d read-only-only, %d atomic tasks; want 7, 17 and 66", zeroAtomic, readOnlyOnly, totalAtomic)
	}
	for _, ct := range conv {
		if !reflect.DeepEqual(ct.Modules, []string{"airline"}) {
			t.Fatalf("task %s: modules %v", ct.ID, ct.Modules)
		}
	}
	if conv[0].Identity != "I am Emma Kim.\nMy user id is emma_kim_9957." {
		t.Errorf("task 0 identity = %q", conv[0].Identity)
	}
}

func TestReadTau2Tools(t *testing.T) {
	got, err := ReadTau2Tools(strings.NewReader(`[{"name":"a","read_only":true,"tool_type":"read","parameters":{}},{"name":"b","read_only":false}]`))
	if err != nil || !reflect.DeepEqual(got, Tau2Tools{"a": true, "b": false}) {
		t.Fatalf("got %v, %v", got, err)
	}
	for _, tc := range []struct{ in, want string }{
		{`{}`, "tau2 tools: not a JSON list of tools"},
		{`[]`, "tau2 tools: the list is empty"},
		{`[{"read_only":true}]`, `tau2 tools: tool 0: missing or empty "name"`},
		{`[{"name":"a","read_only":true},{"name":"b"}]`, `tau2 tools: tool 1 (b): missing "read_only"`},
		{`[{"name":"a","read_only":true},{"name":"a","read_only":false}]`, `tau2 tools: tool 1: duplicate name "a"`},
		{`[{"name":"a","read_only":"yes"}]`, "tau2 tools: tool 0: json: cannot unmarshal"},
		{`[{"name":"a","read_only":true}] []`, "tau2 tools: data after the list"},
	} {
		_, err := ReadTau2Tools(strings.NewReader(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.in, err, tc.want)
		}
	}
	if _, err := LoadTau2Tools("testdata/no-such-tools.json"); err == nil {
		t.Error("missing file: no error")
	}
}

func jsonEqual(t *testing.T, a, b json.RawMessage) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(x, y)
}

func TestFromTau2Task0(t *testing.T) {
	_, conv := convertRetail(t)
	ct := conv[0]
	if ct.Identity != "I am Yusuf Rossi in zip code 19122." {
		t.Errorf("identity = %q", ct.Identity)
	}
	if len(ct.Atomic) != 1 {
		t.Fatalf("atomic = %+v", ct.Atomic)
	}
	a := ct.Atomic[0]
	if a.ID != "a1" || len(a.Reference) != 5 || a.Reference[4].Tool != "exchange_delivered_order_items" {
		t.Errorf("atomic = %+v", a)
	}
	wantB := map[string]string{"order_id": "#W2378156", "item_ids": "1151293680,4983901480",
		"new_item_ids": "7706410293,7747408585", "payment_method_id": "credit_card_9513926"}
	if !reflect.DeepEqual(a.Bindings, wantB) {
		t.Errorf("bindings = %v", a.Bindings)
	}
	wantR := "I would like to exchange items of my delivered order #W2378156: item 1151293680 for item 7706410293, " +
		"item 4983901480 for item 7747408585; use payment method credit_card_9513926 for any price difference."
	if a.Request != wantR {
		t.Errorf("request = %q", a.Request)
	}
}

func TestFromTau2Shapes(t *testing.T) {
	act := func(name, args string) Tau2Action { return Tau2Action{Name: name, Arguments: json.RawMessage(args)} }
	base := Tau2Task{ID: "x", Scenario: Tau2Scenario{ReasonForCall: "r", KnownInfo: "Your name is Ann and you're from Oslo."}}

	// Only reads: one atomic task with a required_call of the last one.
	ro := base
	ro.Actions = []Tau2Action{act("find_user_id_by_email", `{"email":"a@b.c"}`), act("get_user_details", `{"user_id":"ann_1"}`)}
	ro.CommunicateInfo = []string{"42"}
	got, err := FromTau2(&ro, Tau2Options{Tools: retailRO})
	if err != nil {
		t.Fatal(err)
	}
	if got.Identity != "My name is Ann and I'm from Oslo." || got.Source != "x" {
		t.Errorf("identity %q source %q", got.Identity, got.Source)
	}
	if len(got.Atomic) != 1 || len(got.Atomic[0].Reference) != 2 {
		t.Fatalf("atomic = %+v", got.Atomic)
	}
	c := got.Atomic[0].Checks
	if len(c) != 1 || c[0].Kind != CheckRequiredCall || c[0].Tool != "get_user_details" || string(c[0].Arguments) != `{"user_id":"ann_1"}` {
		t.Errorf("checks = %+v", c)
	}
	if got.Atomic[0].Request != "Can you look up my account, user ann_1?" || got.Atomic[0].Bindings["user_id"] != "ann_1" {
		t.Errorf("atomic = %+v", got.Atomic[0])
	}
	if len(got.Checks) != 2 || got.Checks[1].Text != "42" {
		t.Errorf("checks = %+v", got.Checks)
	}

	// Two actions with reads between and after: a chain, trailing reads on the last.
	two := base
	two.Actions = []Tau2Action{
		act("get_order_details", `{"order_id":"#W1"}`),
		act("cancel_pending_order", `{"order_id":"#W1","reason":"ordered by mistake"}`),
		act("get_order_details", `{"order_id":"#W2"}`),
		act("modify_pending_order_payment", `{"order_id":"#W2","payment_method_id":"gift_card_1"}`),
		act("calculate", `{"expression":"1 + 2"}`),
	}
	got, err = FromTau2(&two, Tau2Options{Tools: retailRO})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Atomic) != 2 {
		t.Fatalf("atomic = %+v", got.Atomic)
	}
	a1, a2 := got.Atomic[0], got.Atomic[1]
	if len(a1.Reference) != 2 || len(a2.Reference) != 3 || a1.After != nil || !reflect.DeepEqual(a2.After, []string{"a1"}) {
		t.Errorf("a1 = %+v\na2 = %+v", a1, a2)
	}
	if a1.Request != "Please cancel my order #W1 — reason: ordered by mistake." {
		t.Errorf("a1 request = %q", a1.Request)
	}
	if a2.Request != "Please switch the payment of my order #W2 to payment method gift_card_1." {
		t.Errorf("a2 request = %q", a2.Request)
	}

	// No actions: no atomic tasks; errors for a nil task, no tools, an unknown tool, bad arguments.
	none := base
	got, err = FromTau2(&none, Tau2Options{Tools: retailRO})
	if err != nil || len(got.Atomic) != 0 || len(got.Checks) != 1 {
		t.Errorf("no actions: %+v, %v", got, err)
	}
	if _, err := FromTau2(nil, retailOpts); err == nil {
		t.Error("nil task: no error")
	}
	if _, err := FromTau2(&none, Tau2Options{}); err == nil {
		t.Error("no Tools: no error")
	}
	unknown := base
	unknown.Actions = []Tau2Action{act("get_order_details", `{"order_id":"#W1"}`), act("book_flight", `{"flight":"HAT001"}`)}
	_, err = FromTau2(&unknown, retailOpts)
	if err == nil || !strings.Contains(err.Error(), `evaluation_criteria.actions[1].name`) || !strings.Contains(err.Error(), `tool "book_flight" is not one of the domain's tools (calculate, cancel_pending_order,`) {
		t.Errorf("unknown tool: error %v", err)
	}
	bad := base
	bad.Actions = []Tau2Action{act("cancel_pending_order", `[1]`)}
	if _, err := FromTau2(&bad, retailOpts); err == nil {
		t.Error("array arguments: no error")
	}
}

func TestRenderRequest(t *testing.T) {
	for _, tc := range []struct{ tool, args, want string }{
		{"cancel_pending_order", `{"order_id":"#W9","reason":"no longer needed"}`, "Please cancel my order #W9 — reason: no longer needed."},
		{"modify_pending_order_address", `{"order_id":"#W9","address1":"1 Main St","address2":"","city":"Austin","state":"TX","zip":"78701","country":"USA"}`,
			"Please change the shipping address of my order #W9 to 1 Main St, Austin, TX 78701, USA."},
		{"modify_user_address", `{"user_id":"u1","address1":"1 Main St","address2":"Apt 2","city":"Austin","state":"TX","zip":"78701","country":"USA"}`,
			"Please change the default address of my account (user u1) to 1 Main St, Apt 2, Austin, TX 78701, USA."},
		{"modify_pending_order_items", `{"order_id":"#W9","item_ids":["1"],"new_item_ids":["2"],"payment_method_id":"paypal_3"}`,
			"Please change the items of my pending order #W9: item 1 for item 2; use payment method paypal_3 for any price difference."},
		{"return_delivered_order_items", `{"order_id":"#W9","item_ids":["1","2"],"payment_method_id":"gift_card_4"}`,
			"I would like to return items 1, 2 from my order #W9, refunded to payment method gift_card_4."},
		{"transfer_to_human_agents", `{"summary":"Wants a refund. "}`, "Please transfer me to a human agent. In short: Wants a refund."},
		{"get_order_details", `{"order_id":"#W9"}`, "Can you look up order #W9?"},
		{"get_product_details", `{"product_id":"p1"}`, "Can you tell me about product p1 and its variants?"},
		{"get_item_details", `{"item_id":"i1"}`, "Can you look up item i1?"},
		{"find_user_id_by_name_zip", `{"first_name":"Ann","last_name":"Lee","zip":"10001"}`, "Can you find my account? I am Ann Lee, zip code 10001."},
		{"find_user_id_by_email", `{"email":"a@b.c"}`, "Can you find my account? My email is a@b.c."},
		{"list_all_product_types", `{}`, "Which product types do you sell?"},
		{"calculate", `{"expression":"2 * 3"}`, "Can you calculate 2 * 3 for me?"},
		// Fallbacks: unknown tool, missing argument, mismatched pairs, no arguments.
		{"refund_everything", `{"b":[1,2],"a":"x"}`, "Please run refund_everything with a: x, b: [1,2]."},
		{"cancel_pending_order", `{"order_id":"#W9"}`, "Please run cancel_pending_order with order_id: #W9."},
		{"exchange_delivered_order_items", `{"order_id":"#W9","item_ids":["1"],"new_item_ids":[],"payment_method_id":"p"}`,
			"Please run exchange_delivered_order_items with item_ids: 1, new_item_ids: , order_id: #W9, payment_method_id: p."},
		{"ping", ``, "Please run ping."},
	} {
		if got := RenderRequest(Call{Tool: tc.tool, Arguments: json.RawMessage(tc.args)}); got != tc.want {
			t.Errorf("RenderRequest(%s %s) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

func TestFirstPerson(t *testing.T) {
	for in, want := range map[string]string{
		"You are Yusuf Rossi in zip code 19122.":                             "I am Yusuf Rossi in zip code 19122.",
		"You name is Lei Wilson and your zip code is 32255.":                 "My name is Lei Wilson and my zip code is 32255.",
		"You're Chen Smith, living in Jacksonville 32278.":                   "I'm Chen Smith, living in Jacksonville 32278.",
		"You are Amelia, and you have two emails. You live in Philadelphia.": "I am Amelia, and I have two emails. I live in Philadelphia.",
		"You are user noah_ito_3850. Your name is Noah but you go by NoNo.":  "I am user noah_ito_3850. My name is Noah but I go by NoNo.",
		"  ":                       "",
		"Yourself and youth stay.": "Yourself and youth stay.",
	} {
		if got := firstPerson(in); got != want {
			t.Errorf("firstPerson(%q) = %q, want %q", in, got, want)
		}
	}
}

func saveBytes(t *testing.T, tasks []*Task) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := Save(&buf, tasks); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestRetailGolden: the converted retail tasks are deterministic, match the
// golden file (go test -run TestRetailGolden -update rewrites it), and the
// golden file loads, validates and saves back to the same bytes.
func TestRetailGolden(t *testing.T) {
	_, conv := convertRetail(t)
	got := saveBytes(t, conv)
	_, again := convertRetail(t)
	if !bytes.Equal(got, saveBytes(t, again)) {
		t.Fatal("two conversions differ")
	}
	if *update {
		if err := os.WriteFile(retailGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(retailGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is stale: run go test ./core/task -run TestRetailGolden -update", retailGolden)
	}
	loaded, err := LoadFile(retailGolden)
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 114 {
		t.Fatalf("loaded %d tasks", len(loaded))
	}
	if !bytes.Equal(saveBytes(t, loaded), want) {
		t.Error("Save(Load(golden)) differs from golden")
	}
}
