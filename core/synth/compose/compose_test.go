package compose

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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
var sliceOpts = Options{Seed: 3, Tasks: 3, Turns: 6, Spread: 1, GenSeeds: 1, PerTool: 2, Rounds: 1, SharedEntities: 4}

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
		fresh, _, err := tasks.Certify(ctx, []*task.Task{tk}, func([]string) (*tasks.Env, error) { return env, nil },
			tasks.Options{Fresh: true, Initial: func(*task.Task, *tasks.Env) (*state.Version, error) { return v, nil }})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(fresh, rep); diff != "" {
			t.Errorf("%s: reuse vs fresh certification (-fresh +reuse):\n%s", tk.ID, diff)
		}
	}
	if r.SharedEntities == 0 || r.SharedAtoms == 0 {
		t.Errorf("shared entities %d, shared atoms %d: want people bound in both servers", r.SharedEntities, r.SharedAtoms)
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
	// The committed layout: states in one set beside the task file, the
	// same bytes for the same seed, and LoadFile gives each task's state
	// back byte for byte.
	var files [2][2][]byte
	for i, r := range []*Result{res, again} {
		p := filepath.Join(t.TempDir(), "tasks.weft.json")
		if err := task.SaveSplit(p, r.Tasks); err != nil {
			t.Fatal(err)
		}
		files[i][0], _ = os.ReadFile(p)
		files[i][1], _ = os.ReadFile(task.StatesPath(p))
		if i == 0 {
			back, err := task.LoadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for j, tk := range back {
				if !bytes.Equal(tk.InitialState, res.Tasks[j].InitialState) {
					t.Errorf("%s: the state set does not give the initial state back", tk.ID)
				}
			}
		}
	}
	if !bytes.Equal(files[0][0], files[1][0]) || !bytes.Equal(files[0][1], files[1][1]) {
		t.Fatal("the same seed gave different split task or state files")
	}
}

// TestComposeBadInput: one server is refused before any work.
func TestComposeBadInput(t *testing.T) {
	_, err := Run(context.Background(), loadServers(t)[:1], sliceOpts)
	if err == nil || !strings.Contains(err.Error(), "at least two servers") {
		t.Fatalf("one server: %v", err)
	}
}

// shareEntities pairs users bound in both pools: the other server's user
// takes server 0's user_id, names and email everywhere in its seed (its
// reservations follow), the inputs are unchanged, and an atomic task of
// the other server bound to the old user is rebound to the person.
func TestShareEntities(t *testing.T) {
	servers := loadServers(t)
	orig := string(servers[1].Seed)
	mk := func(ids ...string) []*task.Task {
		var out []*task.Task
		for _, id := range ids {
			out = append(out, &task.Task{ID: id, Atomic: []task.Atomic{{ID: "a1", Bindings: map[string]string{"user_id": id}}}})
		}
		return out
	}
	// Retail's noah_brown_6181 and airline's mia_li_3668 (both in the seeds).
	got, sh, err := shareEntities(servers, [][]*task.Task{mk("noah_brown_6181", "no_such_user"), mk("mia_li_3668")}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if string(servers[1].Seed) != orig {
		t.Fatal("the input server's seed changed")
	}
	pp, ok := sh[1]["mia_li_3668"]
	if len(sh[1]) != 1 || !ok || pp[1].id != "noah_brown_6181" || pp[1].email != "noah.brown7922@example.com" || pp[0].email == pp[1].email {
		t.Fatalf("pairs %+v", sh)
	}
	users, err := seedUsers(got[1].Seed)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range users {
		if u.id == "mia_li_3668" {
			t.Error("the old user id is still in the rewritten seed")
		}
		if u.id == "noah_brown_6181" {
			found = true
			if u.first != "Noah" || u.last != "Brown" || u.email != "noah.brown7922@example.com" {
				t.Errorf("shared user %+v", u)
			}
		}
	}
	if !found || strings.Contains(string(got[1].Seed), `"mia_li_3668"`) {
		t.Errorf("rewritten seed: person found %v; old id left %v", found, strings.Contains(string(got[1].Seed), `"mia_li_3668"`))
	}
	a := task.Atomic{ID: "a1", Request: "Show user mia_li_3668", Bindings: map[string]string{"user_id": "mia_li_3668"},
		Reference: []task.Call{{Tool: "get_user_details", Arguments: []byte(`{"user_id":"mia_li_3668"}`)}}}
	b, pid := rebind(a, sh[1])
	if pid != "noah_brown_6181" || b.Bindings["user_id"] != pid || string(b.Reference[0].Arguments) != `{"user_id":"noah_brown_6181"}` || b.Request != "Show user noah_brown_6181" {
		t.Errorf("rebound %+v (%s)", b, pid)
	}
	if a.Bindings["user_id"] != "mia_li_3668" || string(a.Reference[0].Arguments) != `{"user_id":"mia_li_3668"}` {
		t.Error("rebind changed its input")
	}
	// None asked: nothing shared, the servers as given.
	same, none, err := shareEntities(servers, [][]*task.Task{mk("noah_brown_6181"), mk("mia_li_3668")}, 0)
	if err != nil || len(none) != 0 || same[1] != servers[1] {
		t.Errorf("n = 0: %v %v", none, err)
	}
}
