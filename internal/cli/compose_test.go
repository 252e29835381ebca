package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

type composeEpisode struct {
	Task, View, Harness string
	Score               float64
	Pass                bool
	Checkpoints         []struct {
		Name  string
		Score float64
	}
	Attributions []struct {
		Checkpoint string
		Class      string
	}
	Faults []struct {
		Kind, Atomic, Tool string
		Step               int
	}
}

func composeEpisodes(t *testing.T, dir string) []composeEpisode {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	var out []composeEpisode
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var ep composeEpisode
		if err := dec.Decode(&ep); err != nil {
			t.Fatal(err)
		}
		out = append(out, ep)
	}
	return out
}

// TestRunSynthCompose runs configs/synth-compose.hcl on its first 3
// composed tasks (tau2 retail + airline in one namespaced group, each task
// from its own initial_state), both views by three harnesses, as `make
// compose-run` runs all of them: the gold replay scores R = 1 on all 18
// episodes with every checkpoint passed and no planted fault; with planted
// faults (faults_scale = 1, as make compose-run) the episodes record their faults, some fail,
// and pipeline.CheckComposeRuns finds every episode's failed checkpoints
// as its faults predict, each blamed on the policy, with SFT records and
// GRPO groups of non-zero advantage.
func TestRunSynthCompose(t *testing.T) {
	skipUnderRace(t)
	regDir := t.TempDir()
	reg, err := module.OpenRegistry(regDir)
	if err != nil {
		t.Fatal(err)
	}
	id, err := reg.PutTar(megamcptest.Interpreter(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Tag(module.InterpreterName, "latest", id); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(megamcptest.Root(), "configs/synth-compose.hcl")
	gold := filepath.Join(t.TempDir(), "gold")
	code, stdout, stderr := weftRun(t, context.Background(), regDir, cfg, "--out", gold, "--json", "--var", "task_limit=3")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	for key, want := range map[string]float64{"episodes": 18, "scored_episodes": 18, "passed": 18, "pass_rate": 1, "infra_failures": 0} {
		if got := num(t, m, key); got != want {
			t.Errorf("gold metrics %s = %v, want %v", key, got, want)
		}
	}
	faults := filepath.Join(t.TempDir(), "faults")
	code, stdout, stderr = weftRun(t, context.Background(), regDir, cfg, "--out", faults, "--json", "--var", "task_limit=3", "--var", "faults_scale=1")
	if code != ExitOK {
		t.Fatalf("faults: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	c, err := pipeline.CheckComposeRuns(gold, faults)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Problems {
		t.Error(p)
	}
	g, f := c.Gold, c.Faults
	if g.Episodes != 18 || g.R1 != 18 || g.Faults != 0 || g.Exact != 18 {
		t.Errorf("gold %+v, want 18 episodes at R = 1, no faults", g)
	}
	if f.Episodes != 18 || f.WithFaults == 0 || f.Failed == 0 || f.Matched != 18 || f.Attributions["policy"] != f.FailedCheckpoints {
		t.Errorf("faults %+v, want 18 episodes, some with faults and failing, all matched, every failed checkpoint blamed on the policy", f)
	}
	// The recorded faults are the plan's: each names a script step of its
	// atomic task.
	for _, ep := range composeEpisodes(t, faults) {
		for _, pf := range ep.Faults {
			// Only a call invented before a Say (hallucinated_tool) or an
			// early stop there hits no atomic task's step.
			if pf.Kind == "" || pf.Atomic == "" && pf.Kind != "hallucinated_tool" && pf.Kind != "early_stop" {
				t.Errorf("%s %s/%s: fault %+v without kind or atomic task", ep.Task, ep.View, ep.Harness, pf)
			}
		}
	}
	t.Logf("faults: %d planted in %d of 18 episodes (%v), %d failed, %d exact; SFT %v, GRPO %d/%d groups non-zero",
		f.Faults, f.WithFaults, f.ByClass, f.Failed, f.Exact, c.SFTRecords, c.GRPONonZero, c.GRPOGroups)
}
