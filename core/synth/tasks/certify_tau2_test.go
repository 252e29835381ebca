package tasks

import (
	"context"
	"encoding/json"

	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

func specEnv(t testing.TB, dir string) *Env {
	t.Helper()
	s, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := SpecEnv(context.Background(), module.Config{}, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Store.Close() })
	return e
}

const (
	retailSpec  = "../../../examples/servers/tau2-retail"
	airlineSpec = "../../../examples/servers/tau2-airline"
	retailTasks = "../../../examples/data/tau2-retail/tasks.json"
	airTasks    = "../../../examples/data/tau2-airline/tasks.json"
)

func pickTasks(t *testing.T, ts []*task.Task, ids ...string) []*task.Task {
	t.Helper()
	by := map[string]*task.Task{}
	for _, x := range ts {
		by[x.ID] = x
	}
	var out []*task.Task
	for _, id := range ids {
		if by[id] == nil {
			t.Fatalf("no task %s", id)
		}
		out = append(out, by[id])
	}
	return out
}

type rejKey struct {
	Task, Atomic string
	Reason       Reason
	Call         *FailedCall
}

func rejKeys(rep *Report) []rejKey {
	var out []rejKey
	for _, r := range rep.Rejections() {
		out = append(out, rejKey{r.Task, r.Atomic, r.Reason, r.Call})
	}
	return out
}

// A slice of the tau2 retail tasks on the synthesized retail server
// (converted with the gold replay, as weft run does): task 64's reference
// fails at call 6 (the exchange of a pending order), task 110's second
// atomic task sets the address the user already has (its check passes on
// the initial state), 24, 57 and 105 have no atomic task; the rest certify,
// task 2 with a warning for its failed lookup.
func TestCertifyTau2RetailSlice(t *testing.T) {
	ctx := context.Background()
	env := specEnv(t, retailSpec)
	all, err := env.ConvertTau2(ctx, retailTasks, []string{"retail"}, "tau2-retail")
	if err != nil {
		t.Fatal(err)
	}
	ts := pickTasks(t, all, "0", "1", "2", "19", "24", "57", "64", "100", "105", "110")
	rep, certified, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, rep); diff != "" {
		t.Errorf("reuse vs fresh certification (-fresh +reuse):\n%s", diff)
	}
	want := []rejKey{
		{"24", "", ReasonNoAtomic, nil},
		{"57", "", ReasonNoAtomic, nil},
		{"64", "a1", ReasonReferenceFailed, &FailedCall{Index: 6, TaskIndex: 6, Tool: "exchange_delivered_order_items",
			Arguments: json.RawMessage(`{"order_id":"#W7464385","item_ids":["1810466394"],"new_item_ids":["6700049080"],"payment_method_id":"paypal_1261484"}`),
			Error:     "Non-delivered order cannot be exchanged"}},
		{"105", "", ReasonNoAtomic, nil},
		{"110", "a2", ReasonPassesOnInitial, nil},
		{"110", "a2", ReasonReadOnlyUnverifiable, nil},
	}
	if d := cmp.Diff(want, rejKeys(rep), cmp.Transformer("raw", func(r json.RawMessage) string { return compact(r) })); d != "" {
		t.Errorf("rejections (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"0", "1", "2", "19", "100"}, taskIDs(certified)); d != "" {
		t.Errorf("certified (-want +got):\n%s", d)
	}
	if rep.Tasks != 10 || rep.TasksCertified != 5 || rep.Atomic != rep.AtomicCertified+2 {
		t.Errorf("counts %d/%d tasks, %d/%d atomic", rep.TasksCertified, rep.Tasks, rep.AtomicCertified, rep.Atomic)
	}
	var warned []string
	for _, r := range rep.Results {
		for _, w := range r.Warnings {
			if w.Call != nil {
				warned = append(warned, r.ID+":"+w.Call.Tool)
			}
		}
	}
	if d := cmp.Diff([]string{"2:get_product_details"}, warned); d != "" {
		t.Errorf("failed-read warnings (-want +got):\n%s", d)
	}
}

func compact(r json.RawMessage) string {
	var v any
	if json.Unmarshal(r, &v) != nil {
		return string(r)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Five airline tasks on the synthesized airline server: task 0 has no
// atomic task; 1 to 4 certify.
func TestCertifyTau2AirlineSlice(t *testing.T) {
	ctx := context.Background()
	env := specEnv(t, airlineSpec)
	all, err := env.ConvertTau2(ctx, airTasks, []string{"airline"}, "tau2-airline")
	if err != nil {
		t.Fatal(err)
	}
	ts := pickTasks(t, all, "0", "1", "2", "3", "4")
	rep, certified, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]rejKey{{"0", "", ReasonNoAtomic, nil}}, rejKeys(rep)); d != "" {
		t.Errorf("rejections (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"1", "2", "3", "4"}, taskIDs(certified)); d != "" {
		t.Errorf("certified (-want +got):\n%s", d)
	}
}
