package train

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

// a4 is the advantage magnitude of a G = 4 group with rewards {1,0,0,1}
// and eps 1e-6: mean 0.5, population std 0.5, so ±0.5/(0.5+1e-6).
const a4 = 0.5 / (0.5 + 1e-6)

func advantages(g Group) []float64 {
	out := make([]float64, len(g.Candidates))
	for i, c := range g.Candidates {
		out[i] = c.Advantage
	}
	return out
}

func rewards(g Group) []float64 {
	out := make([]float64, len(g.Candidates))
	for i, c := range g.Candidates {
		out[i] = c.Reward
	}
	return out
}

func runGRPO(t *testing.T, env *fakeEnv, id string, n int, cfg GRPOConfig) *GRPOResult {
	t.Helper()
	r, err := GRPO(context.Background(), env, fakeTask(id, n), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if env.openCount() != 0 {
		t.Errorf("open episodes after GRPO: %d, want 0", env.openCount())
	}
	return r
}

func TestGRPOAtomicTurn(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("G", 0, 1, 2)
	r := runGRPO(t, env, "G", 2, GRPOConfig{G: 4, Eps: 1e-6})
	if r.Level != LevelAtomicTurn || r.TaskID != "G" || r.Stopped || len(r.Groups) != 2 {
		t.Fatalf("level %q, task %q, stopped %v, %d groups", r.Level, r.TaskID, r.Stopped, len(r.Groups))
	}
	g0, g1 := r.Groups[0], r.Groups[1]
	if diff := cmp.Diff([]float64{1, 0, 0, 1}, rewards(g0)); diff != "" {
		t.Errorf("turn 0 rewards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{a4, -a4, -a4, a4}, advantages(g0), approx); diff != "" {
		t.Errorf("turn 0 advantages (-want +got):\n%s", diff)
	}
	// All candidates succeed at turn 1: std 0, every advantage exactly 0.
	if diff := cmp.Diff([]float64{0, 0, 0, 0}, advantages(g1)); diff != "" {
		t.Errorf("turn 1 advantages (-want +got):\n%s", diff)
	}
	if !g0.NonZero || g1.NonZero {
		t.Errorf("NonZero %v, %v; want true, false", g0.NonZero, g1.NonZero)
	}
	if g0.ID != "G/t0" || g1.ID != "G/t1" || g0.Atomic != "a0" || g1.Atomic != "a1" || g1.Turn != 1 {
		t.Errorf("ids %q %q, atomic %q %q, turn %d", g0.ID, g1.ID, g0.Atomic, g1.Atomic, g1.Turn)
	}
	if g0.Continued != 0 || g1.Continued != 0 || g0.Reference != nil {
		t.Errorf("continued %d, %d, reference %v; want 0, 0, nil", g0.Continued, g1.Continued, g0.Reference)
	}
	for i, c := range g0.Candidates {
		if c.Sample != uint64(i) || contents(c.Result.Completion)[0] != fmt.Sprintf("done t0 s%d", i) {
			t.Errorf("candidate %d: sample %d, completion %v", i, c.Sample, contents(c.Result.Completion))
		}
	}
	// Turn 1 was forked from candidate 0's state and history.
	for i, c := range g1.Candidates {
		if diff := cmp.Diff([]string{"done t0 s0"}, contents(c.Result.Prompt)); diff != "" {
			t.Errorf("turn 1 candidate %d prompt (-want +got):\n%s", i, diff)
		}
	}
	// Each turn forks 4 episodes from a main episode that is the only one open.
	if diff := cmp.Diff([]int{1, 2, 3, 4, 1, 2, 3, 4}, env.forkOpen); diff != "" {
		t.Errorf("open episodes at each fork (-want +got):\n%s", diff)
	}

	segs := r.Segments()
	if len(segs) != 8 {
		t.Fatalf("%d segments, want 8", len(segs))
	}
	s := segs[1]
	if s.GroupID != "G/t0" || s.TaskID != "G" || s.Turn != 0 || s.Reward != 0 || math.Abs(s.Advantage+a4) > 1e-12 ||
		s.Masked || len(s.Tools) != 2 || contents(s.Completion)[0] != "done t0 s1" || len(s.Prompt) != 2 {
		t.Errorf("segment 1: %+v", s)
	}
	if segs[5].GroupID != "G/t1" || segs[5].Turn != 1 || segs[5].Advantage != 0 {
		t.Errorf("segment 5: %+v", segs[5])
	}

	sum := SummarizeGRPO([]*GRPOResult{r, nil})
	want := GRPOSummary{Tasks: 1, Groups: 2, NonZero: 1, Segments: 8}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if sum.MaskedShare() != 0 || sum.NonZeroShare() != 0.5 {
		t.Errorf("masked share %g, nonzero share %g; want 0, 0.5", sum.MaskedShare(), sum.NonZeroShare())
	}

	recs := r.VerlRecords(VerlOptions{DataSource: "weft/test", StartIndex: 10})
	if len(recs) != 2 {
		t.Fatalf("%d verl records, want 2", len(recs))
	}
	v := recs[1]
	if v.DataSource != "weft/test" || v.Ability != "agent" || v.RewardModel.Style != "rule" ||
		v.RewardModel.GroundTruth != `{"task_id":"G","turn":1,"atomic":"a1","level":"atomic_turn"}` {
		t.Errorf("verl record 1: %+v", v)
	}
	wantExtra := VerlExtraInfo{Split: "train", Index: 11, TaskID: "G", Turn: 1, GroupID: "G/t1", Tools: ToolDefs(env.tools)}
	if diff := cmp.Diff(wantExtra, v.ExtraInfo); diff != "" {
		t.Errorf("verl extra info (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(g1.Candidates[0].Result.Prompt, v.Prompt); diff != "" {
		t.Errorf("verl prompt (-want +got):\n%s", diff)
	}
	recs = r.VerlRecords(VerlOptions{NonZeroOnly: true, Split: "test"})
	if len(recs) != 1 || recs[0].ExtraInfo.GroupID != "G/t0" || recs[0].ExtraInfo.Index != 0 || recs[0].ExtraInfo.Split != "test" {
		t.Errorf("non-zero only: %+v", recs)
	}
}

// A verified candidate with a hallucinated call is masked: its positive
// advantage is clipped to 0 and the episode does not continue from it.
func TestGRPOMasked(t *testing.T) {
	setup := func() *fakeEnv {
		env := newFakeEnv()
		env.set("M", 0, 0, fakeOutcome{calls: hallucinated})
		env.failSamples("M", 0, 1, 2)
		return env
	}
	r := runGRPO(t, setup(), "M", 2, GRPOConfig{G: 4, Eps: 1e-6})
	g := r.Groups[0]
	if diff := cmp.Diff([]float64{1, 0, 0, 1}, rewards(g)); diff != "" {
		t.Errorf("rewards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{0, -a4, -a4, a4}, advantages(g), approx); diff != "" {
		t.Errorf("advantages (-want +got):\n%s", diff)
	}
	c := g.Candidates[0]
	if !c.Masked || len(c.Patterns) != 1 || c.Patterns[0] != "hallucinated_tool" {
		t.Errorf("candidate 0: masked %v, patterns %v", c.Masked, c.Patterns)
	}
	if g.Continued != 3 {
		t.Errorf("continued %d, want 3 (the first unmasked success)", g.Continued)
	}
	if got := contents(r.Groups[1].Candidates[0].Result.Prompt); got[0] != "done t0 s3" {
		t.Errorf("turn 1 continued from %v, want candidate 3", got)
	}
	sum := SummarizeGRPO([]*GRPOResult{r})
	if sum.Masked != 1 || sum.Segments != 8 || sum.MaskedShare() != 0.125 || sum.Patterns["hallucinated_tool"] != 1 {
		t.Errorf("summary %+v, masked share %g", sum, sum.MaskedShare())
	}
	if s := r.Segments()[0]; !s.Masked || s.Advantage != 0 || s.Reward != 1 {
		t.Errorf("segment 0: %+v", s)
	}

	// Masking off (the ablation): patterns recorded, no clipping.
	r = runGRPO(t, setup(), "M", 2, GRPOConfig{G: 4, Eps: 1e-6, NoMask: true})
	g = r.Groups[0]
	if diff := cmp.Diff([]float64{a4, -a4, -a4, a4}, advantages(g), approx); diff != "" {
		t.Errorf("unmasked advantages (-want +got):\n%s", diff)
	}
	if g.Candidates[0].Masked || len(g.Candidates[0].Patterns) != 1 || g.Continued != 0 {
		t.Errorf("unmasked: masked %v, patterns %v, continued %d", g.Candidates[0].Masked, g.Candidates[0].Patterns, g.Continued)
	}
}

func TestGRPOContinueRandom(t *testing.T) {
	chosen := map[int]bool{}
	for seed := range uint64(16) {
		var prev int
		for rep := range 2 {
			env := newFakeEnv()
			env.failSamples("R", 0, 0)
			r := runGRPO(t, env, "R", 3, GRPOConfig{G: 4, Continue: ContinueRandom, Seed: seed})
			c := r.Groups[0].Continued
			if c < 1 || c > 3 {
				t.Fatalf("seed %d: continued %d, want one of the successes 1..3", seed, c)
			}
			if rep == 1 && c != prev {
				t.Errorf("seed %d: continued %d then %d", seed, prev, c)
			}
			prev = c
			if got := contents(r.Groups[1].Candidates[2].Result.Prompt); got[0] != fmt.Sprintf("done t0 s%d", c) {
				t.Errorf("seed %d: turn 1 prompt %v, want continued from candidate %d", seed, got, c)
			}
			chosen[c] = true
		}
	}
	if len(chosen) < 2 {
		t.Errorf("16 seeds chose only %v", chosen)
	}
}

func TestGRPOContinueReference(t *testing.T) {
	env := newFakeEnv()
	r := runGRPO(t, env, "F", 3, GRPOConfig{G: 2, Continue: ContinueReference})
	for i, g := range r.Groups {
		if g.Continued != -1 || g.Reference == nil || !g.Reference.Reference || g.Reference.Reward != 1 || g.Reference.Turn != i {
			t.Errorf("group %d: continued %d, reference %+v", i, g.Continued, g.Reference)
		}
	}
	if diff := cmp.Diff([]string{"done t0 ref", "done t1 ref"}, contents(r.Groups[2].Candidates[1].Result.Prompt)); diff != "" {
		t.Errorf("turn 2 prompt (-want +got):\n%s", diff)
	}
	if s := SummarizeGRPO([]*GRPOResult{r}); s.ReferenceTurns != 3 || s.Segments != 6 {
		t.Errorf("summary %+v; want 3 reference turns, 6 segments", s)
	}
	// Reference turns are not training segments.
	for _, s := range r.Segments() {
		if strings.Contains(contents(s.Completion)[0], "ref") {
			t.Errorf("reference turn in segments: %+v", s)
		}
	}
	// The main episode (e1) ran every reference turn.
	var refs []string
	for _, l := range env.turns {
		if strings.HasSuffix(l, ":ref") {
			refs = append(refs, l)
		}
	}
	if diff := cmp.Diff([]string{"e1:t0:ref", "e1:t1:ref", "e1:t2:ref"}, refs); diff != "" {
		t.Errorf("reference turns (-want +got):\n%s", diff)
	}
}

func TestGRPOFallbackToReference(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("F", 1, 0, 1, 2, 3)
	r := runGRPO(t, env, "F", 3, GRPOConfig{G: 4})
	if r.Stopped || len(r.Groups) != 3 {
		t.Fatalf("stopped %v, %d groups; want false, 3", r.Stopped, len(r.Groups))
	}
	g := r.Groups[1]
	if g.Continued != -1 || g.Reference == nil || g.Reference.Reward != 1 || g.NonZero {
		t.Errorf("turn 1: continued %d, reference %+v, nonzero %v", g.Continued, g.Reference, g.NonZero)
	}
	if diff := cmp.Diff([]string{"done t0 s0", "done t1 ref"}, contents(r.Groups[2].Candidates[0].Result.Prompt)); diff != "" {
		t.Errorf("turn 2 prompt (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{1, 1, 1, 1}, rewards(r.Groups[2])); diff != "" {
		t.Errorf("turn 2 rewards after the reference fixed the state (-want +got):\n%s", diff)
	}
}

func TestGRPOStopsWhenReferenceFails(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("S", 1, 0, 1, 2, 3)
	env.setRef("S", 1, fakeOutcome{fail: true})
	r := runGRPO(t, env, "S", 3, GRPOConfig{G: 4})
	if !r.Stopped || r.StopTurn != 1 || len(r.Groups) != 2 || !strings.Contains(r.StopReason, "no candidate succeeded") {
		t.Errorf("stopped %v at %d (%q), %d groups; want stopped at 1 with 2 groups", r.Stopped, r.StopTurn, r.StopReason, len(r.Groups))
	}
	if r.Groups[1].Reference.Reward != 0 {
		t.Errorf("reference reward %g, want 0", r.Groups[1].Reference.Reward)
	}

	env = newFakeEnv()
	env.setRef("S", 0, fakeOutcome{fail: true})
	r = runGRPO(t, env, "S", 3, GRPOConfig{G: 2, Continue: ContinueReference})
	if !r.Stopped || r.StopTurn != 0 || len(r.Groups) != 1 || !strings.Contains(r.StopReason, "reference solution failed") {
		t.Errorf("reference continuation: stopped %v at %d (%q), %d groups", r.Stopped, r.StopTurn, r.StopReason, len(r.Groups))
	}
	if s := SummarizeGRPO([]*GRPOResult{r}); s.Stopped != 1 {
		t.Errorf("summary stopped %d, want 1", s.Stopped)
	}
}

func TestGRPOTrajectory(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("T", 0, 1) // trajectory 1 fails turn 0, so its last checkpoint fails too
	env.failSamples("T", 1, 2)
	env.set("T", 0, 3, fakeOutcome{calls: hallucinated})
	r := runGRPO(t, env, "T", 2, GRPOConfig{G: 4, Eps: 1e-6, Level: LevelTrajectory})
	if len(r.Groups) != 1 || r.Level != LevelTrajectory {
		t.Fatalf("%d groups, level %q; want 1 trajectory group", len(r.Groups), r.Level)
	}
	g := r.Groups[0]
	if g.ID != "T/trajectory" || g.Level != LevelTrajectory || g.Continued != -1 || !g.NonZero {
		t.Errorf("group %q level %q continued %d nonzero %v", g.ID, g.Level, g.Continued, g.NonZero)
	}
	if diff := cmp.Diff([]float64{1, 0, 0, 1}, rewards(g)); diff != "" {
		t.Errorf("trajectory rewards (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float64{a4, -a4, -a4, a4}, advantages(g), approx); diff != "" {
		t.Errorf("trajectory advantages (-want +got):\n%s", diff)
	}
	// Broadcast to both turns; candidate 3's masked turn 0 loses its credit.
	want := [][]float64{{a4, a4}, {-a4, -a4}, {-a4, -a4}, {0, a4}}
	for i, c := range g.Candidates {
		got := []float64{c.Turns[0].Advantage, c.Turns[1].Advantage}
		if diff := cmp.Diff(want[i], got, approx); diff != "" {
			t.Errorf("candidate %d turn advantages (-want +got):\n%s", i, diff)
		}
		if c.Result != c.Turns[1].Result || contents(c.Turns[1].Result.Prompt)[0] != fmt.Sprintf("done t0 s%d", i) {
			t.Errorf("candidate %d: result is not its own last turn", i)
		}
	}
	if c := g.Candidates[3]; !c.Masked || !c.Turns[0].Masked || c.Turns[1].Masked {
		t.Errorf("candidate 3 masks: %v, %v, %v", c.Masked, c.Turns[0].Masked, c.Turns[1].Masked)
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4}, env.forkOpen); diff != "" {
		t.Errorf("open episodes at each fork (-want +got):\n%s", diff)
	}
	segs := r.Segments()
	if len(segs) != 8 {
		t.Fatalf("%d segments, want 8", len(segs))
	}
	for i, s := range segs {
		c, turn := i/2, i%2
		if s.GroupID != "T/trajectory" || s.Turn != turn || s.Reward != g.Candidates[c].Reward || s.Advantage != want[c][turn] && math.Abs(s.Advantage-want[c][turn]) > 1e-12 {
			t.Errorf("segment %d: %+v", i, s)
		}
	}
	sum := SummarizeGRPO([]*GRPOResult{r})
	if sum.Groups != 1 || sum.NonZero != 1 || sum.Segments != 8 || sum.Masked != 1 {
		t.Errorf("summary %+v", sum)
	}
	recs := r.VerlRecords(VerlOptions{})
	if len(recs) != 1 || recs[0].ExtraInfo.GroupID != "T/trajectory" || len(recs[0].Prompt) != 2 {
		t.Errorf("verl records %+v", recs)
	}
}

// G = 16 candidates run concurrently (the barrier holds each until all 16
// have started); results are in candidate order and equal to a run with
// at most 4 at once.
func TestGRPOConcurrentForks(t *testing.T) {
	setup := func() *fakeEnv {
		env := newFakeEnv()
		for s := uint64(1); s < 16; s += 2 {
			env.failSamples("C", 0, s)
		}
		return env
	}
	env := setup()
	env.barrier = 16
	r := runGRPO(t, env, "C", 2, GRPOConfig{G: 16})
	if env.maxInflight != 16 {
		t.Errorf("max concurrent turns %d, want 16", env.maxInflight)
	}
	g := r.Groups[0]
	for i, c := range g.Candidates {
		wantR, wantA := 1.0, 0.5/(0.5+DefaultEps)
		if i%2 == 1 {
			wantR, wantA = 0, -wantA
		}
		if c.Sample != uint64(i) || c.Reward != wantR || math.Abs(c.Advantage-wantA) > 1e-12 ||
			contents(c.Result.Completion)[0] != fmt.Sprintf("done t0 s%d", i) {
			t.Errorf("candidate %d: sample %d reward %g advantage %g completion %v", i, c.Sample, c.Reward, c.Advantage, contents(c.Result.Completion))
		}
	}
	if env.forkCalls != 32 {
		t.Errorf("%d forks, want 32", env.forkCalls)
	}

	env4 := setup()
	r4 := runGRPO(t, env4, "C", 2, GRPOConfig{G: 16, Concurrency: 4})
	if env4.maxInflight > 4 {
		t.Errorf("concurrency 4: %d turns at once", env4.maxInflight)
	}
	if diff := cmp.Diff(r.Segments(), r4.Segments()); diff != "" {
		t.Errorf("concurrency 16 vs 4 segments (-16 +4):\n%s", diff)
	}

	envT := setup()
	envT.barrier = 16
	rt := runGRPO(t, envT, "C", 2, GRPOConfig{G: 16, Level: LevelTrajectory})
	if envT.maxInflight != 16 || len(rt.Segments()) != 32 {
		t.Errorf("trajectory: max concurrent %d, %d segments; want 16, 32", envT.maxInflight, len(rt.Segments()))
	}
}

func TestGRPOErrorsCloseEveryEpisode(t *testing.T) {
	cases := map[string]struct {
		setup func(*fakeEnv)
		cfg   GRPOConfig
		msg   string
	}{
		"candidate turn":  {func(e *fakeEnv) { e.set("E", 1, 2, fakeOutcome{err: errInfra}) }, GRPOConfig{G: 4}, "task E turn 1 candidate 2"},
		"reference turn":  {func(e *fakeEnv) { e.setRef("E", 1, fakeOutcome{err: errInfra}) }, GRPOConfig{G: 4, Continue: ContinueReference}, "task E turn 1: reference"},
		"fork":            {func(e *fakeEnv) { e.forkErrAt = 7 }, GRPOConfig{G: 4}, "task E turn 1: fork"},
		"trajectory":      {func(e *fakeEnv) { e.set("E", 2, 1, fakeOutcome{err: errInfra}) }, GRPOConfig{G: 4, Level: LevelTrajectory}, "task E turn 2 candidate 1"},
		"trajectory fork": {func(e *fakeEnv) { e.forkErrAt = 3 }, GRPOConfig{G: 4, Level: LevelTrajectory}, "task E turn 0: fork"},
	}
	for name, tc := range cases {
		env := newFakeEnv()
		tc.setup(env)
		r, err := GRPO(context.Background(), env, fakeTask("E", 3), tc.cfg)
		if err == nil || r != nil {
			t.Errorf("%s: got %v, %v; want an error", name, r, err)
			continue
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: error %q does not contain %q", name, err, tc.msg)
		}
		if name != "fork" && name != "trajectory fork" && !errors.Is(err, errInfra) {
			t.Errorf("%s: error %v is not errInfra", name, err)
		}
		if env.openCount() != 0 || env.opened != 1 {
			t.Errorf("%s: open %d, opened %d; want 0, 1", name, env.openCount(), env.opened)
		}
	}
}

func TestGRPOConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg GRPOConfig
		nil bool
	}{
		"G 0":                  {GRPOConfig{}, false},
		"unknown level":        {GRPOConfig{G: 2, Level: "episode"}, false},
		"unknown continuation": {GRPOConfig{G: 2, Continue: "best"}, false},
		"negative concurrency": {GRPOConfig{G: 2, Concurrency: -1}, false},
		"nil task":             {GRPOConfig{G: 2}, true},
	} {
		env := newFakeEnv()
		tk := fakeTask("C", 2)
		if tc.nil {
			tk = nil
		}
		if _, err := GRPO(context.Background(), env, tk, tc.cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
		if env.opened != 0 {
			t.Errorf("%s: opened %d, want 0", name, env.opened)
		}
	}
	if _, err := GRPO(context.Background(), newFakeEnv(), fakeTask("C", 0), GRPOConfig{G: 2}); err == nil {
		t.Error("task without atomic tasks: no error")
	}
}

// G must be at least MinGroupSize (2): a group of one carries no
// preference (core/config checks the same constant). The smallest group
// runs: two candidates, advantages of opposite sign or both 0.
func TestGRPOGroupSizeRule(t *testing.T) {
	for _, g := range []int{-1, 0, 1} {
		_, err := GRPO(context.Background(), newFakeEnv(), fakeTask("O", 2), GRPOConfig{G: g})
		want := fmt.Sprintf("train: GRPO: group size %d < 2 (a group-normalised advantage compares each candidate with the others)", g)
		if err == nil || err.Error() != want {
			t.Errorf("G = %d: error %v, want %q", g, err, want)
		}
	}
	r := runGRPO(t, newFakeEnv(), "O", 2, GRPOConfig{G: MinGroupSize})
	for _, g := range r.Groups {
		if len(g.Candidates) != 2 || g.Candidates[0].Advantage != -g.Candidates[1].Advantage {
			t.Errorf("group %s: %+v", g.ID, g)
		}
	}
}

// For random rewards and masks, run through the driver: with nothing
// masked a group's advantages sum to ~0; masked advantages are <= 0; an
// unmasked candidate's advantage is GroupAdvantages' (atomic turn).
func TestGRPOAdvantageProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		g := rapid.IntRange(MinGroupSize, 8).Draw(rt, "G")
		level := rapid.SampledFrom([]string{LevelAtomicTurn, LevelTrajectory}).Draw(rt, "level")
		rs := rapid.SliceOfN(quarter(), g, g).Draw(rt, "rewards")
		masks := rapid.SliceOfN(rapid.Bool(), g, g).Draw(rt, "masks")
		env := newFakeEnv()
		byContent := map[string]float64{}
		for i := range g {
			for turn := range 2 {
				byContent[fmt.Sprintf("done t%d s%d", turn, i)] = rs[i]
			}
			if masks[i] {
				env.set("P", 0, uint64(i), fakeOutcome{calls: hallucinated})
			}
		}
		reward := func(res *TurnResult) float64 {
			c := contents(res.Completion)
			return byContent[c[len(c)-1]]
		}
		r, err := GRPO(context.Background(), env, fakeTask("P", 2), GRPOConfig{G: g, Level: level, Reward: reward, Continue: ContinueReference})
		if err != nil {
			rt.Fatal(err)
		}
		if env.openCount() != 0 {
			rt.Fatalf("open %d", env.openCount())
		}
		want := GroupAdvantages(rs, 0)
		anyMask := false
		for _, m := range masks {
			anyMask = anyMask || m
		}
		segs := r.Segments()
		if len(segs) != 2*g {
			rt.Fatalf("%d segments, want %d", len(segs), 2*g)
		}
		for _, grp := range r.Groups {
			var sum float64
			for i, c := range grp.Candidates {
				sum += c.Advantage
				if c.Reward != rs[i] {
					rt.Fatalf("%s candidate %d reward %g, want %g", grp.ID, i, c.Reward, rs[i])
				}
				if grp.Level == LevelAtomicTurn && grp.Turn == 0 && c.Masked != masks[i] {
					rt.Fatalf("%s candidate %d masked %v, want %v", grp.ID, i, c.Masked, masks[i])
				}
				if !c.Masked && math.Abs(c.Advantage-want[i]) > 1e-12 {
					rt.Fatalf("%s candidate %d advantage %g, want %g", grp.ID, i, c.Advantage, want[i])
				}
			}
			if !anyMask && math.Abs(sum) > 1e-9 {
				rt.Fatalf("%s: advantages sum to %g with nothing masked", grp.ID, sum)
			}
		}
		for _, s := range segs {
			if s.Masked && s.Advantage > 0 {
				rt.Fatalf("masked segment with advantage %g: %+v", s.Advantage, s)
			}
		}
	})
}

// OnGroup sees every group as it completes, in turn order, equal to the
// result's groups, at both levels.
func TestGRPOOnGroup(t *testing.T) {
	for _, tc := range []struct {
		name  string
		level string
		want  int // groups
	}{
		{"atomic turn", LevelAtomicTurn, 3},
		{"trajectory", LevelTrajectory, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newFakeEnv()
			env.failSamples("O", 1)
			var seen []Group
			var turnsAtCall []int
			r := runGRPO(t, env, "O", 3, GRPOConfig{G: 2, Level: tc.level, OnGroup: func(g Group) {
				seen = append(seen, g)
				turnsAtCall = append(turnsAtCall, g.Turn)
			}})
			if len(r.Groups) != tc.want {
				t.Fatalf("%d groups, want %d", len(r.Groups), tc.want)
			}
			if diff := cmp.Diff(r.Groups, seen); diff != "" {
				t.Errorf("OnGroup groups differ from the result's (-result +seen):\n%s", diff)
			}
			for i, turn := range turnsAtCall {
				if turn != r.Groups[i].Turn {
					t.Errorf("call %d saw turn %d, want %d", i, turn, r.Groups[i].Turn)
				}
			}
		})
	}
}
