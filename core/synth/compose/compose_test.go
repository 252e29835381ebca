package compose

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

func loadServers(t testing.TB) []*spec.Server {
	t.Helper()
	var out []*spec.Server
	for _, d := range []string{"../../../examples/servers/tau2-retail", "../../../examples/servers/tau2-airline"} {
		s, err := spec.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// sliceOpts is a small composition: a one-round pool, three tasks of
// about six atomic turns.
var sliceOpts = Options{Seed: 3, Tasks: 3, Turns: 6, Spread: 1, GenSeeds: 1, PerTool: 2, Rounds: 1}

// TestComposeSlice: composed tasks span both servers, name clashing tools
// module__tool, carry a grounded initial state with namespaced tables that
// holds every binding, and certify again from that state (imported into a
// fresh store); the report's figures add up; the same seed gives the same
// bytes.
func TestComposeSlice(t *testing.T) {
	ctx := context.Background()
	servers := loadServers(t)
	res, err := Run(ctx, servers, sliceOpts)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Composed != 3 || len(res.Tasks) != 3 {
		t.Fatalf("composed %d (%d tasks), want 3; rejected %v", r.Composed, len(res.Tasks), r.RejectedBy)
	}
	rejected := 0
	for _, n := range r.RejectedBy {
		rejected += n
	}
	if r.Attempts != r.Composed+rejected {
		t.Errorf("attempts %d != composed %d + rejected %d", r.Attempts, r.Composed, rejected)
	}
	turns := 0
	for k, n := range r.AtomicTurns {
		if k < 5 || k > 7 {
			t.Errorf("a task of %d atomic turns, want 5..7", k)
		}
		turns += n
	}
	if turns != 3 || r.ServersPerTask[2] != 3 {
		t.Errorf("turn histogram %v, servers per task %v", r.AtomicTurns, r.ServersPerTask)
	}
	if g := r.Grounding; g.EntityRows == 0 || g.RelationRows == 0 || g.UniquenessChecks == 0 {
		t.Errorf("grounding %+v: every round should add rows and checks run", g)
	}
	env, err := tasks.SpecEnv(ctx, module.Config{}, servers...)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Store.Close()
	for _, tk := range res.Tasks {
		if !cmp.Equal(tk.Modules, []string{"tau2-retail", "airline"}) {
			t.Errorf("%s: modules %v", tk.ID, tk.Modules)
		}
		for _, a := range tk.Atomic {
			for _, c := range a.Reference {
				if _, ok := env.ReadOnly(c.Tool); !ok {
					t.Errorf("%s %s: tool %q is not the group's", tk.ID, a.ID, c.Tool)
				}
			}
		}
		v, err := env.Store.Import(ctx, bytes.NewReader(tk.InitialState))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(v.Tables(), ","), "airline__users,") || !strings.Contains(strings.Join(v.Tables(), ","), "tau2_retail__users") {
			t.Errorf("%s: tables %v, want both namespaced users tables", tk.ID, v.Tables())
		}
		rep, _, err := tasks.Certify(ctx, []*task.Task{tk}, func([]string) (*tasks.Env, error) { return env, nil },
			tasks.Options{Initial: func(*task.Task, *tasks.Env) (*state.Version, error) { return v, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if rep.TasksCertified != 1 {
			t.Errorf("%s does not certify from its initial state: %+v", tk.ID, rep.Rejections())
		}
	}
	var a, b bytes.Buffer
	if err := task.Save(&a, res.Tasks); err != nil {
		t.Fatal(err)
	}
	again, err := Run(ctx, servers, sliceOpts)
	if err != nil {
		t.Fatal(err)
	}
	if err := task.Save(&b, again.Tasks); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("the same seed gave different task files")
	}
}

// TestComposeBadInput: one server is refused before any work.
func TestComposeBadInput(t *testing.T) {
	_, err := Run(context.Background(), loadServers(t)[:1], sliceOpts)
	if err == nil || !strings.Contains(err.Error(), "at least two servers") {
		t.Fatalf("one server: %v", err)
	}
}
