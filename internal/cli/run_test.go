package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// runCtx is run with the caller's context (cancelling it is Ctrl-C).
func runCtx(t *testing.T, ctx context.Context, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(ctx, args, Env{Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

// weftRun runs `weft run` with a fresh registry and the test processes'
// shared compilation cache, then args.
func weftRun(t *testing.T, ctx context.Context, reg string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	full := append([]string{"run", "--registry", reg, "--cache-dir", megamcptest.CacheDir()}, args...)
	return runCtx(t, ctx, full...)
}

// diagAt returns src without its single "@" marker and the marker's
// 1-based line and column.
func diagAt(t *testing.T, src string) (string, int, int) {
	t.Helper()
	i := strings.Index(src, "@")
	if i < 0 || strings.Count(src, "@") != 1 {
		t.Fatalf("want exactly one @ marker in:\n%s", src)
	}
	before := src[:i]
	line := strings.Count(before, "\n") + 1
	col := i - strings.LastIndex(before, "\n")
	return before + src[i+1:], line, col
}

// baseConfig is a small valid scripted config over the retail module
// built from source; the broken configs below break one thing each.
func baseConfig(root string) string {
	return fmt.Sprintf(`module "retail" {
  path        = "%[1]s/examples/modules/retail"
  schema      = "%[1]s/examples/modules/retail/retaildb/schema.sql"
  seed        = "%[1]s/examples/data/tau2-retail/db.state.json"
}

tasks "tau2-retail" {
  tau2    = "%[1]s/examples/data/tau2-retail/tasks.json"
  modules = ["retail"]
  limit   = 1
}

policy "scripted" {
  scripted {
    seed = 1
  }
}

harness "native" {}
view "agentic" {}

mix {
  entry {
    view    = "agentic"
    harness = "native"
  }
}

rollout {
  policy            = "scripted"
  episodes_per_task = 1
}

sft {
  policy  = "scripted"
  retries = 3
  view    = "agentic"
  harness = "native"
}

grpo {
  policy     = "scripted"
  group_size = 2
  view       = "agentic"
  harness    = "native"
}

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
}

output {
  dir = "runs/base"
}
`, root)
}

func TestRunBrokenConfig(t *testing.T) {
	root := megamcptest.Root()
	base := baseConfig(root)
	replace := func(old, new string) string {
		t.Helper()
		if strings.Count(base, old) != 1 {
			t.Fatalf("%q is not in the base config exactly once", old)
		}
		return strings.Replace(base, old, new, 1)
	}
	tests := []struct {
		name    string
		src     string // with an @ where the diagnostic points
		summary string
	}{
		{"unknown block", base + "\n@bogus {\n  x = 1\n}\n", "Unsupported block type"},
		{"mix names an undeclared harness", replace(`    harness = "native"
  }
}`, `    harness = @"react"
  }
}`), "Undeclared harness"},
		{"group of one", replace("group_size = 2", "group_size = @1"), "Group too small"},
		{"negative sft retries", replace("retries = 3", "retries = @-1"), "Invalid retries"},
		{"missing module path", replace(`path        = "`+root+`/examples/modules/retail"`,
			`path        = @"`+root+`/examples/modules/no-such-module"`), "Module path not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src, line, col := diagAt(t, tc.src)
			file := filepath.Join(dir, "broken.hcl")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			code, stdout, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out, "--json")
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want empty", stdout)
			}
			want := fmt.Sprintf("%s:%d:%d: error: %s", file, line, col, tc.summary)
			if !strings.Contains(stderr, want+";") {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
			if n := strings.Count(stderr, ": error: "); n != 1 {
				t.Errorf("stderr has %d error diagnostics, want 1:\n%s", n, stderr)
			}
			if !strings.Contains(stderr, "weft: "+file+": invalid config: 1 error") {
				t.Errorf("stderr lacks the closing error line:\n%s", stderr)
			}
			for _, p := range []string{out, filepath.Join(dir, "runs")} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after a failed load (stat: %v)", p, err)
				}
			}
		})
	}
}

// lines counts the lines of a file.
func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Errorf("%s does not end in a newline", path)
	}
	return bytes.Count(b, []byte("\n"))
}

type runJSON struct {
	Dir         string         `json:"dir"`
	Interrupted bool           `json:"interrupted"`
	Metrics     map[string]any `json:"metrics"`
}

func decodeRun(t *testing.T, stdout string) runJSON {
	t.Helper()
	decodeOneObject(t, stdout)
	var r runJSON
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	f, ok := m[key].(float64)
	if !ok {
		t.Fatalf("metrics[%q] = %#v, want a number", key, m[key])
	}
	return f
}

// A scripted config (G = 2), 2 tasks x 2 episodes: every stage runs and
// the folder holds every file.
func TestRunTinyScripted(t *testing.T) {
	skipUnderRace(t)
	dir := filepath.Join(t.TempDir(), "run")
	reg := t.TempDir()
	args := []string{scriptedConfig(t), "--var", "task_limit=2", "--var", "episodes_per_task=2", "--out", dir}
	code, stdout, stderr := weftRun(t, context.Background(), reg, append(args, "--json")...)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := decodeRun(t, stdout)
	m := r.Metrics
	if r.Dir != dir || r.Interrupted {
		t.Errorf("dir %q interrupted %v, want %q false", r.Dir, r.Interrupted, dir)
	}
	if got := num(t, m, "episodes"); got != 4 {
		t.Errorf("episodes = %v, want 4", got)
	}
	if got := num(t, m, "infra_failures"); got != 0 {
		t.Errorf("infra_failures = %v, want 0", got)
	}
	byPair, _ := m["pass_rate_by"].([]any)
	sum := 0.0
	for _, g := range byPair {
		g := g.(map[string]any)
		sum += num(t, g, "episodes")
		if _, ok := g["pass_rate"].(float64); !ok {
			t.Errorf("pass_rate_by entry %v has no pass rate", g)
		}
	}
	if len(byPair) == 0 || sum != 4 {
		t.Errorf("pass_rate_by has %d entries over %v episodes, want >= 1 over 4: %v", len(byPair), sum, byPair)
	}
	if got := num(t, m, "sft_tasks"); got != 2 {
		t.Errorf("sft_tasks = %v, want 2", got)
	}
	if got := num(t, m, "grpo_groups"); got <= 0 {
		t.Errorf("grpo_groups = %v, want > 0", got)
	}

	for _, f := range []string{pipeline.FileConfig, pipeline.FileTasks, pipeline.FileTrajectories, pipeline.FileReport} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: missing or empty (%v)", f, err)
		}
	}
	if n := lines(t, filepath.Join(dir, pipeline.FileEpisodes)); n != 4 {
		t.Errorf("%s has %d lines, want 4", pipeline.FileEpisodes, n)
	}
	if n := lines(t, filepath.Join(dir, pipeline.FileSFT)); n != 4 { // 2 tasks x (prefix + end_to_end)
		t.Errorf("%s has %d lines, want 4", pipeline.FileSFT, n)
	}
	if n := lines(t, filepath.Join(dir, pipeline.FileGRPO)); n != 2 {
		t.Errorf("%s has %d lines, want 2", pipeline.FileGRPO, n)
	}
	var cfg map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, pipeline.FileConfig)); err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("%s: %v", pipeline.FileConfig, err)
	}
	if v, _ := cfg["variables"].(map[string]any); v["task_limit"] != 2.0 || v["episodes_per_task"] != 2.0 {
		t.Errorf("config.json variables = %v", cfg["variables"])
	}
	var onDisk map[string]any
	if b, err := os.ReadFile(filepath.Join(dir, pipeline.FileMetrics)); err != nil || json.Unmarshal(b, &onDisk) != nil {
		t.Fatalf("%s: %v", pipeline.FileMetrics, err)
	}
	if diff := cmp.Diff(m, onDisk); diff != "" {
		t.Errorf("--json metrics vs metrics.json (-stdout +file):\n%s", diff)
	}
	// Every format the config lists.
	ds := filepath.Join(dir, pipeline.DirDatasets)
	if n := lines(t, filepath.Join(ds, "sft.trl.jsonl")); float64(n) != num(t, m, "sft_records") {
		t.Errorf("sft.trl.jsonl has %d lines, metrics sft_records %v", n, m["sft_records"])
	}
	if n := lines(t, filepath.Join(ds, "sft.openai.jsonl")); float64(n) != num(t, m, "sft_records") {
		t.Errorf("sft.openai.jsonl has %d lines, metrics sft_records %v", n, m["sft_records"])
	}
	if n := lines(t, filepath.Join(ds, "rl.segments.jsonl")); float64(n) != num(t, m, "grpo_segments") {
		t.Errorf("rl.segments.jsonl has %d lines, metrics grpo_segments %v", n, m["grpo_segments"])
	}
	for _, f := range []string{"sft.verl.parquet", "rl.verl.parquet"} {
		b, err := os.ReadFile(filepath.Join(ds, f))
		if err != nil || !bytes.HasPrefix(b, []byte("PAR1")) || !bytes.HasSuffix(b, []byte("PAR1")) {
			t.Errorf("%s is not a parquet file (%v)", f, err)
		}
	}
	entries, err := os.ReadDir(ds)
	if err != nil || len(entries) != 5 {
		t.Errorf("datasets/ has %d files, want 5 (%v)", len(entries), err)
	}

	// The same command without --json over the finished folder redoes
	// nothing and prints the summary table.
	code, stdout, stderr = weftRun(t, context.Background(), reg, args...)
	if code != ExitOK {
		t.Fatalf("rerun: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, want := range []string{"rollout   0 to run (4 already done)", "sft       0 to run (2 already done)", "grpo      0 to run (2 already done)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("rerun stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !regexp.MustCompile(`(?m)^VIEW +HARNESS +EPISODES +INFRA +PASSED +PASS RATE +MEAN SCORE$`).MatchString(stdout) {
		t.Errorf("summary lacks the table header:\n%s", stdout)
	}
	passed := int(num(t, m, "passed"))
	all := regexp.MustCompile(`(?m)^all +4 +0 +` + strconv.Itoa(passed) + ` +[0-9.]+% +[0-9.]+$`)
	if !all.MatchString(stdout) {
		t.Errorf("summary lacks the line \"all  4  0  %d ...\":\n%s", passed, stdout)
	}
	if !strings.Contains(stdout, "run folder: "+dir+" (report: "+filepath.Join(dir, pipeline.FileReport)+")") {
		t.Errorf("summary lacks the run folder:\n%s", stdout)
	}
}

// scriptedConfig writes a small scripted config (one harness, the retail
// bundle) to a temp dir and returns its path. Its variables: task_limit,
// episodes_per_task, group_size.
func scriptedConfig(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	bundle := filepath.Join(dir, "retail.tar")
	if err := os.WriteFile(bundle, megamcptest.Bundle(t, "retail"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := megamcptest.Root()
	src := fmt.Sprintf(`variable "task_limit" {
  default = 1
}

variable "episodes_per_task" {
  default = 2
}

variable "group_size" {
  default = 2
}

module "retail" {
  bundle = %[1]q
}

tasks "tau2-retail" {
  tau2          = "%[2]s/examples/data/tau2-retail/tasks.json"
  system_prompt = "%[2]s/examples/data/tau2-retail/policy.md"
  modules       = ["retail"]
  limit         = var.task_limit
}

policy "scripted" {
  scripted {
    seed = 7
    faults {
      wrong_argument = 0.2
      extra_call     = 0.2
    }
  }
}

harness "native" {}
view "agentic" {}
view "simuser" {}

mix {
  entry {
    view    = "agentic"
    harness = "native"
  }
  entry {
    view    = "simuser"
    harness = "native"
  }
}

rollout {
  policy            = "scripted"
  episodes_per_task = var.episodes_per_task
  concurrency       = 1
  seed              = 3
}

sft {
  policy  = "scripted"
  retries = 2
  view    = "simuser"
  harness = "native"
}

grpo {
  policy     = "scripted"
  group_size = var.group_size
  view       = "simuser"
  harness    = "native"
}

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
}

output {
  dir     = "runs/tiny"
  formats = ["trl_jsonl", "verl_sft_parquet", "rl_jsonl", "verl_rl_parquet", "openai_jsonl"]
}
`, bundle, root)
	file := filepath.Join(dir, "tiny.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func readMetrics(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileMetrics))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Ctrl-C during the rollout, then during GRPO of the rerun: status 130
// each time with what finished kept, and the third run ends with the
// metrics of an uninterrupted run.
func TestRunInterruptedResumes(t *testing.T) {
	skipUnderRace(t)
	file := scriptedConfig(t)
	reg := t.TempDir()
	vars := []string{"--var", "task_limit=2", "--var", "episodes_per_task=2"}

	ref := filepath.Join(t.TempDir(), "ref")
	code, stdout, stderr := weftRun(t, context.Background(), reg, append([]string{file, "--out", ref}, vars...)...)
	if code != ExitOK {
		t.Fatalf("reference run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	want := readMetrics(t, ref)
	if num(t, want, "episodes") != 4 || num(t, want, "grpo_groups") != 2 {
		t.Fatalf("reference metrics: %v", want)
	}

	dir := filepath.Join(t.TempDir(), "run")
	args := append([]string{file, "--out", dir}, vars...)
	t.Cleanup(func() { runProgressHook = nil })
	// interrupt runs weft until stage reports its first finished item,
	// then cancels the context, as Ctrl-C does; it returns how many items
	// of the stage the folder kept, and stderr.
	interrupt := func(stage, journal string, total, doneBefore int) (int, string) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var mu sync.Mutex
		var seen []pipeline.Event
		runProgressHook = func(e pipeline.Event) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, e)
			if e.Stage == stage && e.Done == 1 {
				cancel()
			}
		}
		code, stdout, stderr := weftRun(t, ctx, reg, args...)
		runProgressHook = nil
		if code != 130 {
			t.Fatalf("interrupt in %s: exit %d, want 130\nstdout: %s\nstderr: %s", stage, code, stdout, stderr)
		}
		if stdout != "" {
			t.Errorf("interrupt in %s: stdout = %q, want empty", stage, stdout)
		}
		msg := "weft run: interrupted; what finished is in " + dir + "; rerun the same command to resume\n"
		if !strings.HasSuffix(stderr, msg) {
			t.Errorf("interrupt in %s: stderr does not end with %q:\n%s", stage, msg, stderr)
		}
		if strings.Contains(stderr, "weft: ") {
			t.Errorf("interrupt in %s: stderr has an error line:\n%s", stage, stderr)
		}
		resumed := fmt.Sprintf("%-9s %d to run (%d already done)", stage, total-doneBefore, doneBefore)
		if !strings.Contains(stderr, resumed) {
			t.Errorf("interrupt in %s: stderr lacks %q:\n%s", stage, resumed, stderr)
		}
		for _, e := range seen {
			if e.Stage == pipeline.StageExport || e.Stage == pipeline.StageReport {
				t.Errorf("interrupt in %s: stage %s ran after it: %+v", stage, e.Stage, e)
			}
		}
		for _, f := range []string{pipeline.FileMetrics, pipeline.FileReport} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("interrupt in %s: %s exists (stat: %v)", stage, f, err)
			}
		}
		kept := lines(t, filepath.Join(dir, journal))
		if kept < doneBefore+1 || kept > total {
			t.Errorf("interrupt in %s: %s has %d lines, want %d..%d", stage, journal, kept, doneBefore+1, total)
		}
		return kept, stderr
	}

	// 4 episodes; the first run stops in the rollout.
	episodes, _ := interrupt(pipeline.StageRollout, pipeline.FileEpisodes, 4, 0)
	for _, f := range []string{pipeline.FileSFT, pipeline.FileGRPO} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists though the rollout did not finish (stat: %v)", f, err)
		}
	}
	// The rerun finishes the rollout and SFT, and stops in GRPO (2 tasks).
	_, stderr = interrupt(pipeline.StageGRPO, pipeline.FileGRPO, 2, 0)
	resumed := fmt.Sprintf("rollout   %d to run (%d already done)", 4-episodes, episodes)
	if !strings.Contains(stderr, resumed) {
		t.Errorf("second run's stderr lacks %q:\n%s", resumed, stderr)
	}
	if n := lines(t, filepath.Join(dir, pipeline.FileEpisodes)); n != 4 {
		t.Errorf("%s has %d lines after the second run, want 4", pipeline.FileEpisodes, n)
	}

	code, stdout, stderr = weftRun(t, context.Background(), reg, args...)
	if code != ExitOK {
		t.Fatalf("last run: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, done := range []string{"rollout   0 to run (4 already done)", "sft       0 to run (2 already done)"} {
		if !strings.Contains(stderr, done) {
			t.Errorf("last run's stderr lacks %q:\n%s", done, stderr)
		}
	}
	if diff := cmp.Diff(want, readMetrics(t, dir)); diff != "" {
		t.Errorf("resumed metrics differ from the uninterrupted run's (-want +got):\n%s", diff)
	}
}

// vllmArgs runs configs/tau2-retail-vllm.hcl small: one task, two
// episodes, no retries, no SFT or GRPO.
func vllmArgs(dir, baseURL string) []string {
	return []string{repoFile("configs", "tau2-retail-vllm.hcl"), "--out", dir,
		"--var", "base_url=" + baseURL, "--var", "model=test-model",
		"--var", "task_limit=1", "--var", "episodes_per_task=2", "--var", "max_retries=-1", "--var", "retries=0",
		"--var", `stages=["import", "rollout", "verify", "attribute", "export", "report"]`}
}

const judgePrefix = "You grade a conversation"

func isJudge(r modeltest.Request) bool {
	msgs := r.Messages()
	if len(msgs) == 0 {
		return false
	}
	c, _ := msgs[0]["content"].(string)
	return strings.HasPrefix(c, judgePrefix)
}

// An endpoint policy end to end through weft run: the model looks a
// product up, then answers with text (a judge, if asked, with a score).
func TestRunEndpointPolicy(t *testing.T) {
	skipUnderRace(t)
	t.Setenv("OPENAI_API_KEY", "sk-test")
	srv := modeltest.NewServer(t, modeltest.WithModels("test-model"), modeltest.WithHandler(func(r modeltest.Request) modeltest.Reply {
		if isJudge(r) {
			return modeltest.Text(`{"score": 1, "rationale": "fine"}`)
		}
		msgs := r.Messages()
		if len(msgs) > 0 && msgs[len(msgs)-1]["role"] == "tool" {
			return modeltest.Text("I am sorry, I cannot help with that request.")
		}
		return modeltest.Calls(modeltest.ToolCall("call_1", "get_product_details", `{"product_id": "9523456873"}`))
	}))
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := weftRun(t, context.Background(), t.TempDir(), append(vllmArgs(dir, srv.URL()), "--json")...)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	r := decodeRun(t, stdout)
	m := r.Metrics
	if num(t, m, "episodes") != 2 || num(t, m, "infra_failures") != 0 || num(t, m, "scored_episodes") != 2 {
		t.Errorf("episodes %v, infra %v, scored %v; want 2, 0, 2", m["episodes"], m["infra_failures"], m["scored_episodes"])
	}
	if _, ok := m["pass_rate"].(float64); !ok {
		t.Errorf("pass_rate = %v, want a number", m["pass_rate"])
	}
	if num(t, m, "tool_calls") != 2 || num(t, m, "tool_errors") != 0 {
		t.Errorf("tool_calls %v, tool_errors %v; want 2 (one lookup per episode), 0", m["tool_calls"], m["tool_errors"])
	}
	if _, ok := m["sft_tasks"]; ok && num(t, m, "sft_tasks") != 0 {
		t.Errorf("sft ran: sft_tasks = %v", m["sft_tasks"])
	}
	for _, f := range []string{pipeline.FileSFT, pipeline.FileGRPO} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s exists without its stage (stat: %v)", f, err)
		}
	}
	for _, f := range []string{pipeline.FileReport, pipeline.FileTrajectories} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ep map[string]any
		if err := json.Unmarshal([]byte(line), &ep); err != nil {
			t.Fatal(err)
		}
		if _, ok := ep["score"].(float64); !ok {
			t.Errorf("episode %v has no score: %s", ep["key"], line)
		}
		if ep["policy"] != "model" {
			t.Errorf("episode %v policy = %v, want model", ep["key"], ep["policy"])
		}
	}

	reqs := srv.Requests()
	policyReqs, toolResults := 0, 0
	for _, q := range reqs {
		if q.Body["model"] != "test-model" {
			t.Errorf("request %d model = %v, want test-model", q.N, q.Body["model"])
		}
		if got := q.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("request %d Authorization = %q", q.N, got)
		}
		if ctk, _ := q.Body["chat_template_kwargs"].(map[string]any); ctk["enable_thinking"] != false {
			t.Errorf("request %d has no extra_body chat_template_kwargs: %s", q.N, q.Raw)
		}
		if isJudge(q) {
			if q.Body["temperature"] != 0.0 {
				t.Errorf("judge request %d temperature = %v, want 0", q.N, q.Body["temperature"])
			}
			continue
		}
		policyReqs++
		hasTool := false
		for _, tl := range q.Tools() {
			if fn, _ := tl["function"].(map[string]any); fn["name"] == "get_product_details" {
				hasTool = true
			}
		}
		if !hasTool {
			t.Errorf("request %d does not offer get_product_details: %s", q.N, q.Raw)
		}
		if msgs := q.Messages(); len(msgs) > 0 && msgs[len(msgs)-1]["role"] == "tool" {
			toolResults++
			if c, _ := msgs[len(msgs)-1]["content"].(string); !strings.Contains(c, "9523456873") {
				t.Errorf("request %d: tool result %q is not the product's details", q.N, c)
			}
		}
		if q.Body["temperature"] != 0.7 || q.Body["top_p"] != 0.95 {
			t.Errorf("request %d temperature %v top_p %v, want 0.7 0.95", q.N, q.Body["temperature"], q.Body["top_p"])
		}
		if q.Body["max_tokens"] != 2048.0 && q.Body["max_completion_tokens"] != 2048.0 {
			t.Errorf("request %d has no max tokens 2048: %s", q.N, q.Raw)
		}
	}
	if policyReqs != 4 || toolResults != 2 {
		t.Errorf("%d policy requests, %d with a tool result; want 4 (call, then answer, per episode), 2", policyReqs, toolResults)
	}
}

// closedURL is the API root of a port nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/v1"
}

// A dead endpoint past the preflight (--skip-preflight): every episode is
// an infrastructure failure; the run still completes and writes its
// folder, but exits 1 (nothing was scored).
func TestRunEndpointDead(t *testing.T) {
	skipUnderRace(t)
	dir := filepath.Join(t.TempDir(), "run")
	reg := t.TempDir()
	args := append(vllmArgs(dir, closedURL(t)), "--skip-preflight")
	code, stdout, stderr := weftRun(t, context.Background(), reg, append(args, "--json")...)
	if code != ExitError {
		t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
	}
	if want := "weft run: no episode was scored: all 2 ended on infrastructure failures (see above); the folder " + dir + " holds them\n"; !strings.HasSuffix(stderr, want) {
		t.Errorf("stderr does not end with %q:\n%s", want, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	if num(t, m, "episodes") != 2 || num(t, m, "infra_failures") != 2 || num(t, m, "scored_episodes") != 0 {
		t.Errorf("episodes %v, infra %v, scored %v; want 2, 2, 0", m["episodes"], m["infra_failures"], m["scored_episodes"])
	}
	if m["pass_rate"] != nil {
		t.Errorf("pass_rate = %v, want null", m["pass_rate"])
	}
	if n := lines(t, filepath.Join(dir, pipeline.FileEpisodes)); n != 2 {
		t.Errorf("%s has %d lines, want 2", pipeline.FileEpisodes, n)
	}
	b, err := os.ReadFile(filepath.Join(dir, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ep map[string]any
		if err := json.Unmarshal([]byte(line), &ep); err != nil {
			t.Fatal(err)
		}
		if ep["score"] != nil || ep["infra"] == nil {
			t.Errorf("episode is not an infrastructure failure: %s", line)
		}
	}
	for _, f := range []string{pipeline.FileMetrics, pipeline.FileReport} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}

	// The text summary shows the failures in the INFRA column.
	code, stdout, stderr = weftRun(t, context.Background(), reg, args...)
	if code != ExitError {
		t.Fatalf("rerun: exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
	}
	if !regexp.MustCompile(`(?m)^all +2 +2 +0 +- +-$`).MatchString(stdout) {
		t.Errorf("summary lacks \"all  2  2  0  -  -\":\n%s", stdout)
	}
}

// skipUnderRace skips an end-to-end weft run test under -race (see
// raceEnabled); make test runs these without it.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("end-to-end weft run test: run without -race (make test does)")
	}
}
