package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// A task naming a module no block declares, and a task running on a
// module outside its task set's modules attribute, are diagnostics
// (weft validate, preflight) at the file and at modules, and FromConfig
// refuses the config before building anything.
func TestCheckTaskModules(t *testing.T) {
	dir := t.TempDir()
	file := func(name, modules string) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf(`{"format":"weft.tasks/v1","tasks":[{"id":%q,"modules":%s,"brief":"b","atomic":[{"id":"a1","request":"r","reference":[],"checks":[{"kind":"communicate","text":"x"}]}],"checks":null}]}`, name, modules)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nosuch := file("nosuch", `["nosuchmod"]`)
	both := file("both", `["retail","other"]`)
	ok := file("ok", `["retail"]`)
	root := megamcptest.Root()
	src := fmt.Sprintf(`module "retail" {
  path = "%[1]s/examples/modules/retail"
}
module "other" {
  path = "%[1]s/examples/modules/retail"
}
tasks "a" {
  weft = ["%[2]s"]
}
tasks "b" {
  weft    = ["%[3]s", "%[4]s"]
  modules = ["retail"]
}
policy "p" {
  scripted {}
}
harness "react" {}
view "agentic" {}
rollout {
  policy = "p"
}
pipeline {
  stages = ["import", "rollout"]
}
`, root, nosuch, ok, both)
	cfg, diags := config.Parse([]byte(src), filepath.Join(dir, "check.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := []string{
		`check.hcl:8:11: error: Unknown task module; Task "nosuch" of ` + nosuch + ` names module "nosuchmod", which no module block declares (modules: retail, other).`,
		`check.hcl:12:13: error: Task module not in the task set; Task "both" of ` + both + ` runs on module "other", but tasks "b" has modules ["retail"]: add it there or drop the task.`,
	}
	if diff := cmp.Diff(want, formatted(cfg)); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	_, err := FromConfig(context.Background(), cfg, Env{})
	if err == nil || !strings.Contains(err.Error(), `names module "nosuchmod"`) {
		t.Fatalf("FromConfig: err %v, want the unknown module", err)
	}
}
