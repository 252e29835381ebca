package host_test

import (
	"context"
	"testing"

	"github.com/weft-dev/weft/core/train"
)

// BenchmarkGRPOGroupOverhead is the environment's share of one GRPO group
// of G = 8 candidates at a turn boundary, without any policy or harness
// call: Snapshot and Restore of the episode, 8 Forks, the state Hash of
// each fork and its Close. The episode is retail task 22 after its
// reference turn 0 (a state with a write). One op is one group; the goal
// is at most 1 ms per group.
func BenchmarkGRPOGroupOverhead(b *testing.B) {
	const G = 8
	env := trainEnv(b, nil)
	tk := weftTask(b, "22")
	ctx := context.Background()
	ep := openTrain(b, env, tk, resumeName, 1)
	if _, err := ep.Turn(ctx, train.TurnOptions{Reference: true}); err != nil {
		b.Fatal(err)
	}
	want := mustHash(b, ep)
	forks := make([]train.Episode, G)
	for b.Loop() {
		snap, err := ep.Snapshot(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := ep.Restore(ctx, snap); err != nil {
			b.Fatal(err)
		}
		for i := range forks {
			if forks[i], err = ep.Fork(ctx); err != nil {
				b.Fatal(err)
			}
		}
		for _, f := range forks {
			h, err := f.Hash(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if h != want {
				b.Fatalf("fork at %s, episode at %s", h, want)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
		}
	}
}
