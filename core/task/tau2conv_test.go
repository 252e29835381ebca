package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	retailTau2Path = "../../examples/data/tau2-retail/tasks.json"
	retailGolden   = "../../examples/data/tau2-retail/tasks.weft.json"
)

// retailRO is the retail module's read-only tool set, written out here
// independently of RetailReadOnly.
var retailRO = map[string]bool{
	"calculate": true, "find_user_id_by_name_zip": true, "find_user_id_by_email": true,
	"get_order_details": true, "get_product_details": true, "get_item_details": true,
	"get_user_details": true, "list_all_product_types": true, "transfer_to_human_agents": true,
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

var retailOpts = Tau2Options{Modules: []string{"retail"}, ReadOnly: RetailReadOnly, Source: "tau2-retail"}

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

func TestRetailReadOnly(t *testing.T) {
	for _, tool := range []string{"calculate", "find_user_id_by_name_zip", "find_user_id_by_email", "get_order_details",
		"get_product_details", "get_item_details", "get_user_details", "list_all_product_types", "transfer_to_human_agents",
		"cancel_pending_order", "modify_pending_order_address", "modify_pending_order_items", "modify_pending_order_payment",
		"modify_user_address", "return_delivered_order_items", "exchange_delivered_order_items", "no_such_tool"} {
		if got := RetailReadOnly(tool); got != retailRO[tool] {
			t.Errorf("RetailReadOnly(%q) = %v", tool, got)
		}
	}
}

func TestFromTau2AllRetail(t *testing.T) {
	raw, conv := convertRetail(t)
	failed := retailFailed(t)
	var zeroAtomic, readOnlyOnly, totalAtomic int
	for i, rt := range raw {
		ct := conv[i]
		if ct.ID != rt.ID || ct.Source != "tau2-retail:"+rt.ID {
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
			if !retailRO[a.Name] {
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
					if !retailRO[c.Tool] && !fails[first+j] {
						nChanging++
					}
				}
				if nChanging != 1 || len(a.Checks) != 1 || a.Checks[0].Kind != CheckChangedRows {
					t.Errorf("task %s atomic %s: %d changing calls, checks %+v", rt.ID, a.ID, nChanging, a.Checks)
				}
				if k < len(ct.Atomic)-1 && retailRO[a.Reference[len(a.Reference)-1].Tool] {
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
	got, err := FromTau2(&ro, Tau2Options{ReadOnly: RetailReadOnly})
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
	got, err = FromTau2(&two, Tau2Options{ReadOnly: RetailReadOnly})
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

	// No actions: no atomic tasks; errors for a nil task, nil ReadOnly, bad arguments.
	none := base
	got, err = FromTau2(&none, Tau2Options{ReadOnly: RetailReadOnly})
	if err != nil || len(got.Atomic) != 0 || len(got.Checks) != 1 {
		t.Errorf("no actions: %+v, %v", got, err)
	}
	if _, err := FromTau2(nil, retailOpts); err == nil {
		t.Error("nil task: no error")
	}
	if _, err := FromTau2(&none, Tau2Options{}); err == nil {
		t.Error("nil ReadOnly: no error")
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

// TestFromTau2FailedGoldActions: the 15 retail tasks whose gold solution
// has an action the benchmark's tool code refuses record each failed action
// with its reason; the two failed state-changing actions (task 64's
// exchange of a pending order, task 105's exchange the gift card cannot
// pay) start no atomic task, and their calls stay in the reference.
func TestFromTau2FailedGoldActions(t *testing.T) {
	_, conv := convertRetail(t)
	type rec struct {
		Action  int
		Tool    string
		Error   string
		Dropped bool
	}
	got := map[string][]rec{}
	byID := map[string]*Task{}
	for _, ct := range conv {
		byID[ct.ID] = ct
		fa, err := FailedActions(ct)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fa {
			got[ct.ID] = append(got[ct.ID], rec{f.Action, f.Tool, f.Error, f.DroppedAtomic})
		}
	}
	user := func(i int, tool string) rec { return rec{i, tool, "User not found", false} }
	want := map[string][]rec{
		"2":   {{1, "get_product_details", "Product not found", false}},
		"3":   {{1, "get_product_details", "Product not found", false}},
		"4":   {{1, "get_product_details", "Product not found", false}},
		"35":  {user(0, "find_user_id_by_email")},
		"37":  {user(0, "find_user_id_by_email")},
		"38":  {user(0, "find_user_id_by_email")},
		"39":  {user(0, "find_user_id_by_name_zip")},
		"46":  {{1, "get_order_details", "Order not found", false}, {2, "get_order_details", "Order not found", false}},
		"47":  {{1, "get_order_details", "Order not found", false}, {2, "get_order_details", "Order not found", false}},
		"54":  {user(0, "find_user_id_by_email")},
		"55":  {user(0, "find_user_id_by_email")},
		"64":  {{6, "exchange_delivered_order_items", "Non-delivered order cannot be exchanged", true}},
		"67":  {user(0, "find_user_id_by_name_zip"), user(1, "find_user_id_by_name_zip")},
		"68":  {user(0, "find_user_id_by_name_zip")},
		"105": {{0, "exchange_delivered_order_items", "Insufficient gift card balance to pay for the price difference", true}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("failed gold actions (-want +got):\n%s", d)
	}
	// Task 64: one atomic task (the modification), whose reference holds
	// all eight gold calls, the failed exchange among them.
	t64 := byID["64"]
	var tools []string
	for _, c := range t64.Atomic[0].Reference {
		tools = append(tools, c.Tool)
	}
	if len(t64.Atomic) != 1 || t64.Atomic[0].ID != "a1" || t64.Atomic[0].Checks[0].Kind != CheckChangedRows ||
		!reflect.DeepEqual(tools, []string{"find_user_id_by_name_zip", "get_user_details", "get_order_details", "get_order_details",
			"get_order_details", "get_product_details", "exchange_delivered_order_items", "modify_pending_order_items"}) {
		t.Errorf("task 64: atomic tasks %+v", t64.Atomic)
	}
	if !strings.HasPrefix(t64.Atomic[0].Request, "Please change the items of my pending order #W7464385") {
		t.Errorf("task 64: request %q", t64.Atomic[0].Request)
	}
	// Task 105: no atomic task; the overall checkpoint remains.
	if t105 := byID["105"]; len(t105.Atomic) != 0 || len(t105.Checks) != 1 || t105.Checks[0].Kind != CheckStateEqual {
		t.Errorf("task 105: atomic %+v, checks %+v", t105.Atomic, t105.Checks)
	}
	// Without a replay every gold action counts: task 64 has two atomic
	// tasks and no record.
	raw, err := LoadTau2File(retailTau2Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range raw {
		if rt.ID != "64" {
			continue
		}
		c, err := FromTau2(rt, retailOpts)
		if err != nil {
			t.Fatal(err)
		}
		if fa, _ := FailedActions(c); len(c.Atomic) != 2 || fa != nil {
			t.Errorf("task 64 without replay: %d atomic tasks, failed %v", len(c.Atomic), fa)
		}
	}
}

// TestFromTau2ReplayErrors: a replay that fails, or that returns a wrong
// number of outcomes, is an error naming the task; the task is not
// converted (nothing is half-dropped).
func TestFromTau2ReplayErrors(t *testing.T) {
	raw, err := LoadTau2File(retailTau2Path)
	if err != nil {
		t.Fatal(err)
	}
	rt := raw[64]
	if rt.ID != "64" {
		t.Fatalf("task at 64 is %s", rt.ID)
	}
	before, _ := json.Marshal(rt)
	for _, tc := range []struct {
		name   string
		replay func(*Tau2Task, []Call) ([]ActionOutcome, error)
		want   string
	}{
		{"replay error", func(*Tau2Task, []Call) ([]ActionOutcome, error) { return nil, errors.New("session refused") },
			`task "64": evaluation_criteria.actions: replaying the gold actions: session refused`},
		{"short", func(*Tau2Task, []Call) ([]ActionOutcome, error) { return make([]ActionOutcome, 3), nil },
			`task "64": evaluation_criteria.actions: the replay returned 3 outcomes for 8 gold actions`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := retailOpts
			opts.Replay = tc.replay
			c, err := FromTau2(rt, opts)
			if c != nil || err == nil || err.Error() != tc.want {
				t.Errorf("FromTau2 = %v, %v; want error %q", c, err, tc.want)
			}
			if after, _ := json.Marshal(rt); !bytes.Equal(before, after) {
				t.Error("the tau2 task changed")
			}
		})
	}
}

// TestApplyTau2Basis: on the retail tasks tau2's basis is DB (+
// NL_ASSERTION): the overall checks become state_equal alone, dropping the
// 36 tasks' communicate checks weft's basis adds; the nl_assertions stay
// rubric items. COMMUNICATE and ACTION map to their checks; a basis weft
// cannot score is an error and leaves the task unchanged.
func TestApplyTau2Basis(t *testing.T) {
	_, conv := convertRetail(t)
	withComm, rubric := 0, 0
	for _, ct := range conv {
		if len(ct.Checks) > 1 {
			withComm++
		}
		nRubric := len(ct.Rubric)
		if err := ApplyTau2Basis(ct); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]Check{{Kind: CheckStateEqual, Note: "final state equals the reference replay's (tau2 DB)"}}, ct.Checks); d != "" {
			t.Fatalf("task %s: checks (-want +got):\n%s", ct.ID, d)
		}
		if len(ct.Rubric) != nRubric || ct.Meta["verifier_basis"] != BasisTau2 {
			t.Errorf("task %s: rubric %d -> %d, meta %v", ct.ID, nRubric, len(ct.Rubric), ct.Meta)
		}
		rubric += nRubric
		if err := ct.Validate(); err != nil {
			t.Errorf("task %s: %v", ct.ID, err)
		}
	}
	if withComm != 36 || rubric == 0 {
		t.Errorf("%d tasks had communicate checks (want 36), %d rubric items", withComm, rubric)
	}

	mk := func(basis ...any) *Task {
		return &Task{ID: "x", Brief: "b", Modules: []string{"m"},
			Atomic: []Atomic{{ID: "a1", Reference: []Call{{Tool: "get", Arguments: json.RawMessage(`{"id":"1"}`)},
				{Tool: "set", Arguments: json.RawMessage(`{"id":"1"}`), Compare: []string{"id"}}}, Checks: []Check{{Kind: CheckChangedRows}}}},
			Checks: []Check{{Kind: CheckStateEqual}, {Kind: CheckCommunicate, Text: "42"}},
			Meta:   map[string]any{MetaRewardBasis: basis, MetaFailedActions: []any{map[string]any{"action": 0.0, "tool": "get", "error": "no", "dropped_atomic": false}}}}
	}
	tk := mk("COMMUNICATE", "ACTION")
	if err := ApplyTau2Basis(tk); err != nil {
		t.Fatal(err)
	}
	want := []Check{{Kind: CheckCommunicate, Text: "42"},
		{Kind: CheckRequiredCall, Tool: "set", Arguments: json.RawMessage(`{"id":"1"}`), Compare: []string{"id"}, Note: "gold action (tau2 ACTION)"}}
	if d := cmp.Diff(want, tk.Checks); d != "" {
		t.Errorf("COMMUNICATE+ACTION checks (-want +got):\n%s", d)
	}
	bad := mk("DB", "ENV_ASSERTION")
	before, _ := json.Marshal(bad)
	err := ApplyTau2Basis(bad)
	if err == nil || err.Error() != `task "x": meta.tau2_reward_basis: reward basis "ENV_ASSERTION" cannot be scored by weft (use verifier basis "weft")` {
		t.Errorf("ENV_ASSERTION: %v", err)
	}
	if after, _ := json.Marshal(bad); !bytes.Equal(before, after) {
		t.Error("a refused basis changed the task")
	}
	plain := &Task{ID: "w", Checks: []Check{{Kind: CheckUnchanged}}}
	if err := ApplyTau2Basis(plain); err != nil || len(plain.Checks) != 1 || plain.Meta != nil {
		t.Errorf("weft task: %v %+v", err, plain)
	}
}
