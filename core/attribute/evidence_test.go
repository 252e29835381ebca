package attribute

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// memEvidence is verify.Evidence over named core/state versions.
type memEvidence map[string]*state.Version

func (m memEvidence) get(name string) (*state.Version, error) {
	v, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("%q: %w", name, verify.ErrNoVersion)
	}
	return v, nil
}

func (m memEvidence) Hash(_ context.Context, name string) (string, error) {
	v, err := m.get(name)
	if err != nil {
		return "", err
	}
	return v.Hash().String(), nil
}

func (m memEvidence) Diff(_ context.Context, from, to string) (*state.Changes, error) {
	a, err := m.get(from)
	if err != nil {
		return nil, err
	}
	b, err := m.get(to)
	if err != nil {
		return nil, err
	}
	return state.Diff(a, b), nil
}

func (m memEvidence) Query(ctx context.Context, name, sql string) ([]string, [][]any, error) {
	v, err := m.get(name)
	if err != nil {
		return nil, nil, err
	}
	rows, err := v.Store().Fork(v).Query(ctx, sql)
	if err != nil {
		return nil, nil, err
	}
	return rows.Columns, rows.Values, nil
}

const ordersDDL = "CREATE TABLE orders (id VARCHAR(20) PRIMARY KEY, status VARCHAR(20) NOT NULL, total INT NOT NULL)"

// loadOrders returns a state with orders #W0..#W<n-1>, all pending.
func loadOrders(t testing.TB, n int) *state.Version {
	t.Helper()
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("#W%d", i), "pending", int64(10 * (i + 1))}
	}
	v, err := state.NewStore().Load(context.Background(), ordersDDL, state.TableRows{Table: "orders", Columns: []string{"id", "status", "total"}, Rows: rows})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// cancel returns v with the orders ids cancelled.
func cancel(t testing.TB, v *state.Version, ids ...string) *state.Version {
	t.Helper()
	ws := v.Store().Fork(v)
	for _, id := range ids {
		if _, err := ws.Exec(context.Background(), "UPDATE orders SET status = 'cancelled' WHERE id = ?", id); err != nil {
			t.Fatal(err)
		}
	}
	out, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func args(id string) json.RawMessage { return json.RawMessage(`{"order_id":"` + id + `"}`) }

func call(i uint64, tool, id string) verify.LedgerCall {
	return verify.LedgerCall{Index: i, Tool: tool, Arguments: args(id), Output: "ok"}
}

// cancelAtomic is an atomic task that reads and cancels order id.
func cancelAtomic(aid, id string, checks ...task.Check) task.Atomic {
	if checks == nil {
		checks = []task.Check{{Kind: task.CheckChangedRows}}
	}
	return task.Atomic{
		ID: aid, Request: "cancel " + id,
		Reference: []task.Call{{Tool: "get_order", Arguments: args(id)}, {Tool: "cancel_order", Arguments: args(id)}},
		Checks:    checks,
	}
}

// cleanReference is a reference report of the atomic tasks without errors.
func cleanReference(tk *task.Task) ReferenceReport {
	var r ReferenceReport
	for _, a := range tk.Atomic {
		for i, c := range a.Reference {
			rc := ReferenceCall{Atomic: a.ID, Index: i, Tool: c.Tool, Output: "ok"}
			if c.Tool == "cancel_order" {
				rc.RowsChanged = 1
			}
			r.Calls = append(r.Calls, rc)
		}
	}
	return r
}

func TestMemEvidence(t *testing.T) {
	v0 := loadOrders(t, 2)
	ev := memEvidence{verify.Initial: v0, verify.Final: cancel(t, v0, "#W1")}
	d, err := ev.Diff(context.Background(), verify.Initial, verify.Final)
	if err != nil || d.Count() != 1 {
		t.Fatalf("diff: %v %+v", err, d)
	}
	_, rows, err := ev.Query(context.Background(), verify.Final, "SELECT status FROM orders WHERE id = '#W1'")
	if err != nil || len(rows) != 1 || rows[0][0] != "cancelled" {
		t.Fatalf("query: %v %v", err, rows)
	}
	if _, err := ev.Hash(context.Background(), "nope"); err == nil {
		t.Fatal("hash of an unknown version")
	}
}
