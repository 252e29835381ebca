package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestTau2ToolsFromManifest: without tau2_tools, the read-only tools are
// the readOnlyHint annotations of the built modules' manifests.
func TestTau2ToolsFromManifest(t *testing.T) {
	reg := megamcptest.Registry(t)
	got, err := Tau2Tools(reg, []string{"retail"})
	if err != nil {
		t.Fatal(err)
	}
	want := task.Tau2Tools{
		"calculate": true, "find_user_id_by_name_zip": true, "find_user_id_by_email": true,
		"get_order_details": true, "get_product_details": true, "get_item_details": true,
		"get_user_details": true, "list_all_product_types": true, "transfer_to_human_agents": true,
		"cancel_pending_order": false, "modify_pending_order_address": false, "modify_pending_order_items": false,
		"modify_pending_order_payment": false, "modify_user_address": false, "return_delivered_order_items": false,
		"exchange_delivered_order_items": false,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retail tools (-want +got):\n%s", diff)
	}
	// Two modules: the union.
	got, err = Tau2Tools(reg, []string{"hello", "fx"})
	if err != nil {
		t.Fatal(err)
	}
	if !got["list_notes"] || got["add_note"] || !got["get"] {
		t.Errorf("hello+fx tools = %v", got)
	}
	// One tool, two hints: an error naming both modules.
	b, _, err := reg.Get("fx")
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.Manifest.Tools {
		if b.Manifest.Tools[i].Name == "get" {
			b.Manifest.Tools[i].Annotations = nil
		}
	}
	b.Manifest.Name = "fx-writes"
	if _, err := reg.Put(b); err != nil {
		t.Fatal(err)
	}
	_, err = Tau2Tools(reg, []string{"fx", "fx-writes"})
	if err == nil || err.Error() != `tool "get": module fx gives readOnlyHint true, module fx-writes false` {
		t.Errorf("conflicting hints: %v", err)
	}
	if _, err := Tau2Tools(reg, []string{"nope"}); err == nil {
		t.Error("unknown module: no error")
	}
}

// TestLoadTaskSetAirline loads tau2's airline tasks through the generic
// path FromConfig uses, the read-only tools from the domain's tools.json:
// nothing in weft knows the airline domain.
func TestLoadTaskSetAirline(t *testing.T) {
	dir := filepath.Join(megamcptest.Root(), "examples/data/tau2-airline")
	ts := config.TaskSet{Name: "tau2-airline", Tau2: filepath.Join(dir, "tasks.json"), Tau2Tools: filepath.Join(dir, "tools.json"),
		Modules: []string{"airline"}, SystemPrompt: filepath.Join(dir, "policy.md")}
	tasks, prompt, err := loadTaskSet(context.Background(), ts, map[string]string{"airline": "airline"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	atomic := 0
	for _, tk := range tasks {
		atomic += len(tk.Atomic)
		if !strings.HasPrefix(tk.Source, "tau2-airline:") || !cmp.Equal(tk.Modules, []string{"airline"}) {
			t.Fatalf("task %s: source %q modules %v", tk.ID, tk.Source, tk.Modules)
		}
	}
	if len(tasks) != 50 || atomic != 66 || !strings.HasPrefix(prompt, "# Airline Agent Policy") {
		t.Errorf("%d tasks, %d atomic tasks, prompt %.30q; want 50, 66, the airline policy", len(tasks), atomic, prompt)
	}
	// The train split only, by id, and a missing tools file.
	ts.IDs = []string{"3", "17"}
	tasks, _, err = loadTaskSet(context.Background(), ts, map[string]string{"airline": "airline"}, nil, nil)
	if err != nil || len(tasks) != 2 || tasks[0].ID != "3" || tasks[1].ID != "17" {
		t.Fatalf("ids: %d tasks, %v", len(tasks), err)
	}
	ts.Tau2Tools = filepath.Join(dir, "no-tools.json")
	if _, _, err := loadTaskSet(context.Background(), ts, map[string]string{"airline": "airline"}, nil, nil); err == nil || !strings.Contains(err.Error(), "no-tools.json") {
		t.Errorf("missing tools file: %v", err)
	}
}

// The sft and grpo blocks' concurrency reach their stage specs.
func TestTrainSpecsConcurrency(t *testing.T) {
	cfg := &config.Config{Rollout: config.Rollout{Concurrency: 8, Seed: 3},
		SFT:  &config.SFT{Policy: "p", Mode: "prefix", Concurrency: 5},
		GRPO: &config.GRPO{Policy: "p", GroupSize: 8, Concurrency: 2, Filter: &train.FilterConfig{MinRollouts: 4}}}
	sft, grpo := trainSpecs(cfg)
	if sft.Concurrency != 5 || sft.Seed != 3 || grpo.Concurrency != 2 || grpo.G != 8 || grpo.Seed != 3 || grpo.Filter.MinRollouts != 4 {
		t.Errorf("sft %+v\ngrpo %+v", sft, grpo)
	}
	if sft, grpo := trainSpecs(&config.Config{}); sft != nil || grpo != nil {
		t.Errorf("no blocks: %v %v", sft, grpo)
	}
}

// grpo.concurrency = 2 (tasks in parallel) gives the same groups,
// advantages and metrics as 1: seeds come from the task, not the schedule.
func TestGRPOConcurrencySameResults(t *testing.T) {
	tasks := retailTasks(t, "16", "30", "5")
	type out struct {
		groups  []string
		metrics report.Metrics
	}
	var runs []out
	for _, conc := range []int{1, 2} {
		spec := testSpec(t, tasks)
		spec.Stages = []string{StageImport, StageGRPO}
		spec.GRPO.Concurrency = conc
		dir := t.TempDir()
		res, err := Run(context.Background(), spec, Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, FileGRPO))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		slices.Sort(lines)
		runs = append(runs, out{lines, res.Metrics})
	}
	if m := runs[0].metrics; len(runs[0].groups) != 3 || m.GRPOGroups < 3 || m.GRPOSegments == 0 {
		t.Fatalf("grpo.jsonl has %d tasks, %d groups, %d segments; want 3 tasks and data", len(runs[0].groups), m.GRPOGroups, m.GRPOSegments)
	}
	if diff := cmp.Diff(runs[0], runs[1], cmp.AllowUnexported(out{})); diff != "" {
		t.Errorf("concurrency 1 vs 2 (-1 +2):\n%s", diff)
	}
}
