package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// basisConfig writes a config over tau2-retail tasks 2 (a failed lookup,
// communicate_info "10"), 64 (a failed exchange) and 105 (its only action
// fails), the scripted policy without faults, one agentic episode each, and
// the verifier block given.
func basisConfig(t *testing.T, verifier string) string {
	t.Helper()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "retail.tar")
	if err := os.WriteFile(bundle, megamcptest.Bundle(t, "retail"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := fmt.Sprintf(`module "retail" {
  bundle = %[1]q
}

tasks "tau2-retail" {
  tau2          = "%[2]s/examples/data/tau2-retail/tasks.json"
  system_prompt = "%[2]s/examples/data/tau2-retail/policy.md"
  modules       = ["retail"]
  ids           = ["2", "64", "105"]
}

policy "scripted" {
  scripted {}
}

harness "native" {}
view "agentic" {}

rollout {
  policy            = "scripted"
  episodes_per_task = 1
}

%[3]s

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "report"]
}
`, bundle, megamcptest.Root(), verifier)
	file := filepath.Join(dir, "basis.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestRunVerifierBasis: weft run converts tau2 tasks with their failed gold
// actions ignored (task 64 keeps one atomic task, 105 none; all recorded in
// the task meta and in metrics.json's settings), and scores the overall
// checkpoint by weft's basis (state_equal + communicate) or by tau2's
// reward_basis (DB: state_equal alone), saying which in metrics.json and
// the report.
func TestRunVerifierBasis(t *testing.T) {
	skipUnderRace(t)
	reg := t.TempDir()
	for _, tc := range []struct {
		basis, block string
		task2Checks  []string
	}{
		{"weft", "", []string{task.CheckStateEqual, task.CheckCommunicate}},
		{"tau2", "verifier {\n  basis = \"tau2\"\n}", []string{task.CheckStateEqual}},
	} {
		t.Run(tc.basis, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := weftRun(t, context.Background(), reg, basisConfig(t, tc.block), "--out", dir, "--json")
			if code != ExitOK {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
			}
			m := decodeRun(t, stdout).Metrics
			if got := num(t, m, "passed"); got != 3 {
				t.Errorf("passed = %v, want 3 (the scripted policy follows the gold solutions)", got)
			}
			s, _ := m["settings"].(map[string]any)
			pol, _ := s["policy"].(map[string]any)
			if s["basis"] != tc.basis || s["verifier"] != "exec" || s["config"] != "basis.hcl" || pol["kind"] != "scripted" || pol["name"] != "scripted" {
				t.Errorf("settings = %v", s)
			}
			wantFailed := []any{
				map[string]any{"task": "2", "actions": []any{"#1 get_product_details: Product not found"}, "dropped_atomic": 0.0},
				map[string]any{"task": "64", "actions": []any{"#6 exchange_delivered_order_items: Non-delivered order cannot be exchanged"}, "dropped_atomic": 1.0},
				map[string]any{"task": "105", "actions": []any{"#0 exchange_delivered_order_items: Insufficient gift card balance to pay for the price difference"}, "dropped_atomic": 1.0},
			}
			if d := cmp.Diff(wantFailed, s["failed_gold_actions"]); d != "" {
				t.Errorf("failed_gold_actions (-want +got):\n%s", d)
			}
			tasks, err := task.LoadFile(filepath.Join(dir, pipeline.FileTasks))
			if err != nil {
				t.Fatal(err)
			}
			atomic := map[string]int{}
			for _, tk := range tasks {
				atomic[tk.ID] = len(tk.Atomic)
				if tk.ID == "2" {
					var kinds []string
					for _, c := range tk.Checks {
						kinds = append(kinds, c.Kind)
					}
					if d := cmp.Diff(tc.task2Checks, kinds); d != "" {
						t.Errorf("task 2 overall checks (-want +got):\n%s", d)
					}
				}
			}
			if d := cmp.Diff(map[string]int{"2": 1, "64": 1, "105": 0}, atomic); d != "" {
				t.Errorf("atomic tasks (-want +got):\n%s", d)
			}
			html, err := os.ReadFile(filepath.Join(dir, pipeline.FileReport))
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`basis <strong id="verifier-basis">` + tc.basis + `</strong>`, "scripted fault injector, not a model",
				"<tr><td>64</td><td>#6 exchange_delivered_order_items: Non-delivered order cannot be exchanged</td><td class=\"num\">1</td></tr>"} {
				if !strings.Contains(string(html), want) {
					t.Errorf("report.html lacks %q", want)
				}
			}
		})
	}
}
