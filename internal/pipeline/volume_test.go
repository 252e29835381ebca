package pipeline

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/host"
)

// TestTau2RetailTrainingData runs the sft and grpo stages on all 114
// tau2-retail tasks with the scripted policy and the fault mix of
// configs/tau2-retail.hcl (retry budget 3, G = 8, the native harness, the
// simuser view) and checks the figures docs/benchmarks.md quotes:
// prefix-preserving sampling keeps at least as many whole trajectories and
// turns as end-to-end sampling at the same retry budget, with fewer
// attempts; GRPO groups carry signal; some segments are masked, not all.
// Volume test: skipped under -race, run by make test without it.
func TestTau2RetailTrainingData(t *testing.T) {
	if raceEnabled {
		t.Skip("volume test: run without -race (make test does)")
	}
	spec := testSpec(t, nil)
	// Converted as weft run does: the gold actions replayed on the module,
	// so the two that fail start no atomic task.
	tools, err := Tau2Tools(megamcptest.Registry(t), []string{"retail"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := task.ConvertTau2File(filepath.Join(megamcptest.Root(), "examples/data/tau2-retail/tasks.json"),
		task.Tau2Options{Modules: []string{"retail"}, Tools: tools, Source: "tau2-retail",
			Replay: host.GoldReplay(context.Background(), spec.Server, []string{"retail"})})
	if err != nil {
		t.Fatal(err)
	}
	spec.Tasks = all
	faults := scripted.Faults{WrongArgument: 0.08, SkipStep: 0.04, ExtraCall: 0.05, HallucinatedTool: 0.03, MalformedCall: 0.03, EarlyStop: 0.03}
	p := spec.Policies["scripted"]
	spec.Policies["scripted"] = Policy{Episode: p.Episode, Turn: host.ScriptedTurnPolicy(faults)}
	spec.Stages = []string{StageSFT, StageGRPO}
	spec.SFT.Retries, spec.SFT.Seed, spec.SFT.Concurrency = 3, 1, 4
	spec.GRPO.G, spec.GRPO.Seed, spec.GRPO.Concurrency = 8, 1, 2
	res, err := Run(context.Background(), spec, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	e := m.SFTCompare
	if e == nil || m.SFTTasks != 111 || e.Tasks != 111 {
		t.Fatalf("sft tasks %d, compare %+v; want 111 (the tasks with atomic tasks) in both modes", m.SFTTasks, e)
	}
	t.Logf("prefix: %d/%d whole trajectories, %d records, %d turns kept, %d attempts, %d turns resampled",
		m.SFTTrajectories, m.SFTTasks, m.SFTRecords, m.SFTKeptTurns, m.SFTAttempts, m.SFTTurnsResampled)
	t.Logf("end_to_end: %d/%d whole trajectories, %d records, %d turns kept, %d attempts",
		e.Accepted, e.Tasks, e.Records, e.KeptTurns, e.Attempts)
	t.Logf("grpo: %d groups, %d non-zero, %d segments, %d masked (%.1f%%)",
		m.GRPOGroups, m.GRPONonZeroGroups, m.GRPOSegments, m.GRPOMaskedSegments, 100*float64(m.GRPOMaskedSegments)/float64(m.GRPOSegments))
	if m.SFTTrajectories < e.Accepted || m.SFTKeptTurns < e.KeptTurns || m.SFTAttempts > e.Attempts {
		t.Errorf("prefix (%d kept, %d turns, %d attempts) is not at least as good as end_to_end (%d, %d, %d)",
			m.SFTTrajectories, m.SFTKeptTurns, m.SFTAttempts, e.Accepted, e.KeptTurns, e.Attempts)
	}
	if m.SFTTurnsResampled == 0 || m.SFTTrajectories == m.SFTTasks {
		t.Errorf("faults on, yet %d turns resampled and %d/%d trajectories kept", m.SFTTurnsResampled, m.SFTTrajectories, m.SFTTasks)
	}
	// 182 atomic tasks: one group per atomic turn reached (a task stops
	// only when its reference fails too, which the retail references do
	// not once their failed gold actions are dropped).
	if m.GRPOGroups != 182 || m.GRPOSegments != 8*182 {
		t.Errorf("grpo: %d groups, %d segments; want 182 and %d", m.GRPOGroups, m.GRPOSegments, 8*182)
	}
	if m.GRPONonZeroGroups == 0 || m.GRPONonZeroGroups == m.GRPOGroups {
		t.Errorf("grpo: %d of %d groups with non-zero advantage; want some, not all", m.GRPONonZeroGroups, m.GRPOGroups)
	}
	if m.GRPOMaskedSegments == 0 || m.GRPOMaskedSegments >= m.GRPOSegments/2 {
		t.Errorf("grpo: %d of %d segments masked; want some, under half", m.GRPOMaskedSegments, m.GRPOSegments)
	}
}
