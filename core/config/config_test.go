package config_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/hashicorp/hcl/v2"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/train"
)

var update = flag.Bool("update", false, "rewrite docs/config.md from config.Docs()")

// head is the first 11 lines of every test config: one of each block
// a config needs besides rollout and pipeline.
const head = `module "m" {
  path = "mod"
}
tasks "t" {
  weft = ["tasks.weft.json"]
}
policy "p" {
  scripted {}
}
harness "react" {}
view "agentic" {}
`

// tail is lines 12-17 of a minimal valid config.
const tail = `rollout {
  policy = "p"
}
pipeline {
  stages = ["import", "rollout"]
}
`

// parse decodes src as testdata/test.hcl (so relative paths resolve in
// testdata).
func parse(t *testing.T, src string, vars map[string]string) (*config.Config, hcl.Diagnostics) {
	t.Helper()
	return config.Parse([]byte(src), filepath.Join("testdata", "test.hcl"), config.LoadOptions{Vars: vars})
}

// wantDiag asserts that diags has an error with exactly this summary at
// line:col of testdata/test.hcl whose detail contains detail, and that
// the config was not returned.
func wantDiag(t *testing.T, cfg *config.Config, diags hcl.Diagnostics, line, col int, summary, detail string) {
	t.Helper()
	if cfg != nil {
		t.Errorf("config returned despite errors")
	}
	for _, d := range diags {
		if d.Severity == hcl.DiagError && d.Summary == summary && d.Subject != nil &&
			d.Subject.Start.Line == line && d.Subject.Start.Column == col {
			if d.Subject.Filename != filepath.Join("testdata", "test.hcl") {
				t.Errorf("diagnostic file = %q", d.Subject.Filename)
			}
			if !strings.Contains(d.Detail, detail) {
				t.Errorf("detail = %q, want it to contain %q", d.Detail, detail)
			}
			return
		}
	}
	var got []string
	for _, d := range diags {
		got = append(got, config.FormatDiagnostic(d))
	}
	t.Fatalf("no error %q at %d:%d; got:\n%s", summary, line, col, strings.Join(got, "\n"))
}

// ignoreSources leaves the blocks' source ranges out of a comparison
// (TestMinimalDefaults checks some of them).
var ignoreSources = cmpopts.IgnoreTypes((*config.Source)(nil))

func TestMinimalDefaults(t *testing.T) {
	cfg, diags := parse(t, head+tail, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir, _ := filepath.Abs("testdata")
	want := &config.Config{
		File:      filepath.Join(dir, "test.hcl"),
		Dir:       dir,
		Variables: map[string]json.RawMessage{},
		Modules: []config.Module{{Name: "m", Path: filepath.Join(dir, "mod"),
			Schema: filepath.Join(dir, "mod", "schema.sql")}},
		Tasks: []config.TaskSet{{Name: "t", Weft: []string{filepath.Join(dir, "tasks.weft.json")},
			Modules: []string{"m"}}},
		Policies:   []config.Policy{{Name: "p", Scripted: &config.Scripted{Seed: 1}}},
		Harnesses:  []config.Harness{{Name: "react", Builtin: "react", Settings: json.RawMessage("{}")}},
		Views:      []string{"agentic"},
		Mix:        []config.MixEntry{{View: "agentic", Harness: "react", Weight: 1}},
		Verifier:   config.Plugin{Builtin: "exec"},
		Attributor: config.Plugin{Builtin: "rules"},
		Rollout:    config.Rollout{Policy: "p", EpisodesPerTask: 1, Concurrency: 1, Seed: 1},
		Stages:     []string{"import", "rollout"},
		Output:     config.Output{Dir: filepath.Join(dir, "runs", "test"), Formats: []string{"trl_jsonl", "rl_jsonl"}},
	}
	// Sources are checked here, then left out of the comparison.
	if r := cfg.Tasks[0].Source.Elem("weft", 0); r.Start.Line != 5 || r.Start.Column != 11 {
		t.Errorf("tasks weft[0] at %v, want 5:11", r)
	}
	if r := cfg.Tasks[0].Source.Attr("ids"); r.Start.Line != 4 || r.Start.Column != 1 {
		t.Errorf("tasks ids (absent) at %v, want the block header 4:1", r)
	}
	if r := cfg.Harnesses[0].Source.Attr("settings"); r.Start.Line != 10 {
		t.Errorf("harness settings (absent) at %v, want the block header, line 10", r)
	}
	ignore := cmpopts.IgnoreFields(config.TaskSet{}, "Source")
	ignoreH := cmpopts.IgnoreFields(config.Harness{}, "Source")
	if diff := cmp.Diff(want, cfg, ignore, ignoreH, ignoreSources); diff != "" {
		t.Errorf("config mismatch (-want +got):\n%s", diff)
	}
}

// The broken configs of the issue, each a diagnostic at the right place.

func TestUnknownBlock(t *testing.T) {
	cfg, diags := parse(t, head+tail+"rollouts {}\n", nil)
	wantDiag(t, cfg, diags, 18, 1, "Unsupported block type", `Blocks of type "rollouts" are not expected here. Did you mean "rollout"?`)
}

func TestUnknownAttribute(t *testing.T) {
	src := head + `rollout {
  policy = "p"
  episodes = 2
}
pipeline {
  stages = ["import", "rollout"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 14, 3, "Unsupported argument", `An argument named "episodes" is not expected here.`)
}

func TestUnknownNestedAttribute(t *testing.T) {
	src := strings.Replace(head, "scripted {}", "scripted {\n    faults {\n      early_stops = 0.1\n    }\n  }", 1) + tail
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 10, 7, "Unsupported argument", `An argument named "early_stops" is not expected here. Did you mean "early_stop"?`)
}

func TestWrongType(t *testing.T) {
	src := head + `rollout {
  policy = "p"
  concurrency = "four"
}
pipeline {
  stages = ["import", "rollout"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 14, 17, "Incorrect attribute value type",
		`Inappropriate value for attribute "concurrency": a whole number is required, got string.`)
}

func TestFractionalInt(t *testing.T) {
	src := head + `rollout {
  policy = "p"
  episodes_per_task = 1.5
}
pipeline {
  stages = ["import", "rollout"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 14, 23, "Incorrect attribute value type", "a whole number is required, got 1.5.")
}

func TestMissingModuleFile(t *testing.T) {
	src := strings.Replace(head, `path = "mod"`, `path = "modules/retail"`, 1) + tail
	cfg, diags := parse(t, src, nil)
	dir, _ := filepath.Abs("testdata")
	wantDiag(t, cfg, diags, 2, 10, "Module path not found",
		fmt.Sprintf(`"modules/retail" resolves to %s, which does not exist`, filepath.Join(dir, "modules", "retail")))
}

func TestMissingTasksFile(t *testing.T) {
	src := strings.Replace(head, `weft = ["tasks.weft.json"]`, `weft = ["tasks.weft.json", "gone.json"]`, 1) + tail
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 5, 30, "Weft tasks file not found", `"gone.json" resolves to`)
}

const mixUndeclared = `mix {
  entry {
    view    = "agentic"
    harness = "hermes"
  }
}
`

func TestMixUndeclaredHarness(t *testing.T) {
	cfg, diags := parse(t, head+tail+mixUndeclared, nil)
	wantDiag(t, cfg, diags, 21, 15, "Undeclared harness",
		`Mix entry names harness "hermes", but there is no harness "hermes" block (declared: "react").`)
}

func TestMixUndeclaredView(t *testing.T) {
	src := strings.Replace(mixUndeclared, `view    = "agentic"`, `view    = "simuser"`, 1)
	src = strings.Replace(src, `"hermes"`, `"react"`, 1)
	cfg, diags := parse(t, head+tail+src, nil)
	wantDiag(t, cfg, diags, 20, 15, "Undeclared view",
		`Mix entry names view "simuser", but there is no view "simuser" block (declared: "agentic").`)
}

func TestMixWeightsAllZero(t *testing.T) {
	src := `mix {
  entry {
    view    = "agentic"
    harness = "react"
    weight  = 0
  }
}
`
	cfg, diags := parse(t, head+tail+src, nil)
	wantDiag(t, cfg, diags, 18, 1, "Mix weights are all zero", "At least one mix entry needs a weight > 0")
}

func TestMixNegativeWeight(t *testing.T) {
	src := `mix {
  entry {
    view    = "agentic"
    harness = "react"
    weight  = -1
  }
}
`
	cfg, diags := parse(t, head+tail+src, nil)
	wantDiag(t, cfg, diags, 22, 15, "Invalid mix weight", "A weight must be a finite number >= 0, got -1.")
}

func TestGroupSizeBelowTwo(t *testing.T) {
	src := head + `rollout {
  policy = "p"
}
grpo {
  group_size = 1
}
pipeline {
  stages = ["import", "rollout", "grpo"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 16, 16, "Group too small", "group_size (G) must be at least 2")
}

func TestNegativeRetryLimit(t *testing.T) {
	src := head + `rollout {
  policy = "p"
}
sft {
  policy  = "p"
  retries = -1
}
pipeline {
  stages = ["import", "rollout", "sft"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 17, 13, "Invalid retries", "retries must be at least 0 (the retry limit: extra candidates per turn), got -1.")
}

func TestNegativeRolloutRetries(t *testing.T) {
	src := head + `rollout {
  policy  = "p"
  retries = -2
}
pipeline {
  stages = ["import", "rollout"]
}
`
	cfg, diags := parse(t, src, nil)
	wantDiag(t, cfg, diags, 14, 13, "Invalid retries", "got -2.")
}

func TestSemanticErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		src       string
		line, col int
		summary   string
		detail    string
	}{
		{"undeclared rollout policy", head + strings.Replace(tail, `policy = "p"`, `policy = "q"`, 1), 13, 12,
			"Undeclared policy", `rollout names policy "q", but there is no policy "q" block (declared: "p").`},
		{"policy with neither", strings.Replace(head, "scripted {}", "", 1) + tail, 7, 1,
			"Invalid policy", `Policy "p" needs an endpoint block`},
		{"policy with both", strings.Replace(head, "scripted {}", "scripted {}\n  endpoint {\n    base_url = \"http://x/v1\"\n    model = \"m\"\n  }", 1) + tail, 8, 3,
			"Invalid policy", `Policy "p" has both an endpoint block and a scripted block`},
		{"bad base_url", strings.Replace(head, "scripted {}", "endpoint {\n    base_url = \"localhost:8000\"\n    model = \"m\"\n  }", 1) + tail, 9, 16,
			"Invalid base_url", `base_url must be an http or https URL`},
		{"fault rate above 1", strings.Replace(head, "scripted {}", "scripted {\n    faults {\n      early_stop = 1.5\n    }\n  }", 1) + tail, 10, 20,
			"Value out of range", "early_stop must be in [0, 1], got 1.5."},
		{"unknown builtin harness", strings.Replace(head, `harness "react" {}`, `harness "r" { builtin = "reakt" }`, 1) +
			strings.Replace(tail, "rollout {", "rollout {", 1), 10, 25,
			"Unknown built-in harness", `"reakt" is not a built-in harness; use one of "hermes", "native", "react".`},
		{"harness with no source", strings.Replace(head, `harness "react" {}`, `harness "mine" {}`, 1) + tail, 10, 1,
			"Invalid harness source", `Harness "mine" needs builtin`},
		{"unknown view", strings.Replace(head, `view "agentic" {}`, `view "chat" {}`, 1) + tail, 11, 6,
			"Unknown view", `"chat" is not a task view; use one of "agentic", "simuser".`},
		{"duplicate policy", head + `policy "p" {
  scripted {}
}
` + tail, 12, 8, "Duplicate policy block", `There is already a policy block named "p" at testdata/test.hcl:7,1-11`},
		{"bad duration", head + strings.Replace(tail, `policy = "p"`, `policy = "p"
  episode_timeout = "2 minutes"`, 1), 14, 21,
			"Invalid duration", `episode_timeout must be a duration such as "90s", "2m" or "1h30m"; "2 minutes" is not one.`},
		{"unknown stage", head + strings.Replace(tail, `["import", "rollout"]`, `["import", "rollout", "train"]`, 1), 16, 34,
			"Unknown stage", `"train" is not a pipeline stage`},
		{"stage out of order", head + strings.Replace(tail, `["import", "rollout"]`, `["rollout", "import"]`, 1), 16, 24,
			"Stage out of order", `Stage "import" must come before "rollout"`},
		{"duplicate stage", head + strings.Replace(tail, `["import", "rollout"]`, `["import", "import"]`, 1), 16, 23,
			"Duplicate stage", `Stage "import" is listed twice`},
		{"grpo stage without block", head + strings.Replace(tail, `["import", "rollout"]`, `["import", "rollout", "grpo"]`, 1), 16, 34,
			"Stage needs a block", "The grpo stage needs a grpo block"},
		{"missing rollout block", head + "pipeline {\n  stages = [\"import\"]\n}\n", 1, 1,
			"Missing rollout block", "The config needs a rollout block."},
		{"missing required attribute", head + "rollout {}\n" + "pipeline {\n  stages = [\"import\"]\n}\n", 12, 9,
			"Missing required argument", `The argument "policy" is required, but no definition was found.`},
		{"bad digest", strings.Replace(head, `path = "mod"`, `digest = "sha256:abc"`, 1) + tail, 2, 12,
			"Invalid module digest", `digest must be "sha256:" followed by 64 lowercase hex digits, got "sha256:abc".`},
		// Trial F11: a bad seed or a path with no module passed validate and
		// failed at run time with no file name.
		{"truncated seed", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  seed = \"seed-trunc.json\"", 1) + tail, 3, 10,
			"Invalid module seed", "seed-trunc.json is not valid JSON: it ends early at byte 81 (truncated?)."},
		{"seed syntax error", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  seed = \"seed-comma.json\"", 1) + tail, 3, 10,
			"Invalid module seed", "seed-comma.json is not valid JSON: invalid character ']' looking for beginning of value at byte 22."},
		{"seed not an object", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  seed = \"seed-array.json\"", 1) + tail, 3, 10,
			"Invalid module seed", "seed-array.json is not a JSON object: a seed is a weft.state/v1 file or {table: [rows]} JSON."},
		{"path without a module", strings.Replace(head, `path = "mod"`, `path = "nogo"`, 1) + tail, 2, 10,
			"Invalid module path", "nogo holds no Go source files and no server.json: a module path is a Go module source directory"},
		{"path is a file", strings.Replace(head, `path = "mod"`, `path = "prompt.md"`, 1) + tail, 2, 10,
			"Invalid module path", "prompt.md is a file; a module path is a Go module source directory"},
		// Trial F5: concurrency = 1000000000 passed validate.
		{"concurrency too large", head + strings.Replace(tail, `policy = "p"`, "policy = \"p\"\n  concurrency = 1000000000", 1), 14, 17,
			"Invalid concurrency", "concurrency must be at most 4096 (each episode in flight holds a session, its state and a model request), got 1000000000."},
		// Trial F7: an overflowing duration was called "not one".
		{"duration overflow", head + strings.Replace(tail, `policy = "p"`, "policy = \"p\"\n  episode_timeout = \"9999999999h\"", 1), 14, 21,
			"Duration out of range", `episode_timeout is "9999999999h", which is out of range: a duration is at most 2562047h47m16.854775807s (about 292 years).`},
		{"duration syntax", head + strings.Replace(tail, `policy = "p"`, "policy = \"p\"\n  episode_timeout = \"10 minutes\"", 1), 14, 21,
			"Invalid duration", `"10 minutes" is not one.`},
		// Trial F7: attribute typos got no suggestion while block typos did.
		{"attribute typo", head + strings.Replace(tail, `policy = "p"`, "policy = \"p\"\n  episode_per_task = 3", 1), 14, 3,
			"Unsupported argument", `An argument named "episode_per_task" is not expected here. Did you mean "episodes_per_task"?`},
		{"module with two sources", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  bundle = \"mod/schema.sql\"", 1) + tail, 1, 1,
			"Invalid module source", `Module "m" needs exactly one of path, bundle, digest and docs; it has 2.`},
		{"tasks naming undeclared module", strings.Replace(head, `weft = ["tasks.weft.json"]`, "weft = [\"tasks.weft.json\"]\n  modules = [\"m\", \"retail\"]", 1) + tail, 6, 19,
			"Undeclared module", `Task set "t" names module "retail", but there is no module "retail" block (declared: "m").`},
		{"tau2_tools without tau2", strings.Replace(head, `weft = ["tasks.weft.json"]`, "weft = [\"tasks.weft.json\"]\n  tau2_tools = \"tasks.weft.json\"", 1) + tail, 6, 16,
			"Attribute needs tau2", `tau2_tools applies only to a tau2 tasks file; task set "t" has no tau2.`},
		{"removed seed_format", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  seed_format = \"tau2_retail\"", 1) + tail, 3, 3,
			"Unsupported argument", `An argument named "seed_format" is not expected here.`},
		{"removed seed_format: migration hint", strings.Replace(head, `path = "mod"`, "path = \"mod\"\n  seed_format = \"tau2_retail\"", 1) + tail, 3, 3,
			"Unsupported argument", `is not expected here. seed_format was removed (docs/design/011-domain-adapters.md): a seed is always a weft.state/v1 export or {table: [rows]} JSON. ` +
				`Point seed at the converted file instead of the domain's own data (for tau2 retail: seed = "examples/data/tau2-retail/db.state.json", which make retail-seed writes from db.json) and delete seed_format.`},
		{"removed tau2_domain: migration hint", strings.Replace(head, `weft = ["tasks.weft.json"]`, "weft = [\"tasks.weft.json\"]\n  tau2_domain = \"retail\"", 1) + tail, 6, 3,
			"Unsupported argument", `An argument named "tau2_domain" is not expected here. tau2_domain was removed (docs/design/011-domain-adapters.md): tau2 tasks convert the same way for every domain. ` +
				`Which gold actions are read-only comes from tau2_tools = "<the domain's tau2 tools.json>" or, without it, from the readOnlyHint annotations of the task set's modules. Delete tau2_domain.`},
		{"unknown export format", head + tail + "output {\n  formats = [\"parquet\"]\n}\n", 19, 14,
			"Unknown export format", `"parquet" is not an export format`},
		{"filter without judge", head + tail + "grpo {\n  consistency_filter {}\n}\n", 19, 3,
			"Consistency filter needs a judge", "set verifier { judge"},
		{"unknown verifier basis", head + tail + "verifier {\n  basis = \"tau3\"\n}\n", 19, 11,
			"Unknown verifier basis", `"tau3" is not a verifier basis; use one of "weft", "tau2".`},
		{"undeclared variable reference", head + strings.Replace(tail, `policy = "p"`, `policy = var.who`, 1), 13, 15,
			"Unsupported attribute", `This object does not have an attribute named "who".`},
		{"function error", head + strings.Replace(tail, `policy = "p"`, `policy = file("nope.txt")`, 1), 13, 12,
			"Error in function call", "nope.txt"},
		{"syntax error", head + "rollout {\n  policy = \n}\n", 13, 12,
			"Invalid expression", "Expected the start of an expression"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := parse(t, tc.src, nil)
			wantDiag(t, cfg, diags, tc.line, tc.col, tc.summary, tc.detail)
		})
	}
}

// Every error of a broken config comes with a source range.
func TestEveryErrorHasRange(t *testing.T) {
	src := head + `rollout {
  policy = "nobody"
  retries = -1
  concurrency = "x"
}
sft {
  policy = "p"
  mode = "greedy"
}
grpo {
  group_size = 0
  reward = "f1"
}
mix {
  entry {
    view = "simuser"
    harness = "hermes"
    weight = 0
  }
}
pipeline {
  stages = ["grpo", "sft", "export", "export", "deploy"]
}
`
	cfg, diags := parse(t, src, nil)
	if cfg != nil || !diags.HasErrors() {
		t.Fatal("want errors")
	}
	var got []string
	for _, d := range diags {
		if d.Subject == nil {
			t.Errorf("no range: %s", config.FormatDiagnostic(d))
		}
		got = append(got, config.FormatDiagnostic(d))
	}
	want := []string{
		`testdata/test.hcl:13:12: error: Undeclared policy; rollout names policy "nobody", but there is no policy "nobody" block (declared: "p").`,
		`testdata/test.hcl:14:13: error: Invalid retries; retries must be at least 0 (the number of extra attempts), got -1.`,
		`testdata/test.hcl:15:17: error: Incorrect attribute value type; Inappropriate value for attribute "concurrency": a whole number is required, got string.`,
		`testdata/test.hcl:19:10: error: Unknown rejection-sampling mode; "greedy" is not a rejection-sampling mode; use one of "prefix", "end_to_end".`,
		`testdata/test.hcl:22:16: error: Group too small; group_size (G) must be at least 2: a group-normalised advantage compares each candidate with the others; got 0.`,
		`testdata/test.hcl:23:12: error: Unknown GRPO reward; "f1" is not a GRPO reward; use one of "binary", "score", "ftrl_f1", "ftrl_p", "ftrl_r", "ftrl_precision".`,
		`testdata/test.hcl:25:1: error: Mix weights are all zero; At least one mix entry needs a weight > 0, or no episode would run.`,
		`testdata/test.hcl:27:12: error: Undeclared view; Mix entry names view "simuser", but there is no view "simuser" block (declared: "agentic").`,
		`testdata/test.hcl:28:15: error: Undeclared harness; Mix entry names harness "hermes", but there is no harness "hermes" block (declared: "react").`,
		`testdata/test.hcl:33:21: error: Stage out of order; Stage "sft" must come before "grpo": stages run in the order "import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report".`,
		`testdata/test.hcl:33:38: error: Duplicate stage; Stage "export" is listed twice; each stage runs at most once.`,
		`testdata/test.hcl:33:48: error: Unknown stage; "deploy" is not a pipeline stage; use "import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report".`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics mismatch (-want +got):\n%s", diff)
	}
}

const varsConfig = `variable "rate" {
  default = 0.1
}
variable "k" {
  default = 2
}
variable "name" {
  default = "p"
}
variable "stages" {
  default = ["import", "rollout"]
}
module "m" {
  path = "mod"
}
tasks "t" {
  weft = ["tasks.weft.json"]
  system_prompt = "prompt.md"
}
policy "p" {
  scripted {
    faults {
      wrong_argument = var.rate
      skip_step      = var.rate / 2
      early_stop     = min(var.rate * 3, 1)
    }
  }
}
harness "react" {}
view "agentic" {}
rollout {
  policy            = lower(var.name)
  episodes_per_task = var.k
  episode_timeout   = format("%ds", var.k * 60)
}
pipeline {
  stages = var.stages
}
output {
  dir = "out/${upper(var.name)}"
}
`

func TestVariablesDefaultsAndOverride(t *testing.T) {
	cfg, diags := parse(t, varsConfig, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f := cfg.Policies[0].Scripted.Faults
	if f.WrongArgument != 0.1 || f.SkipStep != 0.05 || f.EarlyStop != 0.3 {
		t.Errorf("faults = %+v", f)
	}
	if cfg.Rollout.EpisodesPerTask != 2 || cfg.Rollout.EpisodeTimeout != 2*time.Minute {
		t.Errorf("rollout = %+v", cfg.Rollout)
	}
	dir, _ := filepath.Abs("testdata")
	if cfg.Output.Dir != filepath.Join(dir, "out", "P") {
		t.Errorf("output dir = %q", cfg.Output.Dir)
	}
	if got := string(cfg.Variables["rate"]); got != "0.1" {
		t.Errorf("variables[rate] = %s", got)
	}

	cfg, diags = parse(t, varsConfig, map[string]string{
		"rate": "0.5", "k": "4", "name": "P", "stages": `["import"]`,
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	f = cfg.Policies[0].Scripted.Faults
	if f.WrongArgument != 0.5 || f.SkipStep != 0.25 || f.EarlyStop != 1 {
		t.Errorf("overridden faults = %+v", f)
	}
	if cfg.Rollout.EpisodesPerTask != 4 || cfg.Rollout.EpisodeTimeout != 4*time.Minute || cfg.Rollout.Policy != "p" {
		t.Errorf("overridden rollout = %+v", cfg.Rollout)
	}
	if diff := cmp.Diff([]string{"import"}, cfg.Stages); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if got := string(cfg.Variables["name"]); got != `"P"` {
		t.Errorf("variables[name] = %s", got)
	}
}

func TestVariableErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		src     string
		vars    map[string]string
		file    string
		line    int
		col     int
		summary string
		detail  string
	}{
		{"undeclared override", varsConfig, map[string]string{"rat": "1"}, "<value for var.rat>", 1, 1,
			"Undeclared variable", `A value was given for variable "rat", but the config declares no variable "rat" block.`},
		{"override of the wrong type", varsConfig, map[string]string{"k": "many"}, "<value for var.k>", 1, 1,
			"Invalid value for variable", `Variable "k" has a number default, so its value must be a number; "many" is not.`},
		{"override fault out of range", varsConfig, map[string]string{"rate": "2"}, "testdata/test.hcl", 23, 24,
			"Value out of range", "wrong_argument must be in [0, 1], got 2."},
		{"required variable not given", "variable \"x\" {}\n" + head + tail, nil, "testdata/test.hcl", 1, 1,
			"No value for required variable", `Variable "x" has no default, so a value must be given (--var x=VALUE).`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := parse(t, tc.src, tc.vars)
			if cfg != nil {
				t.Error("config returned despite errors")
			}
			for _, d := range diags {
				if d.Summary == tc.summary && d.Subject != nil && d.Subject.Filename == tc.file &&
					d.Subject.Start.Line == tc.line && d.Subject.Start.Column == tc.col {
					if !strings.Contains(d.Detail, tc.detail) {
						t.Errorf("detail = %q, want %q", d.Detail, tc.detail)
					}
					return
				}
			}
			t.Fatalf("no %q at %s:%d:%d in %v", tc.summary, tc.file, tc.line, tc.col, diags)
		})
	}
	// A required variable given by the caller is fine.
	cfg, diags := parse(t, "variable \"who\" {}\n"+head+strings.Replace(tail, `policy = "p"`, `policy = var.who`, 1),
		map[string]string{"who": "p"})
	if diags.HasErrors() || cfg.Rollout.Policy != "p" {
		t.Fatalf("diags %v", diags)
	}
}

func TestFunctions(t *testing.T) {
	t.Setenv("WEFT_CONFIG_TEST_MODEL", "Qwen/Qwen3-8B")
	src := strings.Replace(head, "scripted {}", `endpoint {
    base_url = "http://127.0.0.1:8000/v1"
    model = env("WEFT_CONFIG_TEST_MODEL")
    extra_body = { note = trimspace(file("prompt.md")), n = length(concat([1], [2, 3])) }
  }
  sampling {
    temperature = max(0.2, 0.7)
    stop = split(",", "a,b")
  }`, 1) + tail
	cfg, diags := parse(t, src, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := cfg.Policies[0]
	if p.Endpoint.Model != "Qwen/Qwen3-8B" {
		t.Errorf("model = %q", p.Endpoint.Model)
	}
	if got := string(p.Endpoint.ExtraBody); got != `{"n":3,"note":"Be helpful."}` {
		t.Errorf("extra_body = %s", got)
	}
	if *p.Sampling.Temperature != 0.7 || !reflect.DeepEqual(p.Sampling.Stop, []string{"a", "b"}) {
		t.Errorf("sampling = %+v", p.Sampling)
	}
}

// The configs under configs/ are valid and say what their comments say.
func TestShippedConfigs(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	cfg, diags := config.Load(filepath.Join(root, "configs", "tau2-retail.hcl"), config.LoadOptions{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if cfg.Modules[0].Path != filepath.Join(root, "examples/modules/retail") ||
		cfg.Modules[0].Seed != filepath.Join(root, "examples/data/tau2-retail/db.state.json") || cfg.Tasks[0].Tau2Tools != "" {
		t.Errorf("module = %+v", cfg.Modules[0])
	}
	var tasks []json.RawMessage
	b, err := os.ReadFile(cfg.Tasks[0].Tau2)
	if err == nil {
		err = json.Unmarshal(b, &tasks)
	}
	if err != nil || len(tasks) != 114 || cfg.Tasks[0].Limit != 0 || len(cfg.Tasks[0].IDs) != 0 {
		t.Errorf("tasks: %d tau2 tasks (%v), limit %d, ids %v; want all 114", len(tasks), err, cfg.Tasks[0].Limit, cfg.Tasks[0].IDs)
	}
	want := scripted.Faults{WrongArgument: 0.08, SkipStep: 0.04, ExtraCall: 0.05, HallucinatedTool: 0.03, MalformedCall: 0.03, EarlyStop: 0.03}
	if got := cfg.Policies[0].Scripted.Faults; got != want {
		t.Errorf("faults = %+v, want %+v", got, want)
	}
	if len(cfg.Mix) != 6 || cfg.Rollout.EpisodesPerTask != 6 {
		t.Errorf("mix %v, %d episodes per task; want 6 pairs, 6 episodes", cfg.Mix, cfg.Rollout.EpisodesPerTask)
	}
	for _, e := range cfg.Mix {
		if e.Weight != 1 {
			t.Errorf("mix entry %+v: weight %v, want 1", e, e.Weight)
		}
	}
	if !reflect.DeepEqual(cfg.Stages, config.AllStages) || cfg.SFT == nil || cfg.GRPO == nil {
		t.Errorf("stages %v sft %v grpo %v", cfg.Stages, cfg.SFT, cfg.GRPO)
	}
	if !reflect.DeepEqual(cfg.Output.Formats, config.ExportFormats) || cfg.Output.Dir != filepath.Join(root, "runs", "tau2-retail") {
		t.Errorf("output = %+v", cfg.Output)
	}

	cfg, diags = config.Load(filepath.Join(root, "configs", "tau2-retail-vllm.hcl"), config.LoadOptions{
		Vars: map[string]string{"base_url": "http://gpu:8000/v1"}})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	e := cfg.Policies[0].Endpoint
	if e == nil || e.BaseURL != "http://gpu:8000/v1" || e.Model != "Qwen/Qwen3-8B" || e.Timeout != 2*time.Minute ||
		e.APIKeyEnv != "OPENAI_API_KEY" || string(e.ExtraBody) != `{"chat_template_kwargs":{"enable_thinking":false}}` {
		t.Errorf("endpoint = %+v", e)
	}
	if cfg.Verifier.Judge != "model" || cfg.Verifier.Basis != "" || cfg.GRPO.Filter == nil || cfg.GRPO.Filter.MinRollouts != 4 {
		t.Errorf("verifier %+v, filter %+v", cfg.Verifier, cfg.GRPO.Filter)
	}
	var weights []float64
	for _, e := range cfg.Mix {
		weights = append(weights, e.Weight)
	}
	if !reflect.DeepEqual(weights, []float64{2, 1, 1, 2, 1, 1}) || cfg.Rollout.EpisodesPerTask != 8 {
		t.Errorf("mix weights %v, %d episodes per task", weights, cfg.Rollout.EpisodesPerTask)
	}
}

// Resolved is JSON that decodes back to the same config.
func TestResolvedRoundTrip(t *testing.T) {
	root, _ := filepath.Abs(filepath.Join("..", ".."))
	for _, name := range []string{"tau2-retail.hcl", "tau2-retail-vllm.hcl"} {
		cfg, diags := config.Load(filepath.Join(root, "configs", name), config.LoadOptions{})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		b := cfg.Resolved()
		var back config.Config
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(b), string(back.Resolved())); diff != "" {
			t.Errorf("%s: resolved round trip (-want +got):\n%s", name, diff)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if got := m["rollout"].(map[string]any)["episode_timeout"]; name == "tau2-retail.hcl" && got != float64(120*time.Second) {
			t.Errorf("episode_timeout = %v, want %d (nanoseconds)", got, 120*time.Second)
		}
	}
}

func TestFormatDiagnostic(t *testing.T) {
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Group too small", Detail: "group_size must be\n  at least 2.",
		Subject: &hcl.Range{Filename: "x.hcl", Start: hcl.Pos{Line: 3, Column: 16}, End: hcl.Pos{Line: 3, Column: 17}}}
	if got, want := config.FormatDiagnostic(d), "x.hcl:3:16: error: Group too small; group_size must be at least 2."; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	w := &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: "Odd"}
	if got := config.FormatDiagnostic(w); got != "warning: Odd" {
		t.Errorf("got %q", got)
	}
	js := config.Diagnostics(hcl.Diagnostics{d, w})
	want := []config.Diagnostic{
		{Severity: "error", Summary: "Group too small", Detail: "group_size must be\n  at least 2.", Filename: "x.hcl", Line: 3, Column: 16, EndLine: 3, EndColumn: 17},
		{Severity: "warning", Summary: "Odd"},
	}
	if diff := cmp.Diff(want, js); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestLoadMissingFile(t *testing.T) {
	cfg, diags := config.Load(filepath.Join(t.TempDir(), "none.hcl"), config.LoadOptions{})
	if cfg != nil || len(diags) != 1 || diags[0].Summary != "Cannot read config file" {
		t.Fatalf("got %v, %v", cfg, diags)
	}
}

// docs/config.md is config.Docs(); -update rewrites it.
func TestDocsUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "config.md")
	got := config.Docs()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("docs/config.md is stale; run go test ./core/config -run TestDocsUpToDate -update (-file +code):\n%s", diff)
	}
	for _, s := range []string{"### `policy \"NAME\"`", "| `group_size` | int | 8 |", "`upper`", "`file`"} {
		if !strings.Contains(got, s) {
			t.Errorf("docs lack %q", s)
		}
	}
}

// A huge number literal is refused before HCL parses it (parsing 1e999999
// into an arbitrary-precision float takes about a second).
func TestNumberOutOfRange(t *testing.T) {
	src := "variable \"x\" {\n  default = 1e999999\n}\n"
	cfg, diags := config.Parse([]byte(src), "big.hcl", config.LoadOptions{})
	if cfg != nil || len(diags) != 1 {
		t.Fatalf("config %v, diagnostics %v; want one error", cfg != nil, diags)
	}
	got := config.FormatDiagnostic(diags[0])
	if !strings.HasPrefix(got, "big.hcl:2:13: error: Number out of range;") {
		t.Fatalf("diagnostic = %q", got)
	}
	if _, diags := config.Parse([]byte("variable \"x\" {\n  default = 1.5e300\n}\n"), "ok.hcl", config.LoadOptions{}); len(diags) != 0 && diags[0].Summary == "Number out of range" {
		t.Fatalf("1.5e300 refused: %v", diags)
	}
}

// Two entries for one view x harness pair would give two rollout jobs the
// same key: refused at the second entry, naming the first.
func TestMixDuplicateEntry(t *testing.T) {
	mix := "mix {\n  entry {\n    view    = \"agentic\"\n    harness = \"react\"\n  }\n  entry {\n    view    = \"agentic\"\n    harness = \"react\"\n    weight  = 2\n  }\n}\n"
	cfg, diags := parse(t, head+tail+mix, nil)
	wantDiag(t, cfg, diags, 23, 3, "Duplicate mix entry",
		`View "agentic" with harness "react" is already in the mix (testdata/test.hcl:19); put their weights in one entry.`)
}

// The sft and grpo blocks have their own concurrency: sft's defaults to
// the rollout's, stated in the decoded config; grpo's defaults to 1.
func TestTrainingConcurrency(t *testing.T) {
	blocks := func(sft, grpo string) string {
		return head + "rollout {\n  policy = \"p\"\n  concurrency = 6\n}\nsft {\n  policy = \"p\"\n" + sft + "}\ngrpo {\n" + grpo + "}\n" +
			"pipeline {\n  stages = [\"import\", \"rollout\", \"sft\", \"grpo\"]\n}\n"
	}
	cfg, diags := parse(t, blocks("", ""), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if cfg.SFT.Concurrency != 6 || cfg.GRPO.Concurrency != 1 || cfg.GRPO.GroupSize != 8 {
		t.Errorf("defaults: sft %d, grpo %d, G %d; want 6, 1, 8", cfg.SFT.Concurrency, cfg.GRPO.Concurrency, cfg.GRPO.GroupSize)
	}
	var resolved struct {
		SFT  map[string]any `json:"sft"`
		GRPO map[string]any `json:"grpo"`
	}
	if err := json.Unmarshal(cfg.Resolved(), &resolved); err != nil {
		t.Fatal(err)
	}
	if resolved.SFT["concurrency"] != 6.0 || resolved.GRPO["concurrency"] != 1.0 {
		t.Errorf("resolved: sft %v grpo %v", resolved.SFT["concurrency"], resolved.GRPO["concurrency"])
	}
	cfg, diags = parse(t, blocks("  concurrency = 2\n", "  concurrency = 3\n"), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if cfg.SFT.Concurrency != 2 || cfg.GRPO.Concurrency != 3 || cfg.Rollout.Concurrency != 6 {
		t.Errorf("explicit: sft %d, grpo %d, rollout %d", cfg.SFT.Concurrency, cfg.GRPO.Concurrency, cfg.Rollout.Concurrency)
	}
	cfg, diags = parse(t, blocks("  concurrency = 0\n", ""), nil)
	wantDiag(t, cfg, diags, 18, 17, "Invalid concurrency", "concurrency must be at least 1, got 0.")
	cfg, diags = parse(t, blocks("", "  concurrency = -1\n"), nil)
	wantDiag(t, cfg, diags, 20, 17, "Invalid concurrency", "concurrency must be at least 1, got -1.")
}

// Every default the docs show for a literal default is the one the decoder
// uses: the minimal config decodes to the schema table's typed defaults.
func TestDefaultsFromSchema(t *testing.T) {
	cfg, diags := parse(t, head+"rollout {\n  policy = \"p\"\n}\nsft {\n  policy = \"p\"\n}\ngrpo {}\n"+
		"pipeline {\n  stages = [\"import\", \"rollout\", \"sft\", \"grpo\"]\n}\n", nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	docs := config.Docs()
	for _, row := range []string{
		"| `mode` | string | \"prefix\" |", "| `retries` | int | 3 |", "| `threshold` | number | 1 |",
		"| `group_size` | int | 8 | G, candidates per group. `weft run` takes any G; the rollout service refuses a batch whose G exceeds its `--max-group-size` (default 64), so a config meant to be served keeps G at or below it; >= 2. |", "| `eps` | number | 1e-6 |", "| `level` | string | \"atomic_turn\" |",
		"| `continue` | string | \"first\" |", "| `mask` | bool | true |", "| `reward` | string | \"binary\" |",
		"| `episodes_per_task` | int | 1 |", "| `seed` | int | 1 | Base of the episode seeds; >= 0. |",
	} {
		if !strings.Contains(docs, row) {
			t.Errorf("docs lack %q", row)
		}
	}
	want := config.SFT{Policy: "p", Mode: "prefix", Retries: 3, Threshold: 1, View: "agentic", Harness: "react", Concurrency: 1}
	if diff := cmp.Diff(want, *cfg.SFT, ignoreSources); diff != "" {
		t.Errorf("sft (-want +got):\n%s", diff)
	}
	wantG := config.GRPO{Policy: "p", GroupSize: 8, Eps: 1e-6, Level: "atomic_turn", Continue: "first", Mask: true, Reward: "binary",
		View: "agentic", Harness: "react", Concurrency: 1}
	if diff := cmp.Diff(wantG, *cfg.GRPO, ignoreSources); diff != "" {
		t.Errorf("grpo (-want +got):\n%s", diff)
	}
}

// The faults and consistency_filter blocks decode straight into their
// owners' types (scripted.Faults, train.FilterConfig): every attribute
// lands in its field, absent ones get the schema's defaults, an
// out-of-range value is an error at its range, and the resolved config
// keeps the HCL names.
func TestBlocksDecodeIntoOwnerTypes(t *testing.T) {
	src := func(faults, filter string) string {
		return strings.Replace(head, "  scripted {}\n", "  scripted {\n    faults {\n"+faults+"    }\n  }\n", 1) +
			"verifier {\n  judge = \"p\"\n}\nrollout {\n  policy = \"p\"\n}\ngrpo {\n  consistency_filter {\n" + filter + "  }\n}\n" +
			"pipeline {\n  stages = [\"import\", \"rollout\", \"grpo\"]\n}\n"
	}
	cfg, diags := parse(t, src("      wrong_argument = 0.1\n      skip_step = 0.2\n      extra_call = 0.3\n      hallucinated_tool = 0.4\n      malformed_call = 0.5\n      early_stop = 0.6\n",
		"    min_correlation = -0.25\n    min_agreement = 0.9\n    rubric_pass = 0.7\n    min_rollouts = 6\n"), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	wantF := scripted.Faults{WrongArgument: 0.1, SkipStep: 0.2, ExtraCall: 0.3, HallucinatedTool: 0.4, MalformedCall: 0.5, EarlyStop: 0.6}
	if diff := cmp.Diff(wantF, cfg.Policies[0].Scripted.Faults); diff != "" {
		t.Errorf("faults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&train.FilterConfig{MinCorrelation: -0.25, MinAgreement: 0.9, RubricPass: 0.7, MinRollouts: 6}, cfg.GRPO.Filter); diff != "" {
		t.Errorf("filter (-want +got):\n%s", diff)
	}
	var resolved struct {
		Policies []struct {
			Scripted struct {
				Faults map[string]float64 `json:"faults"`
			} `json:"scripted"`
		} `json:"policies"`
		GRPO struct {
			Filter map[string]float64 `json:"consistency_filter"`
		} `json:"grpo"`
	}
	if err := json.Unmarshal(cfg.Resolved(), &resolved); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"wrong_argument": 0.1, "skip_step": 0.2, "extra_call": 0.3, "hallucinated_tool": 0.4, "malformed_call": 0.5, "early_stop": 0.6},
		resolved.Policies[0].Scripted.Faults); diff != "" {
		t.Errorf("resolved faults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"min_correlation": -0.25, "min_agreement": 0.9, "rubric_pass": 0.7, "min_rollouts": 6}, resolved.GRPO.Filter); diff != "" {
		t.Errorf("resolved filter (-want +got):\n%s", diff)
	}
	// Absent attributes: the schema's defaults.
	cfg, diags = parse(t, src("", ""), nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if diff := cmp.Diff(&train.FilterConfig{MinCorrelation: 0.5, MinAgreement: 0.8, RubricPass: 0.5, MinRollouts: 4}, cfg.GRPO.Filter); diff != "" {
		t.Errorf("default filter (-want +got):\n%s", diff)
	}
	if cfg.Policies[0].Scripted.Faults != (scripted.Faults{}) {
		t.Errorf("default faults %+v, want zero", cfg.Policies[0].Scripted.Faults)
	}
	// Out of range, with the value's range.
	cfg, diags = parse(t, src("      early_stop = 1.5\n", ""), nil)
	wantDiag(t, cfg, diags, 10, 20, "Value out of range", "early_stop must be in [0, 1], got 1.5.")
	cfg, diags = parse(t, src("", "    min_rollouts = 1\n"), nil)
	wantDiag(t, cfg, diags, 23, 20, "Invalid min rollouts", "min_rollouts must be at least 2 (a correlation needs two points), got 1.")
}
