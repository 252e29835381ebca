package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
)

// configs/evolve.hcl with one benchmark server and one round: the run
// folder holds the summary, metrics.json with two rounds (the revising
// round and the measurement after it), the report's per-round section,
// every revision and task version, and the evolved tasks and server.
func TestRunEvolveConfig(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg, diags := config.Load(filepath.Join(root, "configs", "evolve.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := cfg.Evolve
	if e.Rounds != 3 || e.Budget != 14 || e.BenchmarkServers != 5 || e.Policy != "scripted" || len(e.Classes) != 3 ||
		e.BenchmarkDocs != filepath.Join(root, "examples/data/tau2-airline/tools.json") {
		t.Fatalf("evolve block %+v", e)
	}
	e.Rounds, e.BenchmarkServers = 1, 1
	dir := t.TempDir()
	sum, err := RunEvolve(context.Background(), cfg, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Defects) != 7 || sum.Benchmark == nil || len(sum.Benchmark.Rounds) != 1 {
		t.Fatalf("summary: %d defects, benchmark %+v", len(sum.Defects), sum.Benchmark)
	}
	var m report.Metrics
	b, err := os.ReadFile(filepath.Join(dir, FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Rounds) != 2 || !m.Rounds[0].Revise || m.Rounds[1].Revise || m.Rounds[0].ToolErrorRate == nil || *m.Rounds[0].ToolErrorRate <= *m.Rounds[1].ToolErrorRate {
		t.Fatalf("metrics rounds %+v", m.Rounds)
	}
	applied := 0
	for _, n := range m.Rounds[0].Applied {
		applied += n
	}
	revs, _ := os.ReadFile(filepath.Join(dir, FileRevisions))
	if n := strings.Count(string(revs), "\n"); applied != 7 || n != 7 || m.Rounds[0].Applied[attribute.ClassEnvironment] != 3 {
		t.Errorf("applied %d (%v), %d revision lines", applied, m.Rounds[0].Applied, n)
	}
	html, _ := os.ReadFile(filepath.Join(dir, FileReport))
	for _, s := range []string{`<h2 id="rounds">Self-evolution rounds</h2>`, `<svg id="` + report.ChartRoundsToolErrorRate + `"`, `<svg id="` + report.ChartRoundsPassRate + `"`, "after 1"} {
		if !strings.Contains(string(html), s) {
			t.Errorf("report.html has no %q", s)
		}
	}
	ts, err := task.LoadFile(filepath.Join(dir, FileEvolvedTasks))
	if err != nil {
		t.Fatal(err)
	}
	revised := 0
	for _, x := range ts {
		if x.Version > 0 {
			revised++
		}
	}
	vs, _ := os.ReadFile(filepath.Join(dir, FileTaskVersions))
	if revised != 4 || strings.Count(string(vs), "\n") != 4 {
		t.Errorf("%d revised tasks in %s, %d versions", revised, FileEvolvedTasks, strings.Count(string(vs), "\n"))
	}
	if _, err := os.Stat(filepath.Join(dir, DirEvolvedServers, "tau2-airline_a.json")); err != nil {
		t.Errorf("no evolved server: %v", err)
	}
	bad := *cfg
	bad.Evolve = nil
	if _, err := RunEvolve(context.Background(), &bad, t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "has no evolve block") {
		t.Errorf("no block: %v", err)
	}
}
