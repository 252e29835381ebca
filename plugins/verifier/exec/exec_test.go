package exec_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/weft-dev/weft/plugins/internal/wire"
	"github.com/weft-dev/weft/sdk/failure"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/verifier"
	"github.com/weft-dev/weft/plugins/verifier/exec"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

const ddl = `CREATE TABLE users (id VARCHAR(16) PRIMARY KEY, name VARCHAR(64), balance INT);
CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id VARCHAR(16), status VARCHAR(16), total DECIMAL(10,2))`

var steps = [][]string{
	{`UPDATE orders SET status = 'cancelled' WHERE id = 9007199254740993`},
	{`UPDATE users SET balance = 90 WHERE id = 'u1'`, `INSERT INTO orders VALUES (3, 'u1', 'placed', 10.50)`},
	{`UPDATE orders SET status = 'refunded' WHERE id = 9007199254740993`, `DELETE FROM orders WHERE id = 2`},
}

type fixture struct {
	store    *state.Store
	initial  *state.Version
	versions map[string]*state.Version
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := state.NewStore()
	t.Cleanup(func() { _ = s.Close() })
	init, err := s.Load(context.Background(), ddl,
		state.TableRows{Table: "users", Columns: []string{"id", "name", "balance"}, Rows: [][]any{{"u1", "Ann", 100}, {"u2", "Bob", 5}}},
		// Key 2^53+1 is not exact in a float64: the remote path must keep
		// it exact.
		state.TableRows{Table: "orders", Columns: []string{"id", "user_id", "status", "total"}, Rows: [][]any{{int64(9007199254740993), "u1", "pending", "12.50"}, {2, "u2", "pending", "7.00"}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{store: s, initial: init, versions: map[string]*state.Version{verify.Initial: init, verify.ReferenceAfter(0): init}}
	v := init
	for k := range steps {
		v = f.apply(t, v, steps[k]...)
		f.versions[verify.ReferenceAfter(k+1)] = v
	}
	f.versions[verify.Reference] = v
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

func (f *fixture) evidence(t *testing.T, final ...string) verify.Evidence {
	vs := map[string]*state.Version{}
	for k, v := range f.versions {
		vs[k] = v
	}
	vs[verify.Final] = f.apply(t, f.initial, final...)
	return verify.NewStateEvidence(vs)
}

func testTask() *task.Task {
	return &task.Task{
		ID: "t1",
		Atomic: []task.Atomic{
			{ID: "cancel", Checks: []task.Check{{Kind: task.CheckChangedRows}, {Kind: task.CheckRequiredCall, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":9007199254740993}`)}}},
			{ID: "charge", Checks: []task.Check{{Kind: task.CheckChangedRows}, {Kind: task.CheckSQL, SQL: `SELECT balance, total FROM users JOIN orders ON orders.user_id = users.id WHERE orders.id = 3`, Expect: json.RawMessage(`[[90,10.5]]`)}}},
			{ID: "refund", Checks: []task.Check{{Kind: task.CheckChangedRows}, {Kind: task.CheckForbiddenCall, Tool: "delete_user"}}},
		},
		Checks: []task.Check{{Kind: task.CheckStateEqual}, {Kind: task.CheckCommunicate, Text: "refund of 12.50"}},
	}
}

func trajectory() *plugin.Trajectory {
	return &plugin.Trajectory{Messages: []*plugin.Message{
		{Role: plugin.RoleUser, Content: "cancel and refund please"},
		{Role: plugin.RoleAssistant, ToolCalls: []*plugin.ToolCall{{Id: "c1", Name: "cancel_order", Arguments: `{"order_id":9007199254740993}`}}},
		{Role: plugin.RoleTool, Content: "ok", ToolCallId: "c1", Name: "cancel_order"},
		{Role: plugin.RoleAssistant, Content: "Done: your Refund of 12.50 is on its way."},
	}, Termination: plugin.TerminationDone}
}

func ledger() []verify.LedgerCall {
	return []verify.LedgerCall{{Index: 0, Tool: "cancel_order", Arguments: json.RawMessage(`{"order_id":9007199254740993}`), RowsChanged: 1}}
}

// runPlugin verifies through the exec plugin served in process, with the
// host's State service over ev.
func runPlugin(t *testing.T, conn *plugintest.Conn, tk *task.Task, ev verify.Evidence) *plugin.VerifyResponse {
	t.Helper()
	req, err := exec.Request(tk, ledger(), trajectory(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var resp plugin.VerifyResponse
	if err := conn.Verifier(t).Verify(context.Background(), plugin.HostSet{StateService: verifier.EvidenceState(ev)}, req, &resp); err != nil {
		t.Fatal(err)
	}
	return &resp
}

func TestPluginMatchesInProcess(t *testing.T) {
	f := newFixture(t)
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	var all []string
	for _, s := range steps {
		all = append(all, s...)
	}
	for _, tc := range []struct {
		name   string
		final  []string
		scores []float64
	}{
		{"reference", all, []float64{1, 1, 1, 1}},
		{"nothing", nil, []float64{0, 0, 0, 0}},
		{"no refund", append(append([]string{}, steps[0]...), steps[1]...), []float64{0, 1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := f.evidence(t, tc.final...)
			want, err := verify.Verify(context.Background(), verify.Input{Task: testTask(), Ledger: ledger(), Messages: exec.Messages(trajectory())}, ev)
			if err != nil {
				t.Fatal(err)
			}
			resp := runPlugin(t, conn, testTask(), ev)
			got, err := exec.Decode(resp)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("plugin result differs from in-process (-want +got):\n%s", d)
			}
			var scores []float64
			for _, c := range got.Checkpoints {
				scores = append(scores, c.Score)
			}
			if d := cmp.Diff(tc.scores, scores); d != "" {
				t.Errorf("r_k (-want +got):\n%s", d)
			}
			sum := 0.0
			for _, s := range tc.scores {
				sum += s
			}
			if resp.GetScore() != sum/4 {
				t.Errorf("R = %v, want %v", resp.GetScore(), sum/4)
			}
		})
	}
}

func TestPluginMissingEntries(t *testing.T) {
	f := newFixture(t)
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	got, err := exec.Decode(runPlugin(t, conn, testTask(), f.evidence(t)))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{`orders[9007199254740993].status="refunded"`},
		{`orders[3].id=3`, `orders[3].user_id="u1"`, `orders[3].status="placed"`, `orders[3].total="10.50"`, `users[u1].balance=90`},
		{`orders[2] deleted`, `orders[9007199254740993].status="refunded"`},
	}
	for k := range want {
		if d := cmp.Diff(want[k], got.Checkpoints[k].Checks[0].Missing); d != "" {
			t.Errorf("atomic %d Missing (-want +got):\n%s", k+1, d)
		}
	}
}

func TestPluginFailures(t *testing.T) {
	f := newFixture(t)
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	noRef := map[string]*state.Version{verify.Initial: f.initial, verify.Final: f.initial}
	unknown := testTask()
	unknown.Checks = append(unknown.Checks, task.Check{Kind: "vibes"})
	for _, tc := range []struct {
		name  string
		state plugin.State
		req   func() *plugin.VerifyRequest
		comp  failure.Component
		kind  failure.Kind
	}{
		{"missing version", verifier.EvidenceState(verify.NewStateEvidence(noRef)), nil, exec.FailureEvidence, failure.NoSuchVersion},
		{"state unavailable", plugin.StateFuncs{}, nil, exec.FailureEvidence, failure.Unavailable},
		{"query only state", plugin.StateFunc(func(context.Context, *plugin.QueryRequest, *plugin.QueryResponse) error { return nil }), nil, exec.FailureEvidence, failure.Unavailable},
		{"no task", verifier.EvidenceState(f.evidence(t)), func() *plugin.VerifyRequest { return &plugin.VerifyRequest{} }, failure.Verifier, exec.FailureBadRequest},
		{"unspecified check", verifier.EvidenceState(f.evidence(t)), func() *plugin.VerifyRequest {
			r, _ := exec.Request(testTask(), nil, nil, nil)
			r.Task.Checks = append(r.Task.Checks, &plugin.Check{})
			return r
		}, failure.Verifier, exec.FailureBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := exec.Request(testTask(), ledger(), trajectory(), nil)
			if tc.req != nil {
				req = tc.req()
			}
			var resp plugin.VerifyResponse
			if err := conn.Verifier(t).Verify(context.Background(), plugin.HostSet{StateService: tc.state}, req, &resp); err != nil {
				t.Fatal(err)
			}
			if c, k := plugin.FailureParts(resp.GetFailure()); c != tc.comp || k != tc.kind || resp.GetFailure().GetMessage() == "" {
				t.Errorf("failure = %v, want %s/%s", resp.GetFailure(), tc.comp, tc.kind)
			}
			if resp.GetScore() != 0 || len(resp.GetCheckpoints()) != 0 {
				t.Errorf("a failure carries a score: %v", &resp)
			}
			res, err := exec.Decode(&resp)
			var fe *exec.FailureError
			if !errors.As(err, &fe) || fe.Component != tc.comp || fe.Kind != tc.kind || res != nil {
				t.Errorf("Decode = %v, %v; want FailureError %s", res, err, tc.kind)
			}
		})
	}
}

func TestRequestAndDescribe(t *testing.T) {
	req, err := exec.Request(testTask(), ledger(), trajectory(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tk, err := wire.FromTask(req.GetTask())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(testTask(), tk); d != "" {
		t.Errorf("task round trip (-want +got):\n%s", d)
	}
	if n := len(req.GetLedger()); n != 1 || req.GetLedger()[0].GetArguments() != `{"order_id":9007199254740993}` {
		t.Errorf("ledger = %v, want one call with the arguments verbatim", req.GetLedger())
	}
	var lc []verify.LedgerCall
	for _, c := range req.GetLedger() {
		lc = append(lc, wire.FromVerifyLedgerCall(c))
	}
	if d := cmp.Diff(ledger(), lc); d != "" {
		t.Errorf("ledger round trip (-want +got):\n%s", d)
	}
	if d := cmp.Diff(trajectory(), req.GetTrajectory(), protocmp.Transform()); d != "" {
		t.Errorf("trajectory (-want +got):\n%s", d)
	}
	if _, err := exec.Request(nil, nil, nil, nil); err == nil {
		t.Error("Request(nil task) succeeded")
	}

	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	var d plugin.DescribeResponse
	if err := conn.Verifier(t).Describe(context.Background(), &plugin.DescribeRequest{}, &d); err != nil {
		t.Fatal(err)
	}
	if d.GetName() != "exec" || d.GetVersion() != exec.Version {
		t.Errorf("Describe = %v", &d)
	}
}

func TestDecodeTypedCheckpoints(t *testing.T) {
	res, err := exec.Decode(&plugin.VerifyResponse{Score: 0.5, Checkpoints: []*plugin.Checkpoint{
		{Name: "a", Score: 0, Checks: []*plugin.CheckResult{{Kind: pluginpb.CheckKind_CHECK_KIND_CHANGED_ROWS, Evidence: "missing", Missing: []string{"t[1].c=2"}}}},
		{Name: "overall", Score: 1},
	}})
	want := &verify.Result{Score: 0.5, Checkpoints: []verify.Checkpoint{
		{Name: "a", Checks: []verify.CheckResult{{Kind: task.CheckChangedRows, Evidence: "missing", Missing: []string{"t[1].c=2"}}}},
		{Name: "overall", Score: 1, Checks: []verify.CheckResult{}},
	}}
	if d := cmp.Diff(want, res); err != nil || d != "" {
		t.Errorf("Decode: %v (-want +got):\n%s", err, d)
	}
}

// sameBothWays verifies tk over ev in process and through the plugin,
// fails the test when the results differ, and returns the plugin's.
func sameBothWays(t *testing.T, conn *plugintest.Conn, tk *task.Task, ev verify.Evidence) *verify.Result {
	t.Helper()
	want, err := verify.Verify(context.Background(), verify.Input{Task: tk, Ledger: ledger(), Messages: exec.Messages(trajectory())}, ev)
	if err != nil {
		t.Fatal(err)
	}
	got, err := exec.Decode(runPlugin(t, conn, tk, ev))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("task %s: plugin result differs from in-process (-want +got):\n%s", tk.ID, d)
	}
	return got
}

// TestPluginOverwrittenLast: a changed_rows check with Overwritten "last"
// crosses the wire, so the plugin scores it as the in-process verifier
// does. Only the cancel is done: the order's status, which the refund
// overwrites, is left to the refund's checkpoint under "last" (cancel
// passes) and checked against the reference's final "refunded" otherwise
// (cancel fails).
func TestPluginOverwrittenLast(t *testing.T) {
	f := newFixture(t)
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	ev := f.evidence(t, steps[0]...)
	for _, tc := range []struct {
		overwritten string
		cancel      float64
	}{{task.OverwrittenLast, 1}, {"", 0}, {task.OverwrittenReference, 0}} {
		tk := testTask()
		tk.Atomic[0].Checks[0].Overwritten = tc.overwritten
		got := sameBothWays(t, conn, tk, ev)
		if s := got.Checkpoints[0].Score; s != tc.cancel {
			t.Errorf("overwritten %q: cancel r_k = %v, want %v", tc.overwritten, s, tc.cancel)
		}
	}
}

// TestPluginFileChecks: file_equal, file_contains and file_absent read the
// episode's workspace files through the State service's ReadFile, so the
// plugin scores them as the in-process verifier does (before, the remote
// evidence had no files and every file check was an evidence error).
func TestPluginFileChecks(t *testing.T) {
	f := newFixture(t)
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: exec.Verifier{}})
	final, err := f.initial.WithFiles([]state.File{{Path: "docs/report.txt", Data: []byte("total: 42\n")}, {Path: "tmp", Dir: true}})
	if err != nil {
		t.Fatal(err)
	}
	ev := verify.NewStateEvidence(map[string]*state.Version{verify.Initial: f.initial, verify.Final: final})
	checks := []task.Check{
		{Kind: task.CheckFileEqual, Path: "docs/report.txt", Text: "total: 42\n"},
		{Kind: task.CheckFileEqual, Path: "tmp", Text: ""},
		{Kind: task.CheckFileContains, Path: "docs/report.txt", Text: "43"},
		{Kind: task.CheckFileAbsent, Path: "old.txt"},
		{Kind: task.CheckFileAbsent, Path: "tmp"},
	}
	tk := &task.Task{ID: "files", Checks: checks}
	got := sameBothWays(t, conn, tk, ev)
	var passed []bool
	for _, c := range got.Checkpoints[0].Checks {
		passed = append(passed, c.Passed)
	}
	if d := cmp.Diff([]bool{true, false, false, true, false}, passed); d != "" {
		t.Errorf("file checks passed (-want +got):\n%s", d)
	}
	// A version the host does not have is the verifier's evidence failure.
	tk.Checks = []task.Check{{Kind: task.CheckFileAbsent, Path: "a"}}
	noFinal := verify.NewStateEvidence(map[string]*state.Version{verify.Initial: f.initial})
	if resp := runPlugin(t, conn, tk, noFinal); resp.GetFailure() == nil || !strings.Contains(resp.GetFailure().GetMessage(), "final") {
		t.Errorf("missing final version: failure %v, want one naming final", resp.GetFailure())
	}
}
