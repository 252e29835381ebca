package cli

import (
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// conformanceChecks is every check of a harness with a settings schema and
// the resume capability, in the order RunHarness runs them.
var conformanceChecks = []string{
	conformance.CheckDescribe, conformance.CheckBasicEpisode, conformance.CheckToolError,
	conformance.CheckMaxTurns, conformance.CheckMaxToolCalls, conformance.CheckTurnDeadline,
	conformance.CheckEpisodeDeadline, conformance.CheckModelFailure, conformance.CheckEnvFailure,
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
	for _, c := range rep.Checks {
		got = append(got, outcome{c.Name, c.Passed, c.Skipped})
		if !c.Passed {
			t.Logf("%s: %s", c.Name, c.Detail)
		}
	}
	for _, name := range conformanceChecks {
		want = append(want, outcome{name, true, false})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("checks (-want +got):\n%s", diff)
	}
	if strings.TrimSpace(stderr) != "" {
		t.Errorf("the host logged warnings or errors:\n%s", stderr)
	}
}

// TestNodeHarnessLifecycle starts the Node.js plugin as weft does: run by
// hand it refuses to serve; started by the host it answers Describe; Kill
// ends it through go-plugin's GRPCController.Shutdown well before the 2 s
// go-plugin waits for a plugin that does not serve it; a host offering only
// a protocol version the plugin does not speak gets a clear error.
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
