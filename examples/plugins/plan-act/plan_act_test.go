package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/conformance"
)

// goTool returns the go command, skipping the test when there is none.
func goTool(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH: cannot build the plan-act binary or list its dependencies")
	}
	return p
}

// TestConformanceBinary builds the plugin binary, launches it as weft
// does and runs the conformance harness against it over gRPC.
func TestConformanceBinary(t *testing.T) {
	goBin := goTool(t)
	bin := filepath.Join(t.TempDir(), "plan-act")
	out, err := exec.Command(goBin, "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	client, err := plugin.Start(t.Context(), plugin.StartConfig{Cmd: exec.Command(bin), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(client.Kill)
	h, err := client.Harness()
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, h, conformance.Options{})
	if client.Exited() {
		t.Error("the plugin process exited during the conformance run")
	}
}

// TestConformanceInProcess runs the same checks on the harness in process,
// where the race detector sees its code.
func TestConformanceInProcess(t *testing.T) {
	conformance.Run(t, harness{}, conformance.Options{})
}

// TestImportsOnlySDK proves the example is built against sdk/ alone.
func TestImportsOnlySDK(t *testing.T) {
	goBin := goTool(t)
	out, err := exec.Command(goBin, "list", "-deps", "-test", "-json=ImportPath", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/weft-dev/weft/"
	dec := json.NewDecoder(strings.NewReader(string(out)))
	sdk := 0
	for dec.More() {
		var p struct{ ImportPath string }
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		rest, ok := strings.CutPrefix(p.ImportPath, mod)
		if !ok {
			continue
		}
		for _, banned := range []string{"core", "hosts", "megamcp", "plugins", "internal"} {
			if rest == banned || strings.HasPrefix(rest, banned+"/") {
				t.Errorf("plan-act depends on %s", p.ImportPath)
			}
		}
		if strings.HasPrefix(rest, "sdk/") {
			sdk++
		}
	}
	if sdk < 3 { // sdk/plugin, sdk/plugin/pluginpb, sdk/plugin/conformance
		t.Errorf("only %d sdk packages among the dependencies; go list output unexpected", sdk)
	}
}

func TestSettings(t *testing.T) {
	for s, want := range map[string]bool{"": true, `{}`: true, `{"pin_plan":false}`: false, `{"pin_plan":true}`: true} {
		if got, err := settings(s); err != nil || got != want {
			t.Errorf("settings(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{`{"pin":true}`, `[1]`, `{"pin_plan":"yes"}`} {
		if _, err := settings(s); err == nil {
			t.Errorf("settings(%q) accepted", s)
		}
	}
}

// The plan written with the first tool call is pinned into the system
// prompt of the next turn.
func TestPlanPinned(t *testing.T) {
	var prompts [][]*plugin.Message
	n := 0
	host := &plugin.HostSet{
		ModelService: plugin.ModelFunc(func(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
			prompts = append(prompts, req.Messages)
			n++
			resp.Message = &plugin.Message{Role: "assistant", Content: "done"}
			if n == 1 {
				resp.Message = &plugin.Message{Role: "assistant", Content: "1. look up\n2. answer",
					ToolCalls: []*plugin.ToolCall{{Id: "c1", Name: "echo", Arguments: `{}`}}}
			}
			return nil
		}),
		EnvService: plugin.EnvFuncs{
			List: func(ctx context.Context, req *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
				resp.Tools = []*plugin.Tool{{Name: "echo"}}
				return nil
			},
			Call: func(ctx context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
				resp.Content = "ok"
				return nil
			},
		},
		UserService: plugin.UserFunc(func(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
			resp.Content, resp.Done = "hi", len(req.Messages) > 0
			return nil
		}),
	}
	var resp plugin.RunEpisodeResponse
	if err := (harness{}).RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{SystemPrompt: "policy"}, &resp); err != nil {
		t.Fatal(err)
	}
	if resp.Trajectory.Termination != plugin.TerminationDone || len(prompts) != 2 {
		t.Fatalf("termination %q after %d generations", resp.Trajectory.Termination, len(prompts))
	}
	if s := prompts[0][0].Content; strings.Contains(s, "Your plan") || !strings.HasPrefix(s, "policy\n\n") {
		t.Errorf("first system prompt %q", s)
	}
	if s := prompts[1][0].Content; !strings.HasSuffix(s, "Your plan (keep to it, revise it if needed):\n1. look up\n2. answer") {
		t.Errorf("second system prompt lacks the plan: %q", s)
	}
}
