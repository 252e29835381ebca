package tasks

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

func generateOn(t *testing.T, dir string, opts GenOptions) (*GenResult, []byte) {
	t.Helper()
	s, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	env := specEnv(t, dir)
	res, err := Generate(context.Background(), env, []*spec.Server{s}, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := task.Save(&b, res.Tasks); err != nil {
		t.Fatal(err)
	}
	return res, b.Bytes()
}

func taskIDs(ts []*task.Task) []string {
	var ids []string
	for _, t := range ts {
		ids = append(ids, t.ID)
	}
	return ids
}

// The wallet server: one kept task per signature (deposit, set_note,
// get_account); raffle's nondeterministic candidates all rejected; the
// coverage map misses only raffle's ok cell; the same seed gives the same
// bytes.
func TestGenerateWallet(t *testing.T) {
	res, b1 := generateOn(t, walletDir, GenOptions{Seed: 7})
	_, b2 := generateOn(t, walletDir, GenOptions{Seed: 7})
	if !bytes.Equal(b1, b2) {
		t.Fatal("the same seed gave different task files")
	}
	if d := cmp.Diff([]string{"get_account.1", "deposit.1", "set_note.1"}, taskIDs(res.Tasks)); d != "" {
		t.Errorf("kept (-want +got):\n%s", d)
	}
	r := res.Report
	if r.ByReason[ReasonNondeterministic] != 12 || r.Rounds != 2 || r.Kept != 3 || r.KeptWrite != 2 || r.KeptRead != 1 {
		t.Errorf("report: nondeterministic %d, rounds %d, kept %d (%d write, %d read)", r.ByReason[ReasonNondeterministic], r.Rounds, r.Kept, r.KeptWrite, r.KeptRead)
	}
	var uncovered []string
	for _, c := range r.Coverage.Cells {
		if !c.Covered {
			uncovered = append(uncovered, c.Tool+"/"+c.Access+"/"+c.Branch)
		}
	}
	if d := cmp.Diff([]string{"raffle/write/ok"}, uncovered); d != "" || r.Coverage.Possible != 8 {
		t.Errorf("uncovered (-want +got):\n%s (possible %d)", d, r.Coverage.Possible)
	}
	dep := res.Tasks[1]
	want := task.Atomic{ID: "a1", Request: dep.Atomic[0].Request, Bindings: map[string]string{"account_id": dep.Atomic[0].Bindings["account_id"]},
		Reference: []task.Call{{Tool: "get_account", Arguments: dep.Atomic[0].Reference[0].Arguments}, dep.Atomic[0].Reference[1]},
		Checks:    []task.Check{{Kind: task.CheckChangedRows, Note: "the values the reference write sets hold"}},
		Rubric:    dep.Atomic[0].Rubric}
	if d := cmp.Diff(want, dep.Atomic[0]); d != "" || dep.Atomic[0].Reference[1].Tool != "deposit" || !strings.HasPrefix(dep.Atomic[0].Request, "Please run deposit with account_id: acc_") {
		t.Errorf("deposit task (-want +got):\n%s\nrequest %q", d, dep.Atomic[0].Request)
	}
	if _, b3 := generateOn(t, walletDir, GenOptions{Seed: 8}); bytes.Equal(b1, b3) {
		t.Log("seeds 7 and 8 happen to give the same file")
	}
}

// The endpoint writer: the model's request, brief and rubric replace the
// templates; an answer that drops a binding is a *WriterError and
// Generate returns no tasks.
func TestModelWriter(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(r modeltest.Request) modeltest.Reply {
		msgs := r.Messages()
		body, _ := msgs[len(msgs)-1]["content"].(string)
		for _, id := range []string{"acc_ada", "acc_bob"} {
			if strings.Contains(body, `"account_id":"`+id+`"`) {
				return modeltest.Text(`{"request":"Hi, this is about my wallet ` + id + `, please sort it out.","brief":"Customer of ` + id + `.","rubric":["Confirms ` + id + ` first.","Reports the outcome."]}`)
			}
		}
		return modeltest.Text(`{"request":"Please help.","brief":"A customer.","rubric":["Helps."]}`)
	}))
	c, err := model.NewClient(model.ClientConfig{BaseURL: srv.URL(), Model: "writer", MaxRetries: -1, InitialBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, _ := generateOn(t, walletDir, GenOptions{Seed: 7, Writer: &ModelWriter{Model: c}})
	for _, tk := range res.Tasks {
		id := tk.Atomic[0].Bindings["account_id"]
		want := []task.RubricItem{{ID: "r1", Criterion: "Confirms " + id + " first."}, {ID: "r2", Criterion: "Reports the outcome."}}
		if tk.Atomic[0].Request != "Hi, this is about my wallet "+id+", please sort it out." || tk.Brief != "Customer of "+id+"." || !cmp.Equal(want, tk.Atomic[0].Rubric) {
			t.Errorf("task %s: request %q brief %q rubric %+v", tk.ID, tk.Atomic[0].Request, tk.Brief, tk.Atomic[0].Rubric)
		}
	}
	if len(srv.Requests()) != 3 {
		t.Errorf("%d model requests, want 3 (one per kept task)", len(srv.Requests()))
	}

	bad := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Text(`{"request":"Please help.","brief":"A customer.","rubric":["Helps."]}`)))
	cb, _ := model.NewClient(model.ClientConfig{BaseURL: bad.URL(), Model: "writer", MaxRetries: -1})
	s, _ := spec.Load(walletDir)
	env := specEnv(t, walletDir)
	seed := env.Seed.Hash()
	out, err := Generate(context.Background(), env, []*spec.Server{s}, GenOptions{Seed: 7, Writer: &ModelWriter{Model: cb}})
	var we *WriterError
	if !errors.As(err, &we) || out != nil || !strings.Contains(err.Error(), `does not name binding account_id="acc_`) {
		t.Fatalf("got %v, %v; want a *WriterError naming the binding", out, err)
	}
	if env.Seed.Hash() != seed {
		t.Error("the failed generation changed the seed state")
	}
}

// The synthesized retail server, a small budget: the kept tasks are one
// per signature and every one certifies again from the seed.
func TestGenerateRetailSpec(t *testing.T) {
	res, _ := generateOn(t, retailSpec, GenOptions{Seed: 3, PerTool: 2, MaxRounds: 2})
	sigs := map[string]bool{}
	writes := 0
	for _, tk := range res.Tasks {
		sig := tk.Meta["signature"].(string)
		if sigs[sig] {
			t.Errorf("task %s repeats signature %s", tk.ID, sig)
		}
		sigs[sig] = true
		if tk.Meta["kind"] == "write" {
			writes++
			if c := tk.Atomic[0].Checks; len(c) != 1 || c[0].Kind != task.CheckChangedRows {
				t.Errorf("write task %s checks %+v", tk.ID, c)
			}
		}
	}
	env := specEnv(t, retailSpec)
	rep, certified, err := Certify(context.Background(), res.Tasks, func([]string) (*Env, error) { return env, nil }, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(certified) != len(res.Tasks) || rep.AtomicCertified != len(res.Tasks) {
		t.Errorf("%d of %d generated tasks certify again: %+v", len(certified), len(res.Tasks), rep.Rejections())
	}
	r := res.Report
	if r.Kept != len(res.Tasks) || r.Kept != r.Certified-r.Pruned || r.Generated != r.Attempts-r.Discarded || writes != r.KeptWrite || writes < 2 || r.KeptRead < 5 {
		t.Errorf("report: kept %d (%d write, %d read), certified %d, pruned %d, attempts %d, discarded %d, candidates %d",
			r.Kept, r.KeptWrite, r.KeptRead, r.Certified, r.Pruned, r.Attempts, r.Discarded, r.Generated)
	}
	t.Logf("kept %v", taskIDs(res.Tasks))
}
