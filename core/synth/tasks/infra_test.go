package tasks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// A call that misses its deadline is an infrastructure failure: Exec and
// Certify return ErrInfra instead of rejecting the task
// (reference_call_failed would be a verdict that depends on machine
// load), and the seed state is untouched.
func TestDeadlineIsNoVerdict(t *testing.T) {
	ctx := context.Background()
	s, err := spec.Load(walletDir)
	if err != nil {
		t.Fatal(err)
	}
	env, err := SpecEnv(ctx, module.Config{CallTimeout: time.Nanosecond}, s)
	if err != nil {
		t.Fatal(err)
	}
	defer env.Store.Close()
	seed := env.Seed.Hash()
	ts := []*task.Task{oneAtomic("deposit", task.Atomic{Reference: []task.Call{call("deposit", `{"account_id":"acc_ada","amount":5}`)},
		Checks: []task.Check{{Kind: task.CheckChangedRows}}})}
	rep, certified, err := Certify(ctx, ts, func([]string) (*Env, error) { return env, nil }, Options{})
	if !errors.Is(err, ErrInfra) {
		t.Fatalf("Certify: err %v (report %+v), want ErrInfra", err, rep)
	}
	if rep != nil || certified != nil {
		t.Fatalf("a report on an infrastructure failure: %+v %v", rep, certified)
	}
	if env.Seed.Hash() != seed {
		t.Fatal("the seed state changed")
	}
}

// weft synth tasks, certify and compose run calls with one deadline.
func TestCallTimeoutShared(t *testing.T) {
	if CallTimeout != 30*time.Second {
		t.Fatalf("CallTimeout %v, want 30s (docs/certification.md)", CallTimeout)
	}
}
