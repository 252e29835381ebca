package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/host"
)

// failedActionsFixture is the list of tau2-retail gold actions that fail in
// the retail module, by task id; core/task's conversion tests replay from
// it, so this test keeps it equal to what the module does.
const failedActionsFixture = "core/task/testdata/tau2-retail-failed-actions.json"

// TestGoldReplayRetail: replaying every tau2-retail task's gold actions on
// the retail module fails exactly the 18 actions of the 15 tasks tau2's own
// tool code refuses (2, 3, 4, 35, 37, 38, 39, 46, 47, 54, 55, 64, 67, 68,
// 105: lookups of ids that do not exist, an exchange of a pending order, an
// exchange the gift card cannot pay), with the tool's message; and the
// conversion with that replay drops exactly the atomic tasks of the two
// failed state-changing actions (task 64's exchange, task 105's exchange).
func TestGoldReplayRetail(t *testing.T) {
	tasks, _ := retailTasks(t)
	srv := newServer(t)
	replay := host.GoldReplay(context.Background(), srv, []string{"retail"})
	got := map[string][]task.FailedAction{}
	for _, tk := range tasks {
		c, err := task.FromTau2(tk, task.Tau2Options{Modules: []string{"retail"}, Tools: retailTools(t), Replay: replay})
		if err != nil {
			t.Fatal(err)
		}
		fa, err := task.FailedActions(c)
		if err != nil {
			t.Fatal(err)
		}
		if fa != nil {
			got[tk.ID] = fa
		}
	}
	b, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	path := filepath.Join(megamcptest.Root(), failedActionsFixture)
	if *update {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s differs from the module's replay (-want +got); rerun with -update if intended:\n%s", failedActionsFixture, cmp.Diff(string(want), string(b)))
	}
	var ids []string
	dropped := map[string][]int{}
	for _, tk := range tasks {
		if fa := got[tk.ID]; fa != nil {
			ids = append(ids, tk.ID)
			for _, f := range fa {
				if f.DroppedAtomic {
					dropped[tk.ID] = append(dropped[tk.ID], f.Action)
				}
			}
		}
	}
	if d := cmp.Diff([]string{"2", "3", "4", "35", "37", "38", "39", "46", "47", "54", "55", "64", "67", "68", "105"}, ids); d != "" {
		t.Errorf("tasks with failed gold actions (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string][]int{"64": {6}, "105": {0}}, dropped); d != "" {
		t.Errorf("dropped atomic tasks (-want +got):\n%s", d)
	}
	n := 0
	for _, fa := range got {
		n += len(fa)
	}
	if n != 18 {
		t.Errorf("%d failed gold actions, want 18", n)
	}
}
