package verify_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

const ddl = `CREATE TABLE users (id VARCHAR(16) PRIMARY KEY, name VARCHAR(64), balance INT);
CREATE TABLE orders (id VARCHAR(16) PRIMARY KEY, user_id VARCHAR(16), status VARCHAR(16), total DECIMAL(10,2))`

// Reference steps of the fixture's three atomic tasks:
//  1. cancel o1 (status pending -> cancelled)
//  2. charge u1 10 and place order o3
//  3. refund o1 (status cancelled -> refunded, overwriting step 1) and
//     delete o2
var steps = [][]string{
	{`UPDATE orders SET status = 'cancelled' WHERE id = 'o1'`},
	{`UPDATE users SET balance = 90 WHERE id = 'u1'`, `INSERT INTO orders VALUES ('o3', 'u1', 'placed', 10.00)`},
	{`UPDATE orders SET status = 'refunded' WHERE id = 'o1'`, `DELETE FROM orders WHERE id = 'o2'`},
}

type fixture struct {
	store    *state.Store
	initial  *state.Version
	after    []*state.Version // after[k] = ReferenceAfter(k)
	versions map[string]*state.Version
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	s := state.NewStore()
	t.Cleanup(func() { _ = s.Close() })
	init, err := s.Load(ctx, ddl,
		state.TableRows{Table: "users", Columns: []string{"id", "name", "balance"}, Rows: [][]any{{"u1", "Ann", 100}, {"u2", "Bob", 5}}},
		state.TableRows{Table: "orders", Columns: []string{"id", "user_id", "status", "total"}, Rows: [][]any{{"o1", "u1", "pending", "12.50"}, {"o2", "u2", "pending", "7.00"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: s, initial: init, after: []*state.Version{init}}
	for k := range steps {
		f.after = append(f.after, f.apply(t, f.after[k], steps[k]...))
	}
	f.versions = map[string]*state.Version{verify.Initial: init, verify.Reference: f.after[len(steps)]}
	for k, v := range f.after {
		f.versions[verify.ReferenceAfter(k)] = v
	}
	return f
}

func (f *fixture) apply(t *testing.T, v *state.Version, stmts ...string) *state.Version {
	t.Helper()
	ws := f.store.Fork(v)
	for _, q := range stmts {
		if _, err := ws.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	out, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// evidence returns the fixture's evidence with Final = the initial state
// after stmts.
func (f *fixture) evidence(t *testing.T, stmts ...string) verify.Evidence {
	vs := map[string]*state.Version{}
	for k, v := range f.versions {
		vs[k] = v
	}
	vs[verify.Final] = f.apply(t, f.initial, stmts...)
	return verify.NewStateEvidence(vs)
}

func all(steps [][]string) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s...)
	}
	return out
}

func threeTask(checks ...[]task.Check) *task.Task {
	t := &task.Task{ID: "t"}
	for i := 0; i < 3; i++ {
		t.Atomic = append(t.Atomic, task.Atomic{ID: []string{"cancel", "charge", "refund"}[i], Checks: checks[i]})
	}
	t.Checks = checks[3]
	return t
}

func changedRows() []task.Check { return []task.Check{{Kind: task.CheckChangedRows}} }

// changedRowsResults runs the changed_rows checks of all three atomic tasks
// on a final state.
func changedRowsResults(t *testing.T, f *fixture, final ...string) []verify.CheckResult {
	t.Helper()
	tk := threeTask(changedRows(), changedRows(), changedRows(), nil)
	res, err := verify.Verify(context.Background(), verify.Input{Task: tk}, f.evidence(t, final...))
	if err != nil {
		t.Fatal(err)
	}
	var out []verify.CheckResult
	for _, cp := range res.Checkpoints[:3] {
		out = append(out, cp.Checks[0])
	}
	return out
}

func TestChangedRows(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name    string
		final   []string
		passed  []bool
		missing [][]string
	}{
		{"reference", all(steps), []bool{true, true, true}, [][]string{nil, nil, nil}},
		{"nothing done", nil, []bool{false, false, false}, [][]string{
			// Step 1's status is overwritten by step 3: checked against the
			// reference's final value.
			{`orders[o1].status="refunded"`},
			{`orders[o3].id="o3"`, `orders[o3].user_id="u1"`, `orders[o3].status="placed"`, `orders[o3].total="10.00"`, `users[u1].balance=90`},
			{`orders[o2] deleted`, `orders[o1].status="refunded"`},
		}},
		{
			// Task 1 done, task 3 not: the cancelled status is not the
			// reference's final value.
			"stopped after cancel", steps[0], []bool{false, false, false}, [][]string{
				{`orders[o1].status="refunded"`},
				{`orders[o3].id="o3"`, `orders[o3].user_id="u1"`, `orders[o3].status="placed"`, `orders[o3].total="10.00"`, `users[u1].balance=90`},
				{`orders[o2] deleted`, `orders[o1].status="refunded"`},
			},
		},
		{
			// Refunded directly (never cancelled), charge wrong amount,
			// o3 placed with a different total, o2 deleted.
			"partly", []string{
				`UPDATE orders SET status = 'refunded' WHERE id = 'o1'`,
				`UPDATE users SET balance = 80 WHERE id = 'u1'`,
				`INSERT INTO orders VALUES ('o3', 'u1', 'placed', 11.00)`,
				`DELETE FROM orders WHERE id = 'o2'`,
			}, []bool{true, false, true}, [][]string{nil, {`orders[o3].total="10.00"`, `users[u1].balance=90`}, nil},
		},
		{
			// Extra changes elsewhere do not fail changed_rows.
			"reference plus extra", append(all(steps), `UPDATE users SET name = 'Bobby' WHERE id = 'u2'`), []bool{true, true, true}, [][]string{nil, nil, nil},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := changedRowsResults(t, f, tc.final...)
			for k, r := range got {
				if r.Kind != task.CheckChangedRows || r.Passed != tc.passed[k] {
					t.Errorf("atomic %d: kind %s passed %v, want passed %v (%s)", k+1, r.Kind, r.Passed, tc.passed[k], r.Evidence)
				}
				if d := cmp.Diff(tc.missing[k], r.Missing); d != "" {
					t.Errorf("atomic %d Missing (-want +got):\n%s", k+1, d)
				}
			}
		})
	}
}

func TestChangedRowsEvidenceCounts(t *testing.T) {
	f := newFixture(t)
	got := changedRowsResults(t, f, all(steps)...)
	want := "1 of 1 values the reference step of atomic task 1 sets hold in the final state (1 checked against the reference's final state because a later task changes them)"
	if got[0].Evidence != want {
		t.Errorf("evidence = %q, want %q", got[0].Evidence, want)
	}
}

func TestStateEqualAndUnchanged(t *testing.T) {
	f := newFixture(t)
	ref := f.after[3].Hash().String()
	init := f.initial.Hash().String()
	for _, tc := range []struct {
		name    string
		kind    string
		final   []string
		passed  bool
		missing []string
	}{
		{"state_equal pass", task.CheckStateEqual, all(steps), true, nil},
		{"state_equal fail", task.CheckStateEqual, steps[0], false, []string{"reference=" + ref}},
		// Same rows reached by a different path hash equal.
		{"state_equal other path", task.CheckStateEqual, append([]string{`UPDATE users SET name = 'X' WHERE id = 'u2'`, `UPDATE users SET name = 'Bob' WHERE id = 'u2'`}, all(steps)...), true, nil},
		{"unchanged pass", task.CheckUnchanged, nil, true, nil},
		{"unchanged fail", task.CheckUnchanged, steps[0], false, []string{"initial=" + init}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := overall(t, f.evidence(t, tc.final...), verify.Input{}, task.Check{Kind: tc.kind})
			if r.Passed != tc.passed {
				t.Errorf("passed = %v, want %v (%s)", r.Passed, tc.passed, r.Evidence)
			}
			if d := cmp.Diff(tc.missing, r.Missing); d != "" {
				t.Errorf("Missing (-want +got):\n%s", d)
			}
		})
	}
}

// overall runs one overall check on a task without atomic tasks.
func overall(t *testing.T, ev verify.Evidence, in verify.Input, c task.Check) verify.CheckResult {
	t.Helper()
	in.Task = &task.Task{ID: "t", Checks: []task.Check{c}}
	res, err := verify.Verify(context.Background(), in, ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checkpoints) != 1 || res.Checkpoints[0].Name != verify.Overall {
		t.Fatalf("checkpoints = %+v", res.Checkpoints)
	}
	want := 0.0
	if res.Checkpoints[0].Checks[0].Passed {
		want = 1
	}
	if res.Score != want || res.Checkpoints[0].Score != want {
		t.Errorf("score %v / r %v, want %v", res.Score, res.Checkpoints[0].Score, want)
	}
	return res.Checkpoints[0].Checks[0]
}

func TestSQL(t *testing.T) {
	f := newFixture(t)
	ev := f.evidence(t, all(steps)...)
	for _, tc := range []struct {
		name, sql, expect string
		passed            bool
		missing           []string
	}{
		{"ints", `SELECT id, balance FROM users ORDER BY id`, `[["u1", 90], ["u2", 5]]`, true, nil},
		{"12 equals 12.0", `SELECT balance FROM users WHERE id = 'u2'`, `[[5.0]]`, true, nil},
		{"decimal string equals number", `SELECT total FROM orders WHERE id = 'o3'`, `[[10]]`, true, nil},
		// Query values are state.PlainValue's: a DECIMAL comes back as its
		// shortest decimal string.
		{"decimal string exact", `SELECT total FROM orders WHERE id = 'o3'`, `[["10"]]`, true, nil},
		{"no rows", `SELECT id FROM orders WHERE id = 'o2'`, `[]`, true, nil},
		{"wrong value", `SELECT status FROM orders WHERE id = 'o1'`, `[["cancelled"]]`, false, []string{`[["cancelled"]]`}},
		{"wrong count", `SELECT COUNT(*) FROM orders`, `[[3]]`, false, []string{`[[3]]`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := overall(t, ev, verify.Input{}, task.Check{Kind: task.CheckSQL, SQL: tc.sql, Expect: json.RawMessage(tc.expect)})
			if r.Passed != tc.passed {
				t.Errorf("passed = %v, want %v (%s)", r.Passed, tc.passed, r.Evidence)
			}
			if d := cmp.Diff(tc.missing, r.Missing); d != "" {
				t.Errorf("Missing (-want +got):\n%s", d)
			}
		})
	}
}

func ledger() []verify.LedgerCall {
	return []verify.LedgerCall{
		{Index: 0, Tool: "get_order", Arguments: json.RawMessage(`{"order_id":"o1"}`), Output: "{}"},
		{Index: 1, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":"o1","reason":"no longer needed"}`), IsError: true},
		{Index: 2, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":"o1","reason":"ordered by mistake"}`), RowsChanged: 1},
		{Index: 3, Tool: "refund", Arguments: json.RawMessage(`{"order_id":"o1","amount":12.0}`), RowsChanged: 1},
		{Index: 4, Tool: "delete_user", Arguments: json.RawMessage(`{"user_id":"u9"}`), ErrorKind: "trap"},
	}
}

func TestCalls(t *testing.T) {
	f := newFixture(t)
	ev := f.evidence(t)
	for _, tc := range []struct {
		name    string
		check   task.Check
		passed  bool
		missing []string
	}{
		{"required all args", task.Check{Kind: task.CheckRequiredCall, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":"o1","reason":"ordered by mistake"}`)}, true, nil},
		{"required number 12 = 12.0", task.Check{Kind: task.CheckRequiredCall, Tool: "refund", Arguments: json.RawMessage(`{"amount":12,"order_id":"o1"}`)}, true, nil},
		{"required compare subset", task.Check{Kind: task.CheckRequiredCall, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":"o1","reason":"other"}`), Compare: []string{"order_id"}}, true, nil},
		{"required only failed call matches", task.Check{Kind: task.CheckRequiredCall, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":"o1","reason":"no longer needed"}`)}, false,
			[]string{`cancel_order({"order_id":"o1","reason":"no longer needed"})`}},
		{"required trapped call", task.Check{Kind: task.CheckRequiredCall, Tool: "delete_user", Arguments: json.RawMessage(`{"user_id":"u9"}`)}, false, []string{`delete_user({"user_id":"u9"})`}},
		{"required wrong arg", task.Check{Kind: task.CheckRequiredCall, Tool: "refund", Arguments: json.RawMessage(`{"order_id":"o1","amount":13}`)}, false, []string{`refund({"amount":13,"order_id":"o1"})`}},
		{"required absent tool", task.Check{Kind: task.CheckRequiredCall, Tool: "exchange"}, false, []string{"exchange()"}},
		{"forbidden absent", task.Check{Kind: task.CheckForbiddenCall, Tool: "exchange"}, true, nil},
		{"forbidden any args", task.Check{Kind: task.CheckForbiddenCall, Tool: "refund"}, false, []string{`not refund({"amount":12.0,"order_id":"o1"})`}},
		{"forbidden other args", task.Check{Kind: task.CheckForbiddenCall, Tool: "refund", Arguments: json.RawMessage(`{"order_id":"o2"}`)}, true, nil},
		{"forbidden failed call counts", task.Check{Kind: task.CheckForbiddenCall, Tool: "delete_user", Arguments: json.RawMessage(`{"user_id":"u9"}`)}, false, []string{`not delete_user({"user_id":"u9"})`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := overall(t, ev, verify.Input{Ledger: ledger()}, tc.check)
			if r.Passed != tc.passed {
				t.Errorf("passed = %v, want %v (%s)", r.Passed, tc.passed, r.Evidence)
			}
			if d := cmp.Diff(tc.missing, r.Missing); d != "" {
				t.Errorf("Missing (-want +got):\n%s", d)
			}
		})
	}
}

func conversation() []verify.Message {
	return []verify.Message{
		{Role: model.RoleSystem, Content: "Your refund is 999."},
		{Role: model.RoleUser, Content: "Refund 5,000 please"},
		{Role: model.RoleAssistant, Content: "Refunding 77 now", ToolCalls: []model.ToolCall{{ID: "c1", Type: "function", Function: model.FunctionCall{Name: "refund", Arguments: "{}"}}}},
		{Role: model.RoleTool, Content: "refunded 31", Name: "refund", ToolCallID: "c1"},
		{Role: model.RoleAssistant, Content: "Your Refund of $1,000 is on its way to Visa 1234."},
	}
}

func TestCommunicate(t *testing.T) {
	f := newFixture(t)
	ev := f.evidence(t)
	for _, tc := range []struct {
		text     string
		passed   bool
		evidence string
	}{
		{"1000", true, `message 4 tells the user "1000"`},
		{"1,000", true, `message 4 tells the user "1,000"`},
		{"your refund", true, `message 4 tells the user "your refund"`},
		{"VISA 1234", true, `message 4 tells the user "VISA 1234"`},
		// The text of an assistant message that also carries tool calls
		// counts, as in tau2's communicate_info check.
		{"77", true, `message 2 tells the user "77"`},
		{"5000", false, `none of 2 assistant messages with text says "5000"`}, // said by the user
		{"31", false, `none of 2 assistant messages with text says "31"`},     // in a tool result
		{"999", false, `none of 2 assistant messages with text says "999"`},   // in the system prompt
	} {
		t.Run(tc.text, func(t *testing.T) {
			r := overall(t, ev, verify.Input{Messages: conversation()}, task.Check{Kind: task.CheckCommunicate, Text: tc.text})
			if r.Passed != tc.passed {
				t.Errorf("passed = %v, want %v (%s)", r.Passed, tc.passed, r.Evidence)
			}
			if r.Evidence != tc.evidence {
				t.Errorf("evidence = %q, want %q", r.Evidence, tc.evidence)
			}
			var want []string
			if !tc.passed {
				want = []string{tc.text}
			}
			if d := cmp.Diff(want, r.Missing); d != "" {
				t.Errorf("Missing (-want +got):\n%s", d)
			}
		})
	}
}

func TestScoreK3OneFailure(t *testing.T) {
	f := newFixture(t)
	tk := &task.Task{
		ID: "k3",
		Atomic: []task.Atomic{
			{ID: "a", Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: "refund", Arguments: json.RawMessage(`{"order_id":"o1"}`)}}},
			{ID: "b", Checks: []task.Check{{Kind: task.CheckSQL, SQL: `SELECT balance FROM users WHERE id='u1'`, Expect: json.RawMessage(`[[100]]`)}}},
		},
		Checks: []task.Check{{Kind: task.CheckCommunicate, Text: "never said"}, {Kind: task.CheckUnchanged}},
	}
	res, err := verify.Verify(context.Background(), verify.Input{Task: tk, Ledger: ledger(), Messages: conversation()}, f.evidence(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Score != 2.0/3.0 {
		t.Errorf("R = %v, want 2/3", res.Score)
	}
	var names []string
	var scores []float64
	for _, c := range res.Checkpoints {
		names = append(names, c.Name)
		scores = append(scores, c.Score)
	}
	if d := cmp.Diff([]string{"a", "b", verify.Overall}, names); d != "" {
		t.Errorf("names (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]float64{1, 1, 0}, scores); d != "" {
		t.Errorf("scores (-want +got):\n%s", d)
	}
	// The overall checkpoint fails on communicate alone.
	if c := res.Checkpoints[2].Checks; c[0].Passed || !c[1].Passed {
		t.Errorf("overall checks = %+v", c)
	}
	if res.Rubric != nil || res.RubricScore != nil {
		t.Errorf("rubric without judge: %+v %v", res.Rubric, res.RubricScore)
	}
}

func TestEmptyCheckpointScoresOne(t *testing.T) {
	f := newFixture(t)
	res, err := verify.Verify(context.Background(), verify.Input{Task: &task.Task{ID: "e", Atomic: []task.Atomic{{ID: "x"}}}}, f.evidence(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Score != 1 || len(res.Checkpoints) != 2 {
		t.Errorf("result = %+v", res)
	}
}

// failingEvidence fails every call.
type failingEvidence struct{}

var errDown = errors.New("state service down")

func (failingEvidence) Hash(context.Context, string) (string, error) { return "", errDown }
func (failingEvidence) Diff(context.Context, string, string) (*state.Changes, error) {
	return nil, errDown
}
func (failingEvidence) Query(context.Context, string, string) ([]string, [][]any, error) {
	return nil, nil, errDown
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	noRef := map[string]*state.Version{verify.Initial: f.initial, verify.Final: f.initial}
	for _, tc := range []struct {
		name   string
		ev     verify.Evidence
		task   *task.Task
		is     []error
		notErr error
	}{
		{"missing reference", verify.NewStateEvidence(noRef), &task.Task{Checks: []task.Check{{Kind: task.CheckStateEqual}}}, []error{verify.ErrEvidence, verify.ErrNoVersion}, verify.ErrBadTask},
		{"missing reference step", verify.NewStateEvidence(noRef), &task.Task{Atomic: []task.Atomic{{ID: "a", Checks: changedRows()}}}, []error{verify.ErrEvidence, verify.ErrNoVersion}, nil},
		{"service down", failingEvidence{}, &task.Task{Checks: []task.Check{{Kind: task.CheckUnchanged}}}, []error{verify.ErrEvidence, errDown}, nil},
		{"query down", failingEvidence{}, &task.Task{Checks: []task.Check{{Kind: task.CheckSQL, SQL: "SELECT 1", Expect: json.RawMessage(`[[1]]`)}}}, []error{verify.ErrEvidence, errDown}, nil},
		{"bad sql", f.evidence(t), &task.Task{Checks: []task.Check{{Kind: task.CheckSQL, SQL: "SELECT nope FROM nowhere", Expect: json.RawMessage(`[]`)}}}, []error{verify.ErrEvidence, state.ErrNoSuchTable}, nil},
		{"unknown kind", f.evidence(t), &task.Task{Checks: []task.Check{{Kind: "vibes"}}}, []error{verify.ErrBadTask}, verify.ErrEvidence},
		{"bad expect", f.evidence(t), &task.Task{Checks: []task.Check{{Kind: task.CheckSQL, SQL: "SELECT 1", Expect: json.RawMessage(`{`)}}}, []error{verify.ErrBadTask}, nil},
		{"changed_rows overall", f.evidence(t), &task.Task{Checks: changedRows()}, []error{verify.ErrBadTask}, nil},
		{"nil task", f.evidence(t), nil, []error{verify.ErrBadTask}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := verify.Verify(context.Background(), verify.Input{Task: tc.task}, tc.ev)
			if err == nil {
				t.Fatalf("no error, result %+v", res)
			}
			if res != nil {
				t.Errorf("result %+v beside the error", res)
			}
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v is not %v", err, target)
				}
			}
			if tc.notErr != nil && errors.Is(err, tc.notErr) {
				t.Errorf("error %v is %v", err, tc.notErr)
			}
		})
	}
}

func TestStateEvidence(t *testing.T) {
	f := newFixture(t)
	ev := verify.NewStateEvidence(f.versions)
	ctx := context.Background()
	h, err := ev.Hash(ctx, verify.Reference)
	if err != nil || h != f.after[3].Hash().String() || len(h) != 64 {
		t.Errorf("Hash = %q, %v", h, err)
	}
	d, err := ev.Diff(ctx, verify.ReferenceAfter(0), verify.ReferenceAfter(1))
	if err != nil {
		t.Fatal(err)
	}
	want := &state.Changes{Tables: []state.TableDiff{{
		Table: "orders", Columns: []string{"id", "user_id", "status", "total"}, PrimaryKey: []string{"id"},
		Changed: []state.RowChange{{Key: []any{"o1"}, Columns: []state.ColumnChange{{Column: "status", Old: "pending", New: "cancelled"}}}},
	}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("Diff (-want +got):\n%s", diff)
	}
	// A writing statement runs on a private fork: the version is unchanged.
	before := f.initial.Hash()
	if _, _, err := ev.Query(ctx, verify.Initial, `DELETE FROM users`); err != nil {
		t.Logf("DELETE via Query: %v", err)
	}
	cols, rows, err := ev.Query(ctx, verify.Initial, `SELECT COUNT(*) AS n FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"n"}, cols); d != "" {
		t.Errorf("columns (-want +got):\n%s", d)
	}
	if d := cmp.Diff([][]any{{int64(2)}}, rows); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
	if f.initial.Hash() != before {
		t.Error("Query changed the version")
	}
	if _, err := ev.Hash(ctx, "nope"); !errors.Is(err, verify.ErrNoVersion) {
		t.Errorf("Hash(nope) = %v, want ErrNoVersion", err)
	}
}
