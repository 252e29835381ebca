package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
)

// configs/synth-compose-gen.hcl decodes to the composition that
// regenerates examples/data/compose-tau2: no module, tasks, policy,
// rollout, harness or view blocks, the compose stage alone, defaults
// filled in.
func TestShippedComposeConfig(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg, diags := config.Load(filepath.Join(root, "configs", "synth-compose-gen.hcl"), config.LoadOptions{Vars: map[string]string{"tasks": "7"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := &config.Compose{
		Servers: []string{filepath.Join(root, "examples/servers/tau2-retail"), filepath.Join(root, "examples/servers/tau2-airline")},
		Seed:    1, Tasks: 7, Turns: 20, Spread: 0, GenSeeds: 4, Distractors: 2,
		SharedEntities: 8,
		Out:            filepath.Join(root, "examples/data/compose-tau2/tasks.weft.json"),
		Report:         filepath.Join(root, "examples/data/compose-tau2/tasks.report.json"),
	}
	if diff := cmp.Diff(want, cfg.Compose, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Source" }, cmp.Ignore())); diff != "" {
		t.Errorf("compose (-want +got):\n%s", diff)
	}
	if len(cfg.Modules)+len(cfg.Tasks)+len(cfg.Policies)+len(cfg.Harnesses)+len(cfg.Views) != 0 || !cmp.Equal(cfg.Stages, []string{config.StageCompose}) {
		t.Errorf("modules %v tasks %v policies %v harnesses %v views %v stages %v", cfg.Modules, cfg.Tasks, cfg.Policies, cfg.Harnesses, cfg.Views, cfg.Stages)
	}
	three, diags := config.Load(filepath.Join(root, "configs", "synth-compose3-gen.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if c := three.Compose; len(c.Servers) != 3 || c.Servers[2] != filepath.Join(root, "examples/servers/toucan-todoist") || c.Tasks != 20 ||
		c.Report != filepath.Join(root, "examples/data/compose-tau2-toucan/tasks.report.json") {
		t.Errorf("three servers: %+v", c)
	}
}

const composeBase = `
compose {
  servers = ["../../../examples/servers/tau2-retail", "../../../examples/servers/tau2-airline"]
  COMPOSE_EXTRA
}
pipeline {
  stages = ["compose"]
}
`

// Bad compose blocks are refused with the diagnostic at the attribute or
// list element that is wrong, and no config is returned.
func TestComposeBlockErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new  string
		line, col       int
		summary, detail string
	}{
		{"unknown server", `"../../../examples/servers/tau2-airline"`, `"../../../examples/servers/nope"`, 3, 55, "Unknown server", "servers/nope"},
		{"not a spec dir", `"../../../examples/servers/tau2-airline"`, `"../../../examples"`, 3, 55, "Unknown server", "has no server.json"},
		{"duplicate server", `"../../../examples/servers/tau2-airline"`, `"../../../examples/servers/tau2-retail"`, 3, 55, "Duplicate server", "listed twice"},
		{"one server", `, "../../../examples/servers/tau2-airline"`, ``, 3, 13, "Compose needs two servers", "got 1"},
		{"turns too few", `COMPOSE_EXTRA`, `turns = 1`, 4, 11, "Invalid turns", "turns must be at least 2, got 1."},
		{"turns too many", `COMPOSE_EXTRA`, `turns = 500`, 4, 11, "Invalid turns", "turns must be at most 200, got 500."},
		{"spread too wide", `COMPOSE_EXTRA`, "turns = 8\n  spread = 8", 5, 12, "Invalid spread", "less than turns (8), got 8"},
		{"no tasks", `COMPOSE_EXTRA`, `tasks = 0`, 4, 11, "Invalid tasks", "at least 1"},
		{"distractors", `COMPOSE_EXTRA`, `distractors = 17`, 4, 17, "Invalid distractors", "at most 16"},
		{"wrong type", `COMPOSE_EXTRA`, `seed = "one"`, 4, 10, "", "number"},
		{"other stages", `stages = ["compose"]`, `stages = ["compose", "report"]`, 7, 12, "Compose pipeline", `stages = ["compose"]`},
		{"unknown attribute", `COMPOSE_EXTRA`, `servres = []`, 4, 3, "Unsupported argument", "servres"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(strings.Replace(composeBase, tc.old, tc.new, 1), "COMPOSE_EXTRA", "", 1)
			cfg, diags := parse(t, src, nil)
			if !diags.HasErrors() {
				t.Fatalf("no error; cfg %+v", cfg.Compose)
			}
			if cfg != nil {
				t.Errorf("config returned despite errors")
			}
			d := diags[0]
			if tc.summary != "" && d.Summary != tc.summary || !strings.Contains(d.Detail, tc.detail) || d.Subject.Start.Line != tc.line || d.Subject.Start.Column != tc.col {
				t.Errorf("got %s:%d:%d %q %q", d.Subject.Filename, d.Subject.Start.Line, d.Subject.Start.Column, d.Summary, d.Detail)
			}
		})
	}
	cfg, diags := parse(t, strings.Replace(composeBase, "COMPOSE_EXTRA", "", 1), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	c := cfg.Compose
	if c.Tasks != 100 || c.Turns != 20 || c.GenSeeds != 6 || c.Distractors != 2 || c.Seed != 1 || len(c.Servers) != 2 ||
		c.Out != filepath.Join(cfg.Output.Dir, "tasks.weft.json") || c.Report != filepath.Join(cfg.Output.Dir, "tasks.report.json") {
		t.Errorf("defaults: %+v", c)
	}
}
