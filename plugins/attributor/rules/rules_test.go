package rules_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/weft-dev/weft/plugins/internal/wire"
	"reflect"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/plugins/attributor/rules"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

func args(id string) json.RawMessage { return json.RawMessage(`{"order_id":"` + id + `"}`) }

// episode: task t1 cancels #W1 (a1); the agent did it, but the a1 check
// reports the row missing (a verifier bug); the overall check fails on a
// communicate string nobody said.
func episode(t *testing.T) (attribute.Input, map[string]*state.Version) {
	ctx := context.Background()
	v0, err := state.NewStore().Load(ctx, "CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, status VARCHAR(20))",
		state.TableRows{Table: "orders", Columns: []string{"id", "status"}, Rows: [][]any{{"#W1", "pending"}, {"#W2", "pending"}}})
	if err != nil {
		t.Fatal(err)
	}
	ws := v0.Store().Fork(v0)
	if _, err := ws.Exec(ctx, "UPDATE orders SET status = 'cancelled' WHERE id = '#W1'"); err != nil {
		t.Fatal(err)
	}
	v1, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tk := &task.Task{ID: "t1", Modules: []string{"retail"},
		Atomic: []task.Atomic{{ID: "a1", Request: "cancel #W1",
			Reference: []task.Call{{Tool: "get_order", Arguments: args("#W1")}, {Tool: "cancel_order", Arguments: args("#W1")}},
			Checks:    []task.Check{{Kind: task.CheckChangedRows}}}},
		Checks: []task.Check{{Kind: task.CheckCommunicate, Text: "refund"}},
	}
	in := attribute.Input{
		Task: tk,
		Result: &verify.Result{Checkpoints: []verify.Checkpoint{
			{Name: "a1", Checks: []verify.CheckResult{{Kind: task.CheckChangedRows, Evidence: "row not changed", Missing: []string{"orders[#W1].status=cancelled"}}}},
			{Name: verify.Overall, Checks: []verify.CheckResult{{Kind: task.CheckCommunicate, Missing: []string{"refund"}}}},
		}},
		Ledger: []verify.LedgerCall{
			{Index: 0, Tool: "get_order", Arguments: args("#W1"), Output: "pending"},
			{Index: 1, Tool: "cancel_order", Arguments: args("#W1"), Output: "cancelled", RowsChanged: 1},
		},
		Reference: attribute.ReferenceReport{Calls: []attribute.ReferenceCall{
			{Atomic: "a1", Index: 0, Tool: "get_order"}, {Atomic: "a1", Index: 1, Tool: "cancel_order", RowsChanged: 1},
		}},
		Messages: []string{"Order #W1 is cancelled."},
	}
	versions := map[string]*state.Version{verify.Initial: v0, verify.Final: v1, verify.Reference: v1,
		verify.ReferenceAfter(0): v0, verify.ReferenceAfter(1): v1}
	return in, versions
}

// stateService serves versions by name for episode "ep1".
func stateService(t *testing.T, versions map[string]*state.Version, calls *[]string) plugin.StateFuncs {
	get := func(ep, name string) (*state.Version, error) {
		if ep != "ep1" {
			return nil, fmt.Errorf("episode %q", ep)
		}
		v, ok := versions[name]
		if !ok {
			return nil, fmt.Errorf("%q: no such version", name)
		}
		return v, nil
	}
	return plugin.StateFuncs{
		OnQuery: func(ctx context.Context, req *plugin.QueryRequest, resp *plugin.QueryResponse) error {
			v, err := get(req.EpisodeId, req.Version)
			if err != nil {
				return err
			}
			rows, err := v.Store().Fork(v).Query(ctx, req.Sql)
			if err != nil {
				return err
			}
			resp.Columns = rows.Columns
			for _, r := range rows.Values {
				l, err := plugin.ListOf(r)
				if err != nil {
					return err
				}
				resp.Rows = append(resp.Rows, l)
			}
			return nil
		},
		OnHash: func(_ context.Context, req *plugin.HashRequest, resp *plugin.HashResponse) error {
			v, err := get(req.EpisodeId, req.Version)
			if err != nil {
				return err
			}
			resp.Hash = v.Hash().String()
			return nil
		},
		OnDiff: func(_ context.Context, req *plugin.DiffRequest, resp *plugin.DiffResponse) error {
			*calls = append(*calls, req.From+"->"+req.To)
			a, err := get(req.EpisodeId, req.From)
			if err != nil {
				return err
			}
			b, err := get(req.EpisodeId, req.To)
			if err != nil {
				return err
			}
			c, err := wire.Changes(state.Diff(a, b))
			resp.Changes = c
			return err
		},
	}
}

func TestRequestDecodeRoundTrip(t *testing.T) {
	in, _ := episode(t)
	in.Modules = map[string]string{"get_order": "retail"}
	req, err := rules.Request("ep1", in)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(req.Ledger); got != 2 {
		t.Errorf("ledger has %d calls, want 2", got)
	}
	if len(req.Reference) != len(in.Reference.Calls) || len(req.Reference) == 0 || req.Settings != nil {
		t.Errorf("reference %v, settings %v", req.Reference, req.Settings)
	}
	out, err := rules.Decode(req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Ledger, in.Ledger) || !reflect.DeepEqual(out.Reference, in.Reference) ||
		!reflect.DeepEqual(out.Result.Checkpoints, in.Result.Checkpoints) || !reflect.DeepEqual(out.Messages, in.Messages) ||
		!reflect.DeepEqual(out.Modules, in.Modules) || out.Task.ID != "t1" || len(out.Task.Atomic) != 1 {
		t.Errorf("round trip:\n got %+v\nwant %+v", out, in)
	}
	for name, mut := range map[string]func(*plugin.AttributeRequest){
		"task":     func(r *plugin.AttributeRequest) { r.Task = nil },
		"settings": func(r *plugin.AttributeRequest) { r.Settings = plugin.MustJSONValue(`{"referense":{}}`) },
	} {
		r, _ := rules.Request("ep1", in)
		mut(r)
		if _, err := rules.Decode(r); !errors.Is(err, rules.ErrRequest) || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := rules.Request("ep1", attribute.Input{}); !errors.Is(err, rules.ErrRequest) {
		t.Errorf("empty input: %v", err)
	}
}

func TestBlameMapping(t *testing.T) {
	for _, c := range []attribute.Class{attribute.ClassPolicy, attribute.ClassEnvironment, attribute.ClassTask, attribute.ClassVerifier} {
		if b := rules.Blame(c); b == 0 || rules.Class(b) != c {
			t.Errorf("%s -> %v -> %s", c, b, rules.Class(b))
		}
	}
	if rules.Blame("other") != 0 || rules.Class(0) != "" {
		t.Error("unknown class")
	}
}

func TestPluginOverGRPC(t *testing.T) {
	in, versions := episode(t)
	ac := plugintest.Connect(t, &plugin.ServeConfig{Attributor: rules.New()}).Attributor(t)
	ctx := context.Background()

	var d plugin.DescribeResponse
	if err := ac.Describe(ctx, &plugin.DescribeRequest{}, &d); err != nil || d.Name != "rules" || d.SettingsSchema == nil {
		t.Fatalf("describe: %v %+v", err, &d)
	}

	var diffs []string
	host := plugin.HostSet{StateService: stateService(t, versions, &diffs)}
	req, err := rules.Request("ep1", in)
	if err != nil {
		t.Fatal(err)
	}
	var resp plugin.AttributeResponse
	if err := ac.Attribute(ctx, host, req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Failure != nil {
		t.Fatalf("failure %v", resp.Failure)
	}
	got := rules.Attributions(&resp)
	if len(got) != 2 {
		t.Fatalf("got %+v", got)
	}
	if got[0].Checkpoint != "a1" || got[0].Class != attribute.ClassVerifier || got[0].Revise != "verifier:a1/changed_rows" ||
		!strings.Contains(got[0].Evidence, "orders[#W1].status=cancelled (changed from pending)") {
		t.Errorf("a1: %+v", got[0])
	}
	if resp.Attributions[0].Blame != plugin.BlameVerifier {
		t.Errorf("blame %v", resp.Attributions[0].Blame)
	}
	if got[1].Checkpoint != verify.Overall || got[1].Class != attribute.ClassPolicy || got[1].Revise != "policy" {
		t.Errorf("overall: %+v", got[1])
	}
	if len(diffs) != 1 || diffs[0] != "initial->final" {
		t.Errorf("diffs asked (cached once): %v", diffs)
	}

	// A module trap on the needed tool: environment, no state needed.
	in.Ledger[1].ErrorKind, in.Ledger[1].Output = "trap", "unreachable"
	req, _ = rules.Request("ep1", in)
	resp.Reset()
	if err := ac.Attribute(ctx, host, req, &resp); err != nil {
		t.Fatal(err)
	}
	if b := resp.Attributions[0]; b.Blame != plugin.BlameEnvironment || b.Revise != "module:retail/tool:cancel_order" || !strings.Contains(b.Evidence, "#1") {
		t.Errorf("trap: %+v", b)
	}

	// A host whose State offers Query only: Diff is unavailable, so the
	// verifier contradiction cannot be seen and a1 stays with the policy.
	in.Ledger[1].ErrorKind = ""
	req, _ = rules.Request("ep1", in)
	resp.Reset()
	qOnly := plugin.HostSet{StateService: plugin.StateFunc(stateService(t, versions, &diffs).OnQuery)}
	if err := ac.Attribute(ctx, qOnly, req, &resp); err != nil {
		t.Fatal(err)
	}
	if b := resp.Attributions[0]; b.Blame != plugin.BlamePolicy {
		t.Errorf("query-only host: %+v", b)
	}

	// A State service that fails otherwise: the response carries a failure.
	broken := stateService(t, versions, &diffs)
	broken.OnDiff = func(context.Context, *plugin.DiffRequest, *plugin.DiffResponse) error {
		return errors.New("disk on fire")
	}
	resp.Reset()
	if err := ac.Attribute(ctx, plugin.HostSet{StateService: broken}, req, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Failure == nil || !strings.Contains(resp.Failure.Message, "disk on fire") || len(resp.Attributions) != 0 {
		t.Errorf("broken state: %+v", &resp)
	}

	// A bad request is the plugin's error.
	req.Task = nil
	if err := ac.Attribute(ctx, host, req, new(plugin.AttributeResponse)); err == nil || !strings.Contains(err.Error(), "task") {
		t.Errorf("bad request: %v", err)
	}
}

func TestEvidenceAdapter(t *testing.T) {
	_, versions := episode(t)
	var diffs []string
	ev := rules.NewEvidence(stateService(t, versions, &diffs), "ep1")
	ctx := context.Background()
	h, err := ev.Hash(ctx, verify.Final)
	if err != nil || h != versions[verify.Final].Hash().String() || len(h) != 64 {
		t.Errorf("hash %q %v", h, err)
	}
	cols, rows, err := ev.Query(ctx, verify.Final, "SELECT status FROM orders ORDER BY id")
	if err != nil || !reflect.DeepEqual(cols, []string{"status"}) || !reflect.DeepEqual(rows, [][]any{{"cancelled"}, {"pending"}}) {
		t.Errorf("query %v %v %v", cols, rows, err)
	}
	c, err := ev.Diff(ctx, verify.Initial, verify.Final)
	if err != nil || c.Count() != 1 || c.Tables[0].Changed[0].Columns[0].New != "cancelled" {
		t.Errorf("diff %+v %v", c, err)
	}
	un := rules.NewEvidence(plugin.StateFunc(nil), "ep1")
	if _, err := un.Diff(ctx, verify.Initial, verify.Final); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("unavailable diff: %v", err)
	}
	if _, err := un.Hash(ctx, verify.Final); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("unavailable hash: %v", err)
	}
}
