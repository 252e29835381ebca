package pipeline

import (
	"testing"

	"github.com/weft-dev/weft/core/config"
)

// WithBatch gives a runner whose grpo stage is the batch's (its settings,
// the trainer's endpoint as policy) and leaves the worker's spec as it
// was; an endpoint that cannot make a client is an error.
func TestUnitRunnerWithBatch(t *testing.T) {
	spec := &Spec{Policies: map[string]Policy{"scripted": {}}}
	u := NewUnitRunner(spec)
	b := &Batch{GRPO: GRPOSpec{Policy: "scripted", G: 4, Level: "atomic_turn", Seed: 9},
		Endpoint: config.Endpoint{BaseURL: "http://127.0.0.1:9/v1", Model: "m"}}
	w, err := u.WithBatch(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	gp := w.r.spec.GRPO
	if gp == nil || gp.Policy != batchPolicy || gp.G != 4 || gp.Seed != 9 {
		t.Fatalf("batch grpo spec %+v, want G 4, seed 9 on policy %q", gp, batchPolicy)
	}
	if _, ok := w.r.spec.Policies[batchPolicy]; !ok || len(w.r.spec.Policies) != 2 {
		t.Errorf("batch spec policies %v, want scripted and %s", keys(w.r.spec.Policies), batchPolicy)
	}
	if w.r.spec.SFT != nil {
		t.Errorf("a batch without sft gave an sft stage %+v", w.r.spec.SFT)
	}
	b.SFT = &SFTSpec{Policy: "scripted", Mode: "prefix", Retries: 3, Compare: true}
	w, err = u.WithBatch(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if sp := w.r.spec.SFT; sp == nil || sp.Policy != batchPolicy || sp.Mode != "prefix" || sp.Retries != 3 || sp.Compare {
		t.Errorf("batch sft spec %+v, want prefix mode, 3 retries, no compare, on policy %q", sp, batchPolicy)
	}
	if spec.GRPO != nil || spec.SFT != nil || len(spec.Policies) != 1 || b.GRPO.Policy != "scripted" || b.SFT.Policy != "scripted" {
		t.Errorf("WithBatch changed its inputs: spec grpo %v, policies %v, batch policy %q", spec.GRPO, keys(spec.Policies), b.GRPO.Policy)
	}
	if _, err := u.WithBatch(&Batch{Endpoint: config.Endpoint{BaseURL: "ftp://x", Model: "m"}}, nil); err == nil {
		t.Error("WithBatch took an ftp base URL")
	}
	if spec.GRPO != nil || len(spec.Policies) != 1 {
		t.Errorf("a refused batch changed the spec: grpo %v, policies %v", spec.GRPO, keys(spec.Policies))
	}
}

func keys(m map[string]Policy) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
