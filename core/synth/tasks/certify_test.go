package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
)

const walletDir = "testdata/servers/wallet"

func call(tool, args string) task.Call {
	return task.Call{Tool: tool, Arguments: json.RawMessage(args)}
}

func oneAtomic(id string, a task.Atomic) *task.Task {
	a.ID = "a1"
	if a.Request == "" {
		a.Request = "please do it"
	}
	return &task.Task{ID: id, Modules: []string{"wallet"}, Brief: "planted " + id, Atomic: []task.Atomic{a}}
}

func sqlCheck(q, expect string) task.Check {
	return task.Check{Kind: task.CheckSQL, SQL: q, Expect: json.RawMessage(expect)}
}

type got struct {
	Reason Reason
	Call   *FailedCall
	Check  *int
}

func intp(i int) *int { return &i }

// The planted-defect set: each defective atomic task is rejected for its
// reason (and only the reasons listed), with the failing call when one is
// to blame; the sound tasks are certified; the seed state is untouched.
func TestPlantedDefects(t *testing.T) {
	ctx := context.Background()
	env := specEnv(t, walletDir)
	seedHash := env.Seed.Hash()
	changed := []task.Check{{Kind: task.CheckChangedRows}}
	ts := []*task.Task{
		// Sound: a write with changed_rows.
		oneAtomic("ok-write", task.Atomic{Bindings: map[string]string{"account_id": "acc_ada"},
			Reference: []task.Call{call("get_account", `{"account_id":"acc_ada"}`), call("deposit", `{"account_id":"acc_ada","amount":5}`)}, Checks: changed}),
		// Sound: a read with required_call.
		oneAtomic("ok-read", task.Atomic{Reference: []task.Call{call("get_account", `{"account_id":"acc_bob"}`)},
			Checks: []task.Check{{Kind: task.CheckRequiredCall, Tool: "get_account", Arguments: json.RawMessage(`{"account_id":"acc_bob"}`)}}}),
		// 1. A check that passes on the initial state.
		oneAtomic("passes-initial", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)},
			Checks: []task.Check{sqlCheck("SELECT owner FROM accounts WHERE id = 'acc_ada'", `[["Ada"]]`)}}),
		// 2. A check that does not notice a dropped step (the deposit).
		oneAtomic("dropped-step", task.Atomic{Reference: []task.Call{call("set_note", `{"account_id":"acc_ada","note":"gold"}`), call("deposit", `{"account_id":"acc_ada","amount":50}`)},
			Checks: []task.Check{sqlCheck("SELECT note FROM accounts WHERE id = 'acc_ada'", `[["gold"]]`)}}),
		// 3. A nondeterministic reference (a prize from the random stream).
		oneAtomic("nondeterministic", task.Atomic{Reference: []task.Call{call("raffle", `{"account_id":"acc_bob"}`)}, Checks: changed}),
		// 4. A binding to an entity that does not exist.
		oneAtomic("bad-binding", task.Atomic{Bindings: map[string]string{"account_id": "acc_zed"},
			Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)}, Checks: changed}),
		// A reference that fails at its second call.
		oneAtomic("reference-fails", task.Atomic{Reference: []task.Call{call("get_account", `{"account_id":"acc_ada"}`), call("deposit", `{"account_id":"acc_zed","amount":5}`), call("deposit", `{"account_id":"acc_ada","amount":5}`)}, Checks: changed}),
		// A read-only reference checked on state only.
		oneAtomic("read-sql", task.Atomic{Reference: []task.Call{call("get_account", `{"account_id":"acc_bob"}`)},
			Checks: []task.Check{sqlCheck("SELECT balance FROM accounts WHERE id = 'acc_bob'", `[[20]]`)}}),
		// No checks.
		oneAtomic("no-checks", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)}}),
		// A check that fails on the reference itself.
		oneAtomic("fails-reference", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)},
			Checks: []task.Check{sqlCheck("SELECT balance FROM accounts WHERE id = 'acc_ada'", `[[999]]`)}}),
		// No atomic tasks.
		{ID: "empty", Modules: []string{"wallet"}, Brief: "nothing"},
	}
	rep, certified, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The reuse of snapshots and indexes changes no verdict: the Fresh
	// path (every variant rerun from init_k, every index exported) gives
	// the same report.
	fresh, _, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{Fresh: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, rep); diff != "" {
		t.Errorf("reuse vs fresh certification (-fresh +reuse):\n%s", diff)
	}
	want := map[string][]got{
		"ok-write":         nil,
		"ok-read":          nil,
		"passes-initial":   {{Reason: ReasonPassesOnInitial}, {Reason: ReasonDroppedStepUnnoticed, Call: &FailedCall{Index: 0, TaskIndex: 0, Tool: "deposit", Arguments: json.RawMessage(`{"account_id":"acc_ada","amount":5}`)}}},
		"dropped-step":     {{Reason: ReasonDroppedStepUnnoticed, Call: &FailedCall{Index: 1, TaskIndex: 1, Tool: "deposit", Arguments: json.RawMessage(`{"account_id":"acc_ada","amount":50}`)}}},
		"nondeterministic": {{Reason: ReasonNondeterministic, Call: &FailedCall{Index: 0, TaskIndex: 0, Tool: "raffle", Arguments: json.RawMessage(`{"account_id":"acc_bob"}`)}}},
		"bad-binding":      {{Reason: ReasonBindingNotFound}},
		"reference-fails":  {{Reason: ReasonReferenceFailed, Call: &FailedCall{Index: 1, TaskIndex: 1, Tool: "deposit", Arguments: json.RawMessage(`{"account_id":"acc_zed","amount":5}`), Error: "no account acc_zed"}}},
		"read-sql":         {{Reason: ReasonPassesOnInitial}, {Reason: ReasonReadOnlyUnverifiable}},
		"no-checks":        {{Reason: ReasonNoChecks}},
		"fails-reference":  {{Reason: ReasonFailsOnReference, Check: intp(0)}},
		"empty":            {{Reason: ReasonNoAtomic}},
	}
	for _, tr := range rep.Results {
		var g []got
		for _, rj := range tr.Rejections {
			g = append(g, got{rj.Reason, rj.Call, rj.Check})
		}
		for _, a := range tr.Atomic {
			for _, rj := range a.Rejections {
				g = append(g, got{rj.Reason, rj.Call, rj.Check})
			}
		}
		if d := cmp.Diff(want[tr.ID], g); d != "" {
			t.Errorf("task %s rejections (-want +got):\n%s", tr.ID, d)
		}
		if tr.Certified != (want[tr.ID] == nil) {
			t.Errorf("task %s: certified %v", tr.ID, tr.Certified)
		}
	}
	var ids []string
	for _, c := range certified {
		ids = append(ids, c.ID)
	}
	if d := cmp.Diff([]string{"ok-write", "ok-read"}, ids); d != "" {
		t.Errorf("certified (-want +got):\n%s", d)
	}
	wantCounts := map[Reason]int{
		ReasonInvalidTask: 0, ReasonNoEnv: 0, ReasonNoAtomic: 1, ReasonReferenceFailed: 1, ReasonNondeterministic: 1,
		ReasonNoChecks: 1, ReasonFailsOnReference: 1, ReasonPassesOnInitial: 2, ReasonDroppedStepUnnoticed: 2,
		ReasonReadOnlyUnverifiable: 1, ReasonBindingNotFound: 1, ReasonOverallFails: 0,
	}
	if d := cmp.Diff(wantCounts, rep.ByReason); d != "" {
		t.Errorf("by reason (-want +got):\n%s", d)
	}
	if rep.Tasks != 11 || rep.TasksCertified != 2 || rep.Atomic != 10 || rep.AtomicCertified != 2 || rep.ReadOnlyAtomic != 2 {
		t.Errorf("counts: tasks %d/%d atomic %d/%d read-only %d", rep.TasksCertified, rep.Tasks, rep.AtomicCertified, rep.Atomic, rep.ReadOnlyAtomic)
	}
	if env.Seed.Hash() != seedHash {
		t.Error("certification changed the seed state")
	}
}

// Tasks that cannot be certified as written are rejections with their
// reason and message, never errors; the seed state is untouched.
func TestCertifyBadTasks(t *testing.T) {
	env := specEnv(t, walletDir)
	seed := env.Seed.Hash()
	ok := oneAtomic("x", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)}, Checks: []task.Check{{Kind: task.CheckChangedRows}}})
	blank := oneAtomic("blank", task.Atomic{Request: " ", Checks: []task.Check{{Kind: task.CheckChangedRows}}})
	blank.Atomic[0].Request = " "
	versioned := oneAtomic("versioned", ok.Atomic[0])
	versioned.InitialVersion = "v42"
	other := oneAtomic("other", ok.Atomic[0])
	other.Modules = []string{"bank"}
	resolve := func(mods []string) (*Env, error) {
		if mods[0] != "wallet" {
			return nil, errors.New("no server " + mods[0])
		}
		return env, nil
	}
	rep, certified, err := Certify(context.Background(), []*task.Task{blank, versioned, other}, resolve, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type rd struct {
		Reason Reason
		Detail string
	}
	var got []rd
	for _, r := range rep.Rejections() {
		got = append(got, rd{r.Reason, r.Detail})
	}
	want := []rd{
		{ReasonInvalidTask, `task "blank": atomic "a1": request: missing`},
		{ReasonNoEnv, `initial version "v42": certification starts from the group's seed state`},
		{ReasonNoEnv, "no server bank"},
	}
	if d := cmp.Diff(want, got); d != "" || len(certified) != 0 {
		t.Errorf("rejections (-want +got):\n%s", d)
	}
	if env.Seed.Hash() != seed {
		t.Error("seed state changed")
	}
}

// Options.Initial starts a task from its own initial version: a deposit
// check that needs a richer Bob certifies from a version where Bob has
// 500, and is rejected from the seed.
func TestCertifyInitialVersion(t *testing.T) {
	ctx := context.Background()
	env := specEnv(t, walletDir)
	ws := env.Store.Fork(env.Seed)
	if _, err := ws.Exec(ctx, "UPDATE accounts SET balance = 500 WHERE id = 'acc_bob'"); err != nil {
		t.Fatal(err)
	}
	rich, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	tk := oneAtomic("rich", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_bob","amount":5}`)},
		Checks: []task.Check{sqlCheck("SELECT balance FROM accounts WHERE id = 'acc_bob'", `[[505]]`)}})
	tk.InitialVersion = "rich"
	resolve := func([]string) (*Env, error) { return env, nil }
	initial := func(t *task.Task, e *Env) (*state.Version, error) {
		if t.InitialVersion == "rich" {
			return rich, nil
		}
		return nil, errors.New("unknown version")
	}
	rep, _, err := Certify(ctx, []*task.Task{tk}, resolve, Options{Initial: initial})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Results[0].Certified {
		t.Errorf("from its initial version: %+v", rep.Rejections())
	}
	tk.InitialVersion = ""
	rep, _, err = Certify(ctx, []*task.Task{tk}, resolve, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rejections(); len(got) != 1 || got[0].Reason != ReasonFailsOnReference {
		t.Errorf("from the seed: %+v", got)
	}
}

// A task carrying its own initial_state (composed tasks, BFCL) certifies
// from it with no Initial option; an initial_state that does not import is
// invalid_task and leaves the seed untouched.
func TestCertifyInitialState(t *testing.T) {
	ctx := context.Background()
	env := specEnv(t, walletDir)
	seedHash := env.Seed.Hash()
	ws := env.Store.Fork(env.Seed)
	if _, err := ws.Exec(ctx, "UPDATE accounts SET balance = 500 WHERE id = 'acc_bob'"); err != nil {
		t.Fatal(err)
	}
	rich, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var doc bytes.Buffer
	if err := rich.Export(&doc); err != nil {
		t.Fatal(err)
	}
	tk := oneAtomic("rich", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_bob","amount":5}`)},
		Checks: []task.Check{sqlCheck("SELECT balance FROM accounts WHERE id = 'acc_bob'", `[[505]]`)}})
	tk.InitialState = doc.Bytes()
	resolve := func([]string) (*Env, error) { return env, nil }
	rep, _, err := Certify(ctx, []*task.Task{tk}, resolve, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Results[0].Certified {
		t.Errorf("from its initial_state: %+v", rep.Rejections())
	}
	tk.InitialState = json.RawMessage(`{"format":"weft.state/v1","tables":"nope"}`)
	rep, _, err = Certify(ctx, []*task.Task{tk}, resolve, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Rejections(); len(got) != 1 || got[0].Reason != ReasonInvalidTask || !strings.Contains(got[0].Detail, "initial_state") {
		t.Errorf("bad initial_state: %+v", got)
	}
	if env.Seed.Hash() != seedHash {
		t.Error("the seed state changed")
	}
}
