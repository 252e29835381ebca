package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// checkConfig is a config over the committed retail tasks: two task sets,
// the given extra attributes of the second, and a react harness with the
// given settings.
func checkConfig(t *testing.T, second, settings string) *config.Config {
	t.Helper()
	root := megamcptest.Root()
	src := fmt.Sprintf(`module "retail" {
  path = "%[1]s/examples/modules/retail"
}
tasks "a" {
  weft  = ["%[1]s/examples/data/tau2-retail/tasks.weft.json"]
  limit = 3
}
tasks "b" {
  weft = ["%[1]s/examples/data/tau2-retail/tasks.weft.json"]
  %[2]s
}
policy "p" {
  scripted {}
}
harness "react" {
  settings = %[3]s
}
view "agentic" {}
rollout {
  policy = "p"
}
pipeline {
  stages = ["import", "rollout"]
}
`, root, second, settings)
	cfg, diags := config.Parse([]byte(src), filepath.Join(t.TempDir(), "check.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return cfg
}

func formatted(cfg *config.Config) []string {
	var out []string
	for _, d := range Check(context.Background(), cfg) {
		f := config.FormatDiagnostic(d)
		out = append(out, f[strings.Index(f, "check.hcl:"):])
	}
	return out
}

// Post-decode problems are diagnostics at the attribute at fault.
func TestCheckDiagnostics(t *testing.T) {
	weft := megamcptest.Root() + "/examples/data/tau2-retail/tasks.weft.json"
	// Disjoint ids: valid.
	if got := formatted(checkConfig(t, `ids = ["10", "11"]`, `{}`)); len(got) != 0 {
		t.Errorf("valid config: %v", got)
	}
	// The same file twice: task set b repeats a's first three tasks; an
	// unknown id; react's settings break its schema twice.
	cfg := checkConfig(t, `ids = ["1", "0", "99x", "2", "3"]`, `{ respond_action = "", tone = "warm" }`)
	want := []string{
		`check.hcl:10:20: error: Unknown task id; Task set "b" has no task "99x" (its files hold 114 tasks).`,
		`check.hcl:9:11: error: Duplicate task id; 3 task ids of ` + weft + ` in tasks "b" are also in ` + weft +
			` of tasks "a" (` + cfg.File + `:5): "0", "1", "2". Task ids must be unique over the run; filter with ids or limit.`,
		`check.hcl:16:14: error: Invalid harness settings; The settings of harness "react" do not match its settings_schema: ` +
			`at /respond_action: minLength: got 0, want 1; at the top level: additional properties 'tone' not allowed.`,
	}
	if diff := cmp.Diff(want, formatted(cfg)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	// FromConfig refuses the same config before building anything, with
	// the same ranges.
	_, err := FromConfig(context.Background(), cfg, Env{})
	if err == nil {
		t.Fatal("FromConfig: no error")
	}
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		lines = append(lines, l[strings.Index(l, "check.hcl:"):])
	}
	if diff := cmp.Diff(want[:2], lines); diff != "" {
		t.Errorf("FromConfig's error (-want +got):\n%s", diff)
	}
}

// filterTasks keeps the first item per id in ids order of the items, then
// the limit; missing ids are returned by index.
func TestFilterTasks(t *testing.T) {
	items := []string{"a", "b", "c", "b", "d"}
	id := func(s string) string { return s }
	kept, missing := filterTasks(items, id, []string{"d", "b", "zz", "a"}, 0)
	if diff := cmp.Diff([]string{"a", "b", "d"}, kept); diff != "" || !cmp.Equal(missing, []int{2}) {
		t.Errorf("kept %v missing %v", kept, missing)
	}
	kept, missing = filterTasks(items, id, nil, 2)
	if !cmp.Equal(kept, []string{"a", "b"}) || missing != nil {
		t.Errorf("limit: kept %v missing %v", kept, missing)
	}
}
