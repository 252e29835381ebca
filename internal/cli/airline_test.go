package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestRunTau2Airline runs configs/tau2-airline.hcl as shipped: all 50
// tau2 airline tasks, the scripted policy without faults replaying each
// task's gold actions on the airline domain in the synthesized-server
// format (examples/servers/tau2-airline, a server bundle on the shared
// interpreter module, served by MegaMCP). Every task scores R = 1 and
// every one of the 142 gold calls succeeds (tau2's own replay of them has
// no error). End-to-end volume test: run without -race.
func TestRunTau2Airline(t *testing.T) {
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
	dir := filepath.Join(t.TempDir(), "run")
	cfg := filepath.Join(megamcptest.Root(), "configs/tau2-airline.hcl")
	code, stdout, stderr := weftRun(t, context.Background(), regDir, cfg, "--out", dir, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	for key, want := range map[string]float64{
		"episodes": 50, "scored_episodes": 50, "passed": 50, "pass_rate": 1, "mean_score": 1,
		"infra_failures": 0, "tool_calls": 142, "tool_errors": 0,
	} {
		if got := num(t, m, key); got != want {
			t.Errorf("metrics %s = %v, want %v", key, got, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	var tasks []string
	dec := json.NewDecoder(bytes.NewReader(b))
	for dec.More() {
		var ep struct {
			Task  string  `json:"task"`
			Score float64 `json:"score"`
			Pass  bool    `json:"pass"`
		}
		if err := dec.Decode(&ep); err != nil {
			t.Fatal(err)
		}
		if ep.Score != 1 || !ep.Pass {
			t.Errorf("task %s: score %v pass %v, want R = 1", ep.Task, ep.Score, ep.Pass)
		}
		tasks = append(tasks, ep.Task)
	}
	sort.Strings(tasks)
	if len(tasks) != 50 {
		t.Fatalf("%d episodes, want one per task (50): %v", len(tasks), tasks)
	}
	for i := 1; i < len(tasks); i++ {
		if tasks[i] == tasks[i-1] {
			t.Errorf("task %s has two episodes", tasks[i])
		}
	}
}
