package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model/modeltest"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/sdk/plugin"
)

// serveNoResume makes the test binary serve the native harness without the
// resume capability (a harness written before it existed).
const serveNoResume = "serve-noresume"

type noResume struct{ plugin.Harness }

func (h noResume) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	if err := h.Harness.Describe(ctx, req, resp); err != nil {
		return err
	}
	resp.Name = "old-native"
	resp.Capabilities = slices.DeleteFunc(resp.Capabilities, func(c string) bool { return c == plugin.CapabilityResume })
	return nil
}

func serveWithoutResume() {
	h, _ := builtin.Harness("native")
	plugin.Serve(&plugin.ServeConfig{Harness: noResume{h}})
	os.Exit(0)
}

// folderState is every file under dir with its content and mode (nil when
// dir does not exist).
func folderState(t *testing.T, dir string) map[string]string {
	t.Helper()
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return nil
	}
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		v := info.Mode().String() + " " + info.ModTime().String()
		if !d.IsDir() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += " " + string(b)
		}
		out[strings.TrimPrefix(p, dir)] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The preflight refuses each broken outside dependency before anything is
// built or written: the error is at the config attribute at fault
// (file:line:col), the exit status is 1, and the run folder is as it was:
// a folder with an earlier run's files keeps them byte for byte (no
// config.json, journal or lock written), a folder that did not exist is
// not created. With --json the steps are JSON lines on stderr and stdout
// is one object with the diagnostics.
func TestRunPreflightFailures(t *testing.T) {
	root := megamcptest.Root()
	srv := modeltest.NewServer(t, modeltest.WithModels("test-model"))
	noV1 := strings.TrimSuffix(srv.URL(), "/v1")
	dead := closedURL(t)
	endpoint := func(base, modelName string) string {
		return fmt.Sprintf(`policy "model" {
  endpoint {
    base_url = @"%s"
    model    = "%s"
  }
}
`, base, modelName)
	}
	base := baseConfig(root)
	replace := func(src, old, new string) string {
		t.Helper()
		if strings.Count(src, old) != 1 {
			t.Fatalf("%q is not in the config exactly once", old)
		}
		return strings.Replace(src, old, new, 1)
	}
	withModel := func(base0, ep string) string {
		return replace(base0, "rollout {\n  policy            = \"scripted\"", ep+"rollout {\n  policy            = \"model\"")
	}
	tests := []struct {
		name    string
		src     string // with an @ where the diagnostic points
		summary string
		detail  string // a part of the diagnostic's detail
	}{
		{"unreachable endpoint", withModel(base, endpoint(dead, "test-model")), "Model endpoint unreachable",
			`Policy "model": model: ` + dead + `/models: unavailable: Get "` + dead + `/models": dial tcp ` + strings.TrimSuffix(strings.TrimPrefix(dead, "http://"), "/v1") + `: connect: connection refused. Is the server running and listening there? (weft run --skip-preflight starts the run anyway.)`},
		{"base_url without /v1", withModel(base, endpoint(noV1, "test-model")), "Model endpoint refused the probe",
			`Policy "model": model: ` + noV1 + `/models: bad_request (HTTP 404): base_url "` + noV1 + `" has no version path: the client posts to ` + noV1 + `/chat/completions; OpenAI-compatible servers serve it under /v1 (try "` + noV1 + `/v1").`},
		{"sft harness cannot resume", replace(replace(base, `harness "native" {}`, fmt.Sprintf("harness \"native\" {}\nharness \"old\" {\n  binary = %q\n  args   = [%q]\n}", os.Args[0], serveNoResume)),
			"  view    = \"agentic\"\n  harness = \"native\"\n}\n\ngrpo", "  view    = \"agentic\"\n  harness = @\"old\"\n}\n\ngrpo"),
			"Harness cannot resume",
			`The sft stage runs harness "old", which does not declare the "resume" capability (old-native 1.0.0 declares ["parallel_calls" "skills" "tool_filter"]): turn-by-turn sampling resumes conversations (RunEpisodeRequest.history). Use a harness that does (the built-ins do) or add resume support (docs/plugins.md).`},
		{"bad harness settings", replace(base, `harness "native" {}`, "harness \"native\" {\n  settings = @{ tone = \"warm\" }\n}"),
			"Invalid harness settings",
			`The settings of harness "native" do not match its settings_schema: at the top level: additional properties 'tone' not allowed.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			src, line, col := diagAt(t, tc.src)
			file := filepath.Join(dir, "preflight.hcl")
			if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			want := fmt.Sprintf("%s:%d:%d: error: %s; %s", file, line, col, tc.summary, tc.detail)

			// A folder that does not exist stays absent (text mode).
			out := filepath.Join(dir, "out")
			code, stdout, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
			}
			if !strings.Contains(stderr, want+"\n") {
				t.Errorf("stderr lacks\n%s\nin:\n%s", want, stderr)
			}
			if n := strings.Count(stderr, ": error: "); n != 1 {
				t.Errorf("stderr has %d error diagnostics, want 1:\n%s", n, stderr)
			}
			if end := "weft: " + file + ": preflight failed: 1 error; nothing was built or written\n"; !strings.HasSuffix(stderr, end) {
				t.Errorf("stderr does not end with %q:\n%s", end, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want empty", stdout)
			}
			for _, p := range []string{out, filepath.Join(dir, "runs"), filepath.Join(dir, "reg")} {
				if _, err := os.Stat(p); !os.IsNotExist(err) {
					t.Errorf("%s exists after a failed preflight (stat: %v)", p, err)
				}
			}

			// A folder holding an earlier run (of the same experiment: one
			// of another is refused before the preflight) is left byte for
			// byte, its time included: no config.json rewritten, no lock
			// left, no "another experiment" (--json mode).
			old := filepath.Join(dir, "old")
			if err := os.MkdirAll(filepath.Join(old, "datasets"), 0o755); err != nil {
				t.Fatal(err)
			}
			loaded, diags := config.Load(file, config.LoadOptions{})
			if loaded == nil {
				t.Fatalf("config: %v", diags)
			}
			for name, content := range map[string]string{"config.json": string(loaded.Resolved()),
				"episodes.jsonl": `{"key": "1/agentic/native/scripted/0", "score": 1}` + "\n", "datasets/sft.trl.jsonl": "{}\n"} {
				if err := os.WriteFile(filepath.Join(old, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			before := folderState(t, old)
			code, stdout, stderr = weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", old, "--json")
			if code != ExitError {
				t.Fatalf("--json: exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
			}
			if diff := cmp.Diff(before, folderState(t, old)); diff != "" {
				t.Errorf("the run folder changed (-before +after):\n%s", diff)
			}
			if strings.Contains(stderr, "another experiment") {
				t.Errorf("stderr speaks of another experiment:\n%s", stderr)
			}
			decodeOneObject(t, stdout)
			var res struct {
				Dir       string
				Metrics   map[string]any
				Preflight struct {
					OK          bool
					Steps       []map[string]any
					Diagnostics []map[string]any
				}
			}
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatal(err)
			}
			if res.Dir != old || res.Metrics != nil || res.Preflight.OK || len(res.Preflight.Diagnostics) != 1 {
				t.Fatalf("--json result %s", stdout)
			}
			d := res.Preflight.Diagnostics[0]
			if d["summary"] != tc.summary || d["detail"] != tc.detail || d["filename"] != file || d["line"] != float64(line) || d["column"] != float64(col) {
				t.Errorf("diagnostic %v, want %s:%d:%d %s; %s", d, file, line, col, tc.summary, tc.detail)
			}
			// Each step is a JSON line on stderr ({"preflight": step}),
			// as in stdout's steps; one failed.
			var failed []string
			n := 0
			for _, l := range strings.Split(stderr, "\n") {
				if !strings.HasPrefix(l, "{") {
					continue
				}
				var ev struct {
					Preflight map[string]any `json:"preflight"`
				}
				if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Preflight == nil {
					t.Fatalf("stderr line %q: %v", l, err)
				}
				if ev.Preflight["ok"] != true {
					failed = append(failed, fmt.Sprint(ev.Preflight["check"]))
				}
				n++
			}
			if n != len(res.Preflight.Steps) || len(failed) != 1 {
				t.Errorf("stderr has %d step lines (failed: %v), stdout %d steps; want equal, one failed", n, failed, len(res.Preflight.Steps))
			}
		})
	}
}

// --preflight-only checks and stops: the offline config passes, the
// folder is not created, and the steps are the tasks and each harness; an
// endpoint that serves the model is listed as such.
func TestRunPreflightOnly(t *testing.T) {
	root := megamcptest.Root()
	srv := modeltest.NewServer(t, modeltest.WithModels("other", "test-model"))
	src := strings.Replace(baseConfig(root), "rollout {\n  policy            = \"scripted\"",
		fmt.Sprintf("policy \"model\" {\n  endpoint {\n    base_url = %q\n    model    = \"test-model\"\n  }\n}\nrollout {\n  policy            = \"model\"", srv.URL()), 1)
	dir := t.TempDir()
	file := filepath.Join(dir, "ok.hcl")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, stdout, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out, "--preflight-only", "--json")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	var res struct {
		Preflight struct {
			OK    bool
			Steps []struct {
				Check, Block, Target, Detail string
				OK                           bool
			}
		}
		Metrics map[string]any
	}
	decodeOneObject(t, stdout)
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range res.Preflight.Steps {
		got = append(got, fmt.Sprintf("%s %s %s %v", s.Check, s.Block, s.Target, s.OK))
	}
	want := []string{
		"tasks tasks 1 task sets true",
		`endpoint policy "model" test-model at ` + srv.URL() + " true",
		`harness harness "native" built-in native true`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	if d := res.Preflight.Steps[1].Detail; d != srv.URL()+`/models lists "test-model" (2 models)` {
		t.Errorf("endpoint detail %q", d)
	}
	if !res.Preflight.OK || res.Metrics != nil {
		t.Errorf("result %s", stdout)
	}
	if srv.Count() != 0 {
		t.Errorf("%d chat requests, want 0 (the models list names the model)", srv.Count())
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s exists after --preflight-only (stat: %v)", out, err)
	}
	// Text mode: a line per step on stderr, the verdict on stdout.
	code, stdout, stderr = weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--out", out, "--preflight-only")
	if code != ExitOK || stdout != file+": preflight ok (3 checks); weft run without --preflight-only starts the run\n" {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, `preflight ok     endpoint   policy "model" (test-model at `+srv.URL()+`): `+srv.URL()+`/models lists "test-model" (2 models) (`) {
		t.Errorf("stderr lacks the endpoint line:\n%s", stderr)
	}
	// The two flags exclude each other.
	if code, _, stderr := weftRun(t, context.Background(), filepath.Join(dir, "reg"), file, "--preflight-only", "--skip-preflight"); code != ExitUsage {
		t.Errorf("both flags: exit %d, want %d: %s", code, ExitUsage, stderr)
	}
}

// Ctrl-C during the preflight exits 130 with nothing built or written.
func TestRunPreflightInterrupted(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "ok.hcl")
	if err := os.WriteFile(file, []byte(baseConfig(megamcptest.Root())), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := filepath.Join(dir, "out")
	code, stdout, stderr := weftRun(t, ctx, filepath.Join(dir, "reg"), file, "--out", out)
	if code != 130 || !strings.HasSuffix(stderr, "weft run: interrupted during the preflight; nothing was built or written\n") || stdout != "" {
		t.Fatalf("exit %d, want 130\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	for _, p := range []string{out, filepath.Join(dir, "reg")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s exists after an interrupted preflight (stat: %v)", p, err)
		}
	}
}
