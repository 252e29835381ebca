package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
)

// configs/ftrl.hcl decodes to the FTRL run docs/ftrl.md describes: no
// module, tasks, harness or view blocks, the ftrl stage alone.
func TestShippedFTRLConfig(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg, diags := config.Load(filepath.Join(root, "configs", "ftrl.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := &config.FTRL{
		RetailSeed: filepath.Join(root, "examples/servers/tau2-retail/seed.json"), AirlineSeed: filepath.Join(root, "examples/servers/tau2-airline/seed.json"),
		Scenarios: 32, Seed: 1, Mode: "compatible", GroupSize: 16, Policy: "scripted", GroupPolicy: "candidates", MaxTurns: 20,
		EmptyReply: 0.03, GroupEmptyReply: 0.1, ParallelCalls: 0.5, ServerDirs: true,
	}
	if diff := cmp.Diff(want, cfg.FTRL, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Source" }, cmp.Ignore())); diff != "" {
		t.Errorf("ftrl (-want +got):\n%s", diff)
	}
	if len(cfg.Modules)+len(cfg.Tasks)+len(cfg.Harnesses)+len(cfg.Views) != 0 || !cmp.Equal(cfg.Stages, []string{config.StageFTRL}) || cfg.Output.Dir != filepath.Join(root, "runs", "ftrl") {
		t.Errorf("modules %v tasks %v harnesses %v views %v stages %v out %s", cfg.Modules, cfg.Tasks, cfg.Harnesses, cfg.Views, cfg.Stages, cfg.Output.Dir)
	}
	if f := cfg.Policies[1].Scripted.Faults; f.EarlyStop != 0.15 || f.MalformedCall != 0.15 {
		t.Errorf("candidate faults %+v", f)
	}
}

const ftrlBase = `
policy "p" {
  scripted {}
}
policy "e" {
  endpoint {
    base_url = "http://127.0.0.1:1/v1"
    model    = "m"
  }
}
rollout {
  policy = "p"
}
ftrl {
  retail_seed = "tasks.weft.json"
  FTRL_EXTRA
}
pipeline {
  stages = ["ftrl"]
}
`

func TestFTRLBlockErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new  string
		line, col       int
		summary, detail string
	}{
		{"no database", `retail_seed = "tasks.weft.json"`, ``, 14, 1, "FTRL needs a database", "Set retail_seed and/or airline_seed"},
		{"endpoint group policy", `FTRL_EXTRA`, `group_policy = "e"`, 14, 1, "FTRL runs offline", `Policy "e" is not scripted`},
		{"undeclared group policy", `FTRL_EXTRA`, `group_policy = "x"`, 16, 18, "Undeclared policy", `"x"`},
		{"other stages", `stages = ["ftrl"]`, `stages = ["ftrl", "report"]`, 19, 12, "FTRL pipeline", `stages = ["ftrl"]`},
		{"bad mode", `FTRL_EXTRA`, `mode = "exact"`, 16, 10, "Unknown FTRL mode", `"compatible", "default"`},
		{"bad rate", `FTRL_EXTRA`, `empty_reply = 2`, 16, 17, "Value out of range", "empty_reply must be in [0, 1], got 2."},
		{"missing seed file", `tasks.weft.json`, `nope.json`, 15, 17, "", "nope.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(strings.Replace(ftrlBase, tc.old, tc.new, 1), "FTRL_EXTRA", "", 1)
			cfg, diags := parse(t, src, nil)
			if !diags.HasErrors() {
				t.Fatalf("no error; cfg %+v", cfg.FTRL)
			}
			d := diags[0]
			if tc.summary != "" && d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col {
				t.Errorf("got %s:%d:%d %q %q", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail)
			}
		})
	}
	cfg, diags := parse(t, strings.Replace(ftrlBase, "FTRL_EXTRA", "", 1), nil)
	if diags.HasErrors() || cfg.FTRL == nil || cfg.FTRL.GroupPolicy != "p" || cfg.FTRL.Mode != "compatible" || cfg.FTRL.GroupSize != 16 || cfg.FTRL.AirlineSeed != "" {
		t.Errorf("defaults: %+v %v", cfg.FTRL, diags)
	}
}
