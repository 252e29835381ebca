package attribute

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

var classes = []Class{ClassPolicy, ClassEnvironment, ClassTask, ClassVerifier}

// plantedCase builds an episode of n atomic tasks (each reads and cancels
// its own order) with one fault of class c planted in atomic task f, and
// the verification result a correct verifier (or, for ClassVerifier, a
// buggy one) would give. It returns the input and the class each failed
// checkpoint should get.
func plantedCase(t *testing.T, rng *rand.Rand, v0 *state.Version, c Class) (Input, map[string]Class, string) {
	n := 1 + rng.IntN(3)
	f := rng.IntN(n)
	tk := &task.Task{ID: fmt.Sprintf("t%d", rng.IntN(1000)), Modules: []string{"retail"}, Checks: []task.Check{{Kind: task.CheckStateEqual}}}
	ids := rng.Perm(10)
	ref := []*state.Version{v0}
	for i := range n {
		id := fmt.Sprintf("#W%d", ids[i])
		tk.Atomic = append(tk.Atomic, cancelAtomic(fmt.Sprintf("a%d", i+1), id))
		if c == ClassTask && i == f {
			ref = append(ref, ref[i]) // the reference action fails: no change
		} else {
			ref = append(ref, cancel(t, ref[i], id))
		}
	}
	rep := cleanReference(tk)
	var ledger []verify.LedgerCall
	add := func(lc verify.LedgerCall) {
		lc.Index = uint64(len(ledger))
		ledger = append(ledger, lc)
	}
	var done []string // orders the agent cancelled
	desc := ""
	for i, a := range tk.Atomic {
		id := string(a.Reference[0].Arguments[len(`{"order_id":"`) : len(a.Reference[0].Arguments)-2])
		if rng.IntN(3) == 0 { // policy noise that fails nothing
			switch rng.IntN(3) {
			case 0:
				add(verify.LedgerCall{Tool: "get_order", Arguments: args("#W99"), IsError: true, Output: "no such order"})
			case 1:
				add(verify.LedgerCall{Tool: "lookup_customer", IsError: true, ErrorKind: "unknown_tool"})
			case 2:
				add(verify.LedgerCall{Tool: "cancel_order", Arguments: []byte(`{"order":1}`), IsError: true, ErrorKind: "invalid_arguments"})
			}
		}
		get := call(0, "get_order", id)
		act := call(0, "cancel_order", id)
		act.RowsChanged = 1
		if i == f {
			switch c {
			case ClassPolicy:
				if rng.IntN(2) == 0 {
					wrong := fmt.Sprintf("#W%d", ids[9])
					act.Arguments, desc = args(wrong), "wrong argument"
					done = append(done, wrong)
				} else {
					act, desc = verify.LedgerCall{}, "skipped action"
				}
			case ClassEnvironment:
				kinds := []failure.Kind{failure.Trap, failure.Deadline, failure.MemoryLimit, failure.MalformedOutput, failure.Internal}
				k := kinds[rng.IntN(len(kinds))]
				if rng.IntN(2) == 0 {
					get.ErrorKind, get.IsError = k, true
				} else {
					act.ErrorKind, act.IsError, act.RowsChanged = k, true, 0
				}
				act.Output, desc = "module failed", string(k)
				if get.ErrorKind != "" {
					act = verify.LedgerCall{} // the agent gave up
				}
			case ClassTask:
				rep.Calls[2*i+1].IsError, rep.Calls[2*i+1].Output, rep.Calls[2*i+1].RowsChanged = true, "order is not cancellable", 0
				act.IsError, act.Output, act.RowsChanged, desc = true, "order is not cancellable", 0, "reference error"
			case ClassVerifier:
				desc = "buggy check"
			}
		}
		add(get)
		if act.Tool != "" {
			add(act)
			if !act.IsError && act.ErrorKind == "" && !(c == ClassPolicy && i == f) {
				done = append(done, id)
			}
		}
	}
	final := cancel(t, v0, done...)
	res := &verify.Result{}
	want := map[string]Class{}
	for i, a := range tk.Atomic {
		cp := verify.Checkpoint{Name: a.ID, Score: 1, Checks: []verify.CheckResult{{Kind: task.CheckChangedRows, Passed: true}}}
		if i == f {
			id := string(a.Reference[1].Arguments[len(`{"order_id":"`) : len(a.Reference[1].Arguments)-2])
			cr := verify.CheckResult{Kind: task.CheckChangedRows, Evidence: "not changed"}
			if c == ClassVerifier && rng.IntN(2) == 0 {
				cr.Kind = task.CheckSQL // nothing listed: only the ledger shows the contradiction
			} else if c != ClassTask {
				cr.Missing = []string{fmt.Sprintf("orders[%s].status=cancelled", id)}
			}
			cp.Score, cp.Checks = 0, []verify.CheckResult{cr}
			want[a.ID] = c
		}
		res.Checkpoints = append(res.Checkpoints, cp)
	}
	overall := verify.Checkpoint{Name: verify.Overall, Score: 1, Checks: []verify.CheckResult{{Kind: task.CheckStateEqual, Passed: true}}}
	if c != ClassVerifier { // a buggy atomic check leaves the overall check right
		overall.Score, overall.Checks = 0, []verify.CheckResult{{Kind: task.CheckStateEqual, Evidence: "hash differs"}}
		want[verify.Overall] = c
	}
	res.Checkpoints = append(res.Checkpoints, overall)
	ev := memEvidence{verify.Initial: v0, verify.Final: final, verify.Reference: ref[n]}
	for k, v := range ref {
		ev[verify.ReferenceAfter(k)] = v
	}
	return Input{Task: tk, Result: res, Ledger: ledger, Reference: rep, Evidence: ev}, want, desc
}

func TestPlantedFaultAccuracy(t *testing.T) {
	const perClass = 48
	rng := rand.New(rand.NewPCG(7, 11))
	v0 := loadOrders(t, 10)
	confusion := map[Class]map[Class]int{}
	total, right := 0, 0
	for _, c := range classes {
		confusion[c] = map[Class]int{}
		for i := range perClass {
			in, want, desc := plantedCase(t, rng, v0, c)
			got, err := Attribute(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%s case %d: %d attributions, want %d: %+v", c, i, len(got), len(want), got)
			}
			for _, a := range got {
				w := want[a.Checkpoint]
				confusion[w][a.Class]++
				total++
				if a.Class == w {
					right++
				} else {
					t.Logf("%s case %d (%s) checkpoint %s: got %s: %s", c, i, desc, a.Checkpoint, a.Class, a.Evidence)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "confusion (rows planted, columns attributed):\n%-12s", "")
	for _, c := range classes {
		fmt.Fprintf(&b, "%12s", c)
	}
	for _, w := range classes {
		fmt.Fprintf(&b, "\n%-12s", w)
		for _, g := range classes {
			fmt.Fprintf(&b, "%12d", confusion[w][g])
		}
	}
	t.Log(b.String())
	for _, w := range classes {
		n := 0
		for _, k := range confusion[w] {
			n += k
		}
		if n < 40 {
			t.Errorf("%s: only %d checkpoints", w, n)
		}
		if acc := float64(confusion[w][w]) / float64(n); acc < 0.95 {
			t.Errorf("%s accuracy %.3f < 0.95", w, acc)
		}
	}
	if acc := float64(right) / float64(total); acc < 0.95 {
		t.Errorf("overall accuracy %.3f < 0.95", acc)
	} else {
		t.Logf("overall accuracy %.3f over %d failed checkpoints", acc, total)
	}
}
