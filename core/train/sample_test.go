package train

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// turnAttempts returns the attempts of each turn of r.
func turnAttempts(r *SampleResult) []int {
	out := make([]int, len(r.Turns))
	for i, ts := range r.Turns {
		out[i] = ts.Attempts
	}
	return out
}

func TestRejectionSamplePrefixAccepted(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("A", 1, 0, 1)
	r, err := RejectionSample(context.Background(), env, fakeTask("A", 3), SamplingConfig{Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Accepted || r.Mode != ModePrefix || r.TaskID != "A" {
		t.Errorf("Accepted %v, Mode %q, TaskID %q; want true, prefix, A", r.Accepted, r.Mode, r.TaskID)
	}
	if diff := cmp.Diff([]int{1, 3, 1}, turnAttempts(r)); diff != "" {
		t.Errorf("attempts per turn (-want +got):\n%s", diff)
	}
	if r.Attempts != 5 || r.KeptTurns != 3 {
		t.Errorf("Attempts %d, KeptTurns %d; want 5, 3", r.Attempts, r.KeptTurns)
	}
	wantRewards := [][]float64{{1}, {0, 0, 1}, {1}}
	for i, ts := range r.Turns {
		if diff := cmp.Diff(wantRewards[i], ts.Rewards); diff != "" {
			t.Errorf("turn %d rewards (-want +got):\n%s", i, diff)
		}
		if ts.Turn != i || ts.Atomic != []string{"a0", "a1", "a2"}[i] || !ts.Accepted || ts.Kept == nil {
			t.Errorf("turn %d: %+v", i, ts)
		}
	}
	// Only the successful attempt of turn 1 is in the kept conversation.
	if diff := cmp.Diff([]string{"done t0 s0", "done t1 s2", "done t2 s0"}, contents(r.Messages)); diff != "" {
		t.Errorf("kept messages (-want +got):\n%s", diff)
	}
	// The kept attempt of turn 1 continued the verified prefix, not a failed attempt.
	if diff := cmp.Diff([]string{"done t0 s0"}, contents(r.Turns[1].Kept.Prompt)); diff != "" {
		t.Errorf("turn 1 kept prompt (-want +got):\n%s", diff)
	}
	// Snapshots: s2 before turn 0, s3 before turn 1, s4 before turn 2; turn 1's
	// retries restore s3.
	if diff := cmp.Diff([]string{"e1:s2@0", "e1:s3@1", "e1:s4@2"}, env.snapshots); diff != "" {
		t.Errorf("snapshots (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"e1:s3", "e1:s3"}, env.restores); diff != "" {
		t.Errorf("restores (-want +got):\n%s", diff)
	}
	wantStats := SamplingStats{Turns: 3, Accepted: 3, Attempts: 5}
	if diff := cmp.Diff(wantStats, r.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	rec, ok := r.SFT()
	if !ok || len(rec.Messages) != len(r.Messages) || len(rec.Tools) != 2 || rec.Tools[0].Function.Name != "get_order" || rec.Tools[0].Type != "function" {
		t.Errorf("SFT: ok %v, %d messages (want %d), tools %+v", ok, len(rec.Messages), len(r.Messages), rec.Tools)
	}
	if rec.Messages[0].Role != "system" || len(rec.Messages) != 1+3*4 {
		t.Errorf("SFT messages: first role %q, len %d; want system, 13", rec.Messages[0].Role, len(rec.Messages))
	}
	if env.openCount() != 0 || env.opened != 1 {
		t.Errorf("open %d, opened %d; want 0, 1", env.openCount(), env.opened)
	}
}

func TestRejectionSamplePrefixRejected(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("A", 1, 0, 1)
	r, err := RejectionSample(context.Background(), env, fakeTask("A", 3), SamplingConfig{Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted || r.KeptTurns != 1 || r.Attempts != 3 {
		t.Errorf("Accepted %v, KeptTurns %d, Attempts %d; want false, 1, 3", r.Accepted, r.KeptTurns, r.Attempts)
	}
	if diff := cmp.Diff([]int{1, 2}, turnAttempts(r)); diff != "" {
		t.Errorf("attempts per turn (-want +got):\n%s", diff)
	}
	if r.Turns[1].Accepted || r.Turns[1].Kept != nil {
		t.Errorf("turn 1: %+v", r.Turns[1])
	}
	// The verified prefix: system, turn 0's user, call, tool result, answer.
	if diff := cmp.Diff([]string{"done t0 s0"}, contents(r.Messages)); diff != "" {
		t.Errorf("kept prefix (-want +got):\n%s", diff)
	}
	if len(r.Messages) != 5 {
		t.Errorf("kept prefix has %d messages, want 5", len(r.Messages))
	}
	if _, ok := r.SFT(); !ok {
		t.Error("SFT of a verified prefix: not ok")
	}
	if diff := cmp.Diff(SamplingStats{Turns: 2, Accepted: 1, Attempts: 3}, r.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"e1:s3"}, env.restores); diff != "" {
		t.Errorf("restores (-want +got):\n%s", diff)
	}
}

func TestRejectionSamplePrefixNothingKept(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("Z", 0, 0)
	r, err := RejectionSample(context.Background(), env, fakeTask("Z", 2), SamplingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted || r.KeptTurns != 0 || r.Attempts != 1 || r.Messages != nil || len(r.Turns) != 1 {
		t.Errorf("got %+v; want rejected at turn 0 after 1 attempt, nothing kept", r)
	}
	if rec, ok := r.SFT(); ok {
		t.Errorf("SFT = %+v, true; want false", rec)
	}
	if r.Tools != nil {
		t.Errorf("Tools %v, want nil (no kept turn)", r.Tools)
	}
}

func TestRejectionSampleEndToEnd(t *testing.T) {
	env := newFakeEnv()
	env.failSamples("A", 1, 0, 1)
	r, err := RejectionSample(context.Background(), env, fakeTask("A", 3), SamplingConfig{Mode: ModeEndToEnd, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Accepted || r.Attempts != 9 || r.KeptTurns != 3 {
		t.Errorf("Accepted %v, Attempts %d, KeptTurns %d; want true, 9, 3", r.Accepted, r.Attempts, r.KeptTurns)
	}
	if diff := cmp.Diff([]int{3, 3, 3}, turnAttempts(r)); diff != "" {
		t.Errorf("attempts per turn (-want +got):\n%s", diff)
	}
	// Trajectory attempts 0 and 1 fail at turn 1; turn 2 then fails its
	// cumulative checkpoint too.
	want := [][]float64{{1, 1, 1}, {0, 0, 1}, {0, 0, 1}}
	for i, ts := range r.Turns {
		if diff := cmp.Diff(want[i], ts.Rewards); diff != "" {
			t.Errorf("turn %d rewards (-want +got):\n%s", i, diff)
		}
	}
	if diff := cmp.Diff([]string{"done t0 s2", "done t1 s2", "done t2 s2"}, contents(r.Messages)); diff != "" {
		t.Errorf("kept trajectory (-want +got):\n%s", diff)
	}
	// One snapshot after Open; both retries restore it.
	if diff := cmp.Diff([]string{"e1:s2", "e1:s2"}, env.restores); diff != "" {
		t.Errorf("restores (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(SamplingStats{Turns: 3, Accepted: 3, Attempts: 9}, r.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}

	env = newFakeEnv()
	env.failSamples("A", 1, 0, 1)
	r, err = RejectionSample(context.Background(), env, fakeTask("A", 3), SamplingConfig{Mode: ModeEndToEnd, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted || r.Attempts != 6 || r.KeptTurns != 0 || r.Messages != nil {
		t.Errorf("retries 1: Accepted %v, Attempts %d, KeptTurns %d, %d messages; want false, 6, 0, none", r.Accepted, r.Attempts, r.KeptTurns, len(r.Messages))
	}
	if _, ok := r.SFT(); ok {
		t.Error("SFT of a rejected end-to-end result: ok")
	}
	if env.openCount() != 0 {
		t.Errorf("open %d, want 0", env.openCount())
	}
}

// At the same budget (k = 2), prefix-preserving sampling keeps more: task
// A fails turn 1 with samples 0 and 1; task B fails turn 0 with sample 0
// and turn 2 with samples 1 and 2, so no single sample passes every turn.
func TestRejectionSamplePrefixVersusEndToEnd(t *testing.T) {
	run := func(mode string) SamplingSummary {
		env := newFakeEnv()
		env.failSamples("A", 1, 0, 1)
		env.failSamples("B", 0, 0)
		env.failSamples("B", 2, 1, 2)
		var rs []*SampleResult
		for _, id := range []string{"A", "B"} {
			r, err := RejectionSample(context.Background(), env, fakeTask(id, 3), SamplingConfig{Mode: mode, Retries: 2})
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
		}
		if env.openCount() != 0 {
			t.Errorf("%s: open %d, want 0", mode, env.openCount())
		}
		return SummarizeSampling(append(rs, nil))
	}
	prefix := run(ModePrefix)
	wantPrefix := SamplingSummary{Tasks: 2, Accepted: 2, WithData: 2, Turns: 6, KeptTurns: 6, Attempts: 9, Resampled: 2,
		Stats: SamplingStats{Turns: 6, Accepted: 6, Attempts: 9}}
	if diff := cmp.Diff(wantPrefix, prefix); diff != "" {
		t.Errorf("prefix (-want +got):\n%s", diff)
	}
	e2e := run(ModeEndToEnd)
	wantE2E := SamplingSummary{Tasks: 2, Accepted: 1, WithData: 1, Turns: 6, KeptTurns: 3, Attempts: 18, Resampled: 6,
		Stats: SamplingStats{Turns: 6, Accepted: 3, Attempts: 18}}
	if diff := cmp.Diff(wantE2E, e2e); diff != "" {
		t.Errorf("end to end (-want +got):\n%s", diff)
	}
	if prefix.AcceptanceRate() != 1 || e2e.AcceptanceRate() != 0.5 {
		t.Errorf("acceptance: prefix %g, e2e %g; want 1, 0.5", prefix.AcceptanceRate(), e2e.AcceptanceRate())
	}
	if prefix.KeptTurnRate() != 6.0/9 || e2e.KeptTurnRate() != 3.0/18 {
		t.Errorf("kept-turn rate: prefix %g, e2e %g; want 6/9, 3/18", prefix.KeptTurnRate(), e2e.KeptTurnRate())
	}
	var zero SamplingSummary
	if zero.AcceptanceRate() != 0 || zero.KeptTurnRate() != 0 {
		t.Error("zero summary rates not 0")
	}
}

// A verified attempt with a hallucinated tool call is rejected.
func TestRejectionSampleDetectors(t *testing.T) {
	setup := func() *fakeEnv {
		env := newFakeEnv()
		env.set("D", 0, 0, fakeOutcome{calls: hallucinated})
		return env
	}
	r, err := RejectionSample(context.Background(), setup(), fakeTask("D", 2), SamplingConfig{Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := r.Turns[0]
	if ts.Attempts != 2 || ts.Rewards[0] != 1 || !ts.Accepted {
		t.Errorf("turn 0: %d attempts, rewards %v, accepted %v; want 2, [1 1], true", ts.Attempts, ts.Rewards, ts.Accepted)
	}
	if diff := cmp.Diff([][]string{{"hallucinated_tool"}, nil}, ts.Patterns); diff != "" {
		t.Errorf("patterns (-want +got):\n%s", diff)
	}
	if got := contents(r.Messages); !r.Accepted || got[0] != "done t0 s1" {
		t.Errorf("accepted %v, kept %v; want turn 0 sample 1 kept", r.Accepted, got)
	}
	want := SamplingStats{Turns: 2, Accepted: 2, Attempts: 3, Masked: 1, Patterns: map[string]int{"hallucinated_tool": 1}}
	if diff := cmp.Diff(want, r.Stats); diff != "" {
		t.Errorf("stats (-want +got):\n%s", diff)
	}

	// Without a retry the turn is rejected though verified.
	r, err = RejectionSample(context.Background(), setup(), fakeTask("D", 2), SamplingConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Accepted || r.KeptTurns != 0 {
		t.Errorf("retries 0: accepted %v, kept %d; want false, 0", r.Accepted, r.KeptTurns)
	}
	// An empty detector list accepts it.
	r, err = RejectionSample(context.Background(), setup(), fakeTask("D", 2), SamplingConfig{Detectors: []Detector{}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Accepted || r.Attempts != 2 || r.Turns[0].Patterns[0] != nil {
		t.Errorf("no detectors: accepted %v, attempts %d, patterns %v; want true, 2, none", r.Accepted, r.Attempts, r.Turns[0].Patterns)
	}
	// End to end: the masked turn sinks trajectory 0; trajectory 1 is kept.
	r, err = RejectionSample(context.Background(), setup(), fakeTask("D", 2), SamplingConfig{Mode: ModeEndToEnd, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Accepted || r.Attempts != 4 || contents(r.Messages)[0] != "done t0 s1" {
		t.Errorf("e2e: accepted %v, attempts %d, kept %v", r.Accepted, r.Attempts, contents(r.Messages))
	}
}

func TestRejectionSampleInfraError(t *testing.T) {
	for _, mode := range []string{ModePrefix, ModeEndToEnd} {
		env := newFakeEnv()
		env.failSamples("E", 1, 0)
		env.set("E", 1, 1, fakeOutcome{err: errInfra})
		r, err := RejectionSample(context.Background(), env, fakeTask("E", 3), SamplingConfig{Mode: mode, Retries: 3})
		if !errors.Is(err, errInfra) || r != nil {
			t.Fatalf("%s: got %v, %v; want nil and errInfra", mode, r, err)
		}
		if !strings.Contains(err.Error(), "task E turn 1 attempt 1") {
			t.Errorf("%s: error %q does not name the task, turn and attempt", mode, err)
		}
		if env.openCount() != 0 {
			t.Errorf("%s: open %d, want 0", mode, env.openCount())
		}
	}
}

func TestRejectionSampleConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg SamplingConfig
		n   int
		nil bool
	}{
		"unknown mode":      {SamplingConfig{Mode: "greedy"}, 2, false},
		"negative retries":  {SamplingConfig{Retries: -1}, 2, false},
		"threshold above 1": {SamplingConfig{Threshold: 1.5}, 2, false},
		"negative thresh":   {SamplingConfig{Threshold: -0.1}, 2, false},
		"no atomic tasks":   {SamplingConfig{}, 0, false},
		"nil task":          {SamplingConfig{}, 1, true},
	} {
		env := newFakeEnv()
		tk := fakeTask("C", tc.n)
		if tc.nil {
			tk = nil
		}
		if _, err := RejectionSample(context.Background(), env, tk, tc.cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
		if env.opened != 0 {
			t.Errorf("%s: opened %d episodes, want 0", name, env.opened)
		}
	}
}
