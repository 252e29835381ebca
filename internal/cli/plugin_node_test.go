//go:build unix

package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/conformance"
)

// nodeHarness returns the path of the Node.js harness plugin
// (examples/plugins/node-harness/harness.js) with its npm dependencies
// installed (install.sh: npm ci of the pinned lock into
// build/node-harness, once). Without node or npm on PATH the test is
// skipped, unless WEFT_REQUIRE_NODE=1 (CI), where it fails.
func nodeHarness(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("WEFT_REQUIRE_NODE") == "1" {
				t.Fatalf("%s is not on PATH and WEFT_REQUIRE_NODE=1: the Node.js harness plugin must be tested", tool)
			}
			t.Skipf("%s is not on PATH: skipping the Node.js harness plugin (set WEFT_REQUIRE_NODE=1 to fail instead)", tool)
		}
	}
	dir, err := filepath.Abs(repoFile("examples", "plugins", "node-harness"))
	if err != nil {
		t.Fatal(err)
	}
	nodeInstall.Do(func() {
		out, err := exec.Command("bash", filepath.Join(dir, "install.sh")).CombinedOutput()
		if err != nil {
			nodeInstallErr = err.Error() + "\n" + string(out)
		}
	})
	if nodeInstallErr != "" {
		t.Fatalf("install.sh: %s", nodeInstallErr)
	}
	return filepath.Join(dir, "harness.js")
}

var (
	nodeInstall    sync.Once
	nodeInstallErr string
)

// conformanceChecks are the checks a harness with a settings schema and
// the resume capability gets at least.
var conformanceChecks = []string{
	conformance.CheckDescribe, conformance.CheckBasicEpisode, conformance.CheckToolError,
	conformance.CheckMaxTurns, conformance.CheckMaxToolCalls, conformance.CheckTurnDeadline,
	conformance.CheckEpisodeDeadline, conformance.CheckModelFailure, conformance.CheckEnvFailure,
	conformance.CheckListToolsFailure, conformance.CheckUserFailure, conformance.CheckOpeningDone,
	conformance.CheckConcurrent, conformance.CheckResume, conformance.CheckSettings, conformance.CheckFormatError,
}

// TestPluginConformanceNode runs `weft plugin conformance --json` against
// the Node.js harness plugin: every check runs (none skipped) and passes,
// and the host logs no warning or error about the plugin.
func TestPluginConformanceNode(t *testing.T) {
	bin := nodeHarness(t)
	code, stdout, stderr := run(t, stamped, "plugin", "conformance", "--json", "--log-level", "warn", bin)
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var rep conformance.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if rep.Plugin != "node-harness 0.1.0" {
		t.Errorf("plugin %q, want %q", rep.Plugin, "node-harness 0.1.0")
	}
	type outcome struct {
		Name            string
		Passed, Skipped bool
	}
	var got, want []outcome
	ran := map[string]bool{}
	for _, c := range rep.Checks {
		got = append(got, outcome{c.Name, c.Passed, c.Skipped})
		want = append(want, outcome{c.Name, true, false})
		ran[c.Name] = true
		if !c.Passed {
			t.Logf("%s: %s", c.Name, c.Detail)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("every check must run and pass (-want +got):\n%s", diff)
	}
	for _, name := range conformanceChecks {
		if !ran[name] {
			t.Errorf("the report has no check %q", name)
		}
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("the host logged warnings or errors:\n%s", stderr)
	}
}

// TestNodeHarnessLifecycle starts the Node.js plugin as weft does: run by
// hand it refuses to serve; started by the host it answers Describe; Kill
// ends it through go-plugin's GRPCController.Shutdown well before the 2 s
// go-plugin waits for a plugin that does not serve it; it exits when its
// host dies without a word; a host offering only a protocol version the
// plugin does not speak gets a clear error.
func TestNodeHarnessLifecycle(t *testing.T) {
	bin := nodeHarness(t)

	out, err := exec.Command(bin).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "is a weft plugin") {
		t.Errorf("run by hand: %v, output %q; want exit 1 saying it is a weft plugin", err, out)
	}

	client, err := plugin.Start(t.Context(), plugin.StartConfig{Cmd: exec.Command(bin), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	h, err := client.Harness()
	if err != nil {
		client.Kill()
		t.Fatal(err)
	}
	var d plugin.DescribeResponse
	if err := h.Describe(t.Context(), &plugin.DescribeRequest{}, &d); err != nil {
		client.Kill()
		t.Fatal(err)
	}
	if d.Name != "node-harness" || d.Format != plugin.FormatNative || !strings.Contains(strings.Join(d.Capabilities, ","), plugin.CapabilityResume) {
		t.Errorf("describe: %v", &d)
	}
	start := time.Now()
	client.Kill()
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Errorf("Kill took %v: the plugin did not exit on GRPCController.Shutdown", el)
	}
	if !client.Exited() {
		t.Error("the plugin process did not exit")
	}

	// A host killed without calling Shutdown: the plugin notices that it
	// has been re-parented and exits.
	sh := exec.Command("bash", "-c", `"$0" & echo "$!"; wait`, bin)
	sh.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue, "PLUGIN_PROTOCOL_VERSIONS=2")
	stdout, err := sh.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var pid int
	if !lines.Scan() {
		t.Fatal("no pid from the shell")
	}
	if _, err := fmt.Sscan(lines.Text(), &pid); err != nil || pid <= 0 {
		t.Fatalf("pid line %q: %v", lines.Text(), err)
	}
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "1|2|tcp|127.0.0.1:") {
		t.Fatalf("handshake line %q", lines.Text())
	}
	_ = sh.Process.Kill()
	_ = sh.Wait()
	gone := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			gone = true
			break
		}
	}
	if !gone {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Error("the plugin outlived its host by 5 s")
	}

	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), plugin.MagicCookieKey+"="+plugin.MagicCookieValue, "PLUGIN_PROTOCOL_VERSIONS=99")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "the host offers weft plugin protocol version(s) 99; this plugin speaks") {
		t.Errorf("unknown protocol version: %v, output %q", err, out)
	}
}

// TestNodeHarnessUnit runs the plugin's own tests (node --test): the
// episode loop in process, and the plugin process over weft.plugin.v2
// against a fake host written in Node (bearer token, Failure details).
func TestNodeHarnessUnit(t *testing.T) {
	bin := nodeHarness(t)
	cmd := exec.Command("node", "--test", "test/")
	cmd.Dir = filepath.Dir(bin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "\n# fail 0\n") || strings.Contains(string(out), "\n# pass 0\n") {
		t.Errorf("node --test output lacks passing tests:\n%s", out)
	}
}

// TestRunNodeHarness runs real tau2 retail episodes through the Node.js
// harness with `weft run`: two tasks under both views, each with the
// built-in native harness and the Node one (the scripted policy answers in
// the harness's declared format, native function calling for both), then
// SFT data through the Node harness (which resumes from the history). Every
// Node episode must score exactly as the native harness's episode of the
// same task and view, and pass.
func TestRunNodeHarness(t *testing.T) {
	skipUnderRace(t)
	bin := nodeHarness(t)
	dir := t.TempDir()
	bundle := filepath.Join(dir, "retail.tar")
	if err := os.WriteFile(bundle, megamcptest.Bundle(t, "retail"), 0o644); err != nil {
		t.Fatal(err)
	}
	mix := ""
	for _, v := range []string{"agentic", "simuser"} {
		for _, h := range []string{"native", "node"} {
			mix += fmt.Sprintf("  entry {\n    view    = %q\n    harness = %q\n  }\n", v, h)
		}
	}
	src := fmt.Sprintf(`module "retail" {
  bundle = %[1]q
}

tasks "tau2-retail" {
  tau2          = "%[2]s/examples/data/tau2-retail/tasks.json"
  system_prompt = "%[2]s/examples/data/tau2-retail/policy.md"
  modules       = ["retail"]
  limit         = 2
}

policy "scripted" {
  scripted {
    seed = 7
  }
}

harness "native" {}
harness "node" {
  binary = %[3]q
}
view "agentic" {}
view "simuser" {}

mix {
%[4]s}

rollout {
  policy            = "scripted"
  episodes_per_task = 4
  concurrency       = 2
  seed              = 3
}

sft {
  policy  = "scripted"
  retries = 1
  view    = "simuser"
  harness = "node"
}

pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "export", "report"]
}

output {
  dir     = "runs/node"
  formats = ["trl_jsonl"]
}
`, bundle, megamcptest.Root(), bin, mix)
	file := filepath.Join(dir, "node.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, stdout, stderr := weftRun(t, context.Background(), t.TempDir(), file, "--out", out, "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	m := decodeRun(t, stdout).Metrics
	for key, want := range map[string]float64{"episodes": 8, "infra_failures": 0, "passed": 8, "sft_tasks": 2, "sft_failed_tasks": 0} {
		if got := num(t, m, key); got != want {
			t.Errorf("metrics %s = %v, want %v", key, got, want)
		}
	}

	// One record per episode; compare each Node episode with the native
	// one of the same task and view.
	type outcome struct {
		Score       float64
		Pass        bool
		Checkpoints []struct {
			Name  string
			Score float64
		}
		Termination string
		Turns       int
		ToolCalls   int `json:"tool_calls"`
		ToolErrors  int `json:"tool_errors"`
	}
	type record struct {
		outcome
		Task, View, Harness string
	}
	f, err := os.Open(filepath.Join(out, pipeline.FileEpisodes))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byHarness := map[string]map[string]outcome{"native": {}, "node": {}}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", pipeline.FileEpisodes, err)
		}
		byHarness[r.Harness][r.Task+"/"+r.View] = r.outcome
	}
	if len(byHarness["node"]) != 4 || len(byHarness["native"]) != 4 {
		t.Fatalf("episodes per harness: node %d, native %d; want 4 each", len(byHarness["node"]), len(byHarness["native"]))
	}
	for k, node := range byHarness["node"] {
		if !node.Pass || node.Termination != "done" || node.ToolCalls == 0 {
			t.Errorf("node episode %s: pass %v, termination %q, %d tool calls", k, node.Pass, node.Termination, node.ToolCalls)
		}
		if diff := cmp.Diff(byHarness["native"][k], node); diff != "" {
			t.Errorf("episode %s: node harness vs native (-native +node):\n%s", k, diff)
		}
	}
	// SFT data through the Node harness: each task's prefix and end-to-end
	// records, accepted.
	b, err := os.ReadFile(filepath.Join(out, pipeline.FileSFT))
	if err != nil {
		t.Fatal(err)
	}
	var sft []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r struct {
			Key    string
			Result struct{ Accepted bool }
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", pipeline.FileSFT, err)
		}
		sft = append(sft, fmt.Sprintf("%s accepted=%v", r.Key, r.Result.Accepted))
	}
	slices.Sort(sft)
	want := []string{"end_to_end/0 accepted=true", "end_to_end/1 accepted=true", "prefix/0 accepted=true", "prefix/1 accepted=true"}
	if diff := cmp.Diff(want, sft); diff != "" {
		t.Errorf("%s (-want +got):\n%s", pipeline.FileSFT, diff)
	}
}
