package plugin_test

import (
	"bytes"
	"context"
	"errors"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/weft-dev/weft/sdk/failure"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

const pluginEnv = "WEFT_SDK_PLUGIN_TEST_SERVE"

// TestMain turns the test binary into a plugin when pluginEnv is set.
func TestMain(m *testing.M) {
	if os.Getenv(pluginEnv) == "v1" {
		// A plugin built for weft.plugin.v1: go-plugin protocol version 1.
		goplugin.Serve(&goplugin.ServeConfig{
			HandshakeConfig:  goplugin.HandshakeConfig{ProtocolVersion: 1, MagicCookieKey: plugin.MagicCookieKey, MagicCookieValue: plugin.MagicCookieValue},
			VersionedPlugins: map[int]goplugin.PluginSet{1: {plugin.HarnessPlugin: &plugin.HarnessGRPCPlugin{Impl: loopHarness{}}}},
			GRPCServer:       goplugin.DefaultGRPCServer,
		})
		os.Exit(0)
	}
	if os.Getenv(pluginEnv) == "1" {
		logger := hclog.New(&hclog.LoggerOptions{Output: os.Stderr, JSONFormat: true, Level: hclog.Debug})
		plugin.Serve(&plugin.ServeConfig{
			Harness:  loggingHarness{loopHarness{}, logger},
			Verifier: verifier{},
			Logger:   logger,
		})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// loggingHarness logs each Describe (the host's logger must get it) and
// runs callbackHarness when the request's Seed is set.
type loggingHarness struct {
	loopHarness
	log hclog.Logger
}

func (h loggingHarness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	h.log.Info("describe called", "answer", 42)
	return h.loopHarness.Describe(ctx, req, resp)
}

func (h loggingHarness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	if req.GetSeed() > 0 {
		return callbackHarness{}.RunEpisode(ctx, host, req, resp)
	}
	return h.loopHarness.RunEpisode(ctx, host, req, resp)
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startSelf(t testing.TB, logs *syncBuffer) *plugin.Client {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), pluginEnv+"=1")
	var logger *slog.Logger
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	} else {
		logger = slog.New(slog.DiscardHandler)
	}
	c, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: cmd, Logger: logger, StartTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Kill)
	return c
}

func TestSubprocessDescribeAndRunEpisode(t *testing.T) {
	logs := &syncBuffer{}
	c := startSelf(t, logs)
	h, err := c.Harness()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var d plugin.DescribeResponse
	if err := h.Describe(ctx, &plugin.DescribeRequest{}, &d); err != nil {
		t.Fatal(err)
	}
	if d.GetName() != "loop" || d.GetVersion() != "1.0.0" {
		t.Errorf("Describe = %v", &d)
	}
	// The plugin's log line reaches the host's slog logger.
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "describe called") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s := logs.String(); !strings.Contains(s, "describe called") || !strings.Contains(s, "answer=42") {
		t.Errorf("host log lacks the plugin's line:\n%s", s)
	}

	model := plugintest.NewFakeModel(plugintest.Calls(&plugin.ToolCall{Id: "c1", Name: "echo", Arguments: "hi"}), plugintest.Text("done"))
	env := plugintest.NewFakeEnv(map[string]plugintest.ToolFunc{"echo": func(a string) (string, bool, error) { return a, false, nil }})
	req := &plugin.RunEpisodeRequest{}
	var resp plugin.RunEpisodeResponse
	if err := h.RunEpisode(ctx, plugin.HostSet{ModelService: model, EnvService: env, UserService: plugintest.NewFakeUser("go")}, req, &resp); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(req.GetEpisodeId(), "ep_") {
		t.Errorf("generated episode id %q", req.GetEpisodeId())
	}
	if got := resp.GetTrajectory().GetTermination(); got != plugin.TerminationStop || resp.GetTrajectory().GetToolCalls() != 1 {
		t.Errorf("trajectory = %v", resp.GetTrajectory())
	}
	want := []*plugin.CallToolRequest{{EpisodeId: req.GetEpisodeId(), Name: "echo", Arguments: "hi", CallId: "c1"}}
	if diff := cmp.Diff(want, env.Calls(), protocmp.Transform()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if n := c.ActiveEpisodes(); n != 0 {
		t.Errorf("%d episodes still registered", n)
	}

	// HostError from the host reaches the subprocess and comes back as the
	// episode's Failure.
	failing := plugin.ModelFunc(func(context.Context, *plugin.GenerateRequest, *plugin.GenerateResponse) error {
		return &plugin.HostError{Service: "model", Kind: "rate_limited", Message: "429"}
	})
	resp.Reset()
	if err := h.RunEpisode(ctx, plugin.HostSet{ModelService: failing, EnvService: env, UserService: plugintest.NewFakeUser("go")}, &plugin.RunEpisodeRequest{}, &resp); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(plugin.NewFailure("model", "rate_limited", "429"), resp.GetFailure(), protocmp.Transform()); diff != "" {
		t.Errorf("failure (-want +got):\n%s", diff)
	}

	// The plugin serves no attributor: a protocol error.
	a, err := c.Attributor()
	if err != nil {
		t.Fatal(err)
	}
	err = a.Describe(ctx, &plugin.DescribeRequest{}, &plugin.DescribeResponse{})
	var pe *plugin.PluginError
	if !errors.As(err, &pe) || pe.Kind != "protocol" {
		t.Errorf("Describe of an unserved attributor = %v, want PluginError protocol", err)
	}
}

func TestSubprocessKilledMidEpisode(t *testing.T) {
	for _, how := range []string{"Kill", "SIGKILL"} {
		t.Run(how, func(t *testing.T) {
			c := startSelf(t, nil)
			h, err := c.Harness()
			if err != nil {
				t.Fatal(err)
			}
			inCall := make(chan struct{})
			var once sync.Once
			model := plugin.ModelFunc(func(ctx context.Context, _ *plugin.GenerateRequest, _ *plugin.GenerateResponse) error {
				once.Do(func() { close(inCall) })
				<-ctx.Done()
				return ctx.Err()
			})
			errc := make(chan error, 1)
			go func() {
				errc <- h.RunEpisode(context.Background(), plugin.HostSet{ModelService: model}, &plugin.RunEpisodeRequest{Seed: 1}, &plugin.RunEpisodeResponse{})
			}()
			<-inCall
			if c.ActiveEpisodes() != 1 {
				t.Errorf("ActiveEpisodes = %d mid-episode, want 1", c.ActiveEpisodes())
			}
			if how == "Kill" {
				go c.Kill()
			} else if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			var runErr error
			select {
			case runErr = <-errc:
			case <-time.After(15 * time.Second):
				t.Fatal("RunEpisode did not return after the plugin died")
			}
			var pe *plugin.PluginError
			if !errors.As(runErr, &pe) || pe.Kind != "exited" || pe.Plugin != "harness" || !errors.Is(runErr, plugin.ErrPluginExited) {
				t.Fatalf("RunEpisode = %v, want PluginError harness/exited", runErr)
			}
			if n := c.ActiveEpisodes(); n != 0 {
				t.Errorf("%d episodes still registered", n)
			}
			for deadline := time.Now().Add(10 * time.Second); !c.Exited(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("Exited() = false 10 s after the kill")
				}
			}
			// Later calls fail the same way, at once.
			err = h.Describe(context.Background(), &plugin.DescribeRequest{}, &plugin.DescribeResponse{})
			if !errors.Is(err, plugin.ErrPluginExited) {
				t.Errorf("Describe after exit = %v", err)
			}
		})
	}
}

func TestStartNotAPlugin(t *testing.T) {
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
		kind string
	}{
		{"exits", exec.Command("/bin/true"), "exited"},
		{"garbage", exec.Command("/bin/sh", "-c", "echo hello there; exec sleep 10"), "protocol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			c, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: tc.cmd, Logger: slog.New(slog.DiscardHandler), StartTimeout: 10 * time.Second})
			if err == nil {
				c.Kill()
				t.Fatal("Start succeeded")
			}
			var pe *plugin.PluginError
			if !errors.As(err, &pe) || string(pe.Kind) != tc.kind {
				t.Fatalf("Start = %v, want PluginError %s", err, tc.kind)
			}
			if !strings.Contains(err.Error(), "plugin.Serve") {
				t.Errorf("error does not say what a weft plugin is: %v", err)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("Start took %v to fail", time.Since(start))
			}
			t.Log(err)
		})
	}
}

// TestStartV1Plugin: a plugin speaking weft.plugin.v1 is refused at the
// handshake with a PluginError of kind protocol that names both versions.
func TestStartV1Plugin(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), pluginEnv+"=v1")
	c, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: cmd, Logger: slog.New(slog.DiscardHandler), StartTimeout: 20 * time.Second})
	if err == nil {
		c.Kill()
		t.Fatal("Start of a v1 plugin succeeded")
	}
	var pe *plugin.PluginError
	if !errors.As(err, &pe) || pe.Kind != failure.Protocol {
		t.Fatalf("Start = %v, want a PluginError of kind protocol", err)
	}
	for _, want := range []string{"speaks weft.plugin.v1", "needs weft.plugin.v2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestStartCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := plugin.Start(ctx, plugin.StartConfig{Cmd: exec.Command("/bin/sh", "-c", "exec sleep 10"), Logger: slog.New(slog.DiscardHandler)})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Start = %v, want context.Canceled", err)
	}
}
