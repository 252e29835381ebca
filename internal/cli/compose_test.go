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

// TestRunSynthCompose runs configs/synth-compose.hcl on its first 2
// composed tasks (tau2 retail + airline in one namespaced group, each task
// from its own initial_state), both views by three harnesses: the gold
// replay scores R = 1 on all 12 episodes with every checkpoint passed;
// with planted faults some episodes fail, each failed checkpoint blamed
// on the policy. The full 100 tasks are `make compose`.
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
	code, stdout, stderr := weftRun(t, context.Background(), regDir, cfg, "--out", gold, "--json", "--var", "task_limit=2")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	for key, want := range map[string]float64{"episodes": 12, "scored_episodes": 12, "passed": 12, "pass_rate": 1, "infra_failures": 0} {
		if got := num(t, m, key); got != want {
			t.Errorf("gold metrics %s = %v, want %v", key, got, want)
		}
	}
	for _, ep := range composeEpisodes(t, gold) {
		for _, c := range ep.Checkpoints {
			if c.Score != 1 {
				t.Errorf("gold %s %s/%s: checkpoint %s scored %v", ep.Task, ep.View, ep.Harness, c.Name, c.Score)
			}
		}
	}
	faults := filepath.Join(t.TempDir(), "faults")
	code, stdout, stderr = weftRun(t, context.Background(), regDir, cfg, "--out", faults, "--json", "--var", "task_limit=2", "--var", "faults_scale=3")
	if code != ExitOK {
		t.Fatalf("faults: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	failed := 0
	for _, ep := range composeEpisodes(t, faults) {
		bad := map[string]bool{}
		for _, c := range ep.Checkpoints {
			if c.Score < 1 {
				bad[c.Name] = true
			}
		}
		if len(bad) > 0 {
			failed++
			if ep.Pass {
				t.Errorf("%s %s/%s passes with failed checkpoints %v", ep.Task, ep.View, ep.Harness, bad)
			}
		}
		for _, a := range ep.Attributions {
			if !bad[a.Checkpoint] || a.Class != "policy" {
				t.Errorf("%s %s/%s: checkpoint %s blamed on %s (failed %v)", ep.Task, ep.View, ep.Harness, a.Checkpoint, a.Class, bad)
			}
		}
	}
	if failed == 0 {
		t.Fatal("no episode failed under planted faults: the faults were not applied or not checked")
	}
	t.Logf("faults: %d of 12 episodes failed", failed)
}
