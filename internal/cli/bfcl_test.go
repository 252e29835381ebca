package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRunBFCLMultiturn runs configs/bfcl-multiturn.hcl on its first 10
// tasks (the BFCL module compiled from examples/modules/bfcl, each task
// started from its own imported initial_state): 60 episodes, both views
// by all three harnesses, the scripted policy following the ground truth,
// every episode R = 1 with every checkpoint passed and no tool error.
// The whole file (600 episodes) is the command in docs/bfcl.md.
func TestRunBFCLMultiturn(t *testing.T) {
	skipUnderRace(t)
	regDir := t.TempDir()
	dir := filepath.Join(t.TempDir(), "run")
	cfg := filepath.Join(megamcptest.Root(), "configs/bfcl-multiturn.hcl")
	code, stdout, stderr := weftRun(t, context.Background(), regDir, cfg, "--out", dir, "--json", "--var", "task_limit=10")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	for key, want := range map[string]float64{
		"episodes": 60, "scored_episodes": 60, "passed": 60, "pass_rate": 1, "mean_score": 1,
		"infra_failures": 0, "tool_errors": 0,
	} {
		if got := num(t, m, key); got != want {
			t.Errorf("metrics %s = %v, want %v", key, got, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	pairs := map[string]int{}
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var ep struct {
			Task, View, Harness string
			Score               float64
			Checkpoints         []struct {
				Name  string
				Score float64
			}
		}
		if err := dec.Decode(&ep); err != nil {
			t.Fatal(err)
		}
		pairs[ep.View+"/"+ep.Harness]++
		if ep.Score != 1 || len(ep.Checkpoints) < 2 {
			t.Errorf("%s %s/%s: score %v, %d checkpoints", ep.Task, ep.View, ep.Harness, ep.Score, len(ep.Checkpoints))
		}
		for _, c := range ep.Checkpoints {
			if c.Score != 1 {
				t.Errorf("%s %s/%s: checkpoint %s scored %v", ep.Task, ep.View, ep.Harness, c.Name, c.Score)
			}
		}
	}
	if len(pairs) != 6 {
		t.Errorf("view/harness pairs %v, want 6 with 10 episodes each", pairs)
	}
	for p, n := range pairs {
		if n != 10 {
			t.Errorf("%s: %d episodes, want 10", p, n)
		}
	}
}
