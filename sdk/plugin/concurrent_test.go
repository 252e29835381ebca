package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

func TestConcurrentEpisodesStayApart(t *testing.T) {
	const n = 16
	hc := plugintest.Connect(t, &plugin.ServeConfig{Harness: loopHarness{}}).Harness(t)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ep := fmt.Sprintf("ep_%02d", i)
			tag := fmt.Sprintf("tool-%02d", i)
			model := plugintest.NewFakeModel()
			turn := 0
			model.Func = func(_ context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
				turn++
				if turn <= 3 {
					resp.Message = &plugin.Message{Role: plugin.RoleAssistant, ToolCalls: []*plugin.ToolCall{{Id: fmt.Sprintf("c%d", turn), Name: tag, Arguments: ep}}}
					return nil
				}
				resp.Message = &plugin.Message{Role: plugin.RoleAssistant, Content: ep}
				return nil
			}
			env := plugintest.NewFakeEnv(map[string]plugintest.ToolFunc{tag: func(args string) (string, bool, error) { return args, false, nil }})
			user := plugintest.NewFakeUser("hello " + ep)
			var resp plugin.RunEpisodeResponse
			if err := hc.RunEpisode(context.Background(), plugin.HostSet{ModelService: model, EnvService: env, UserService: user}, &plugin.RunEpisodeRequest{EpisodeId: ep}, &resp); err != nil {
				errs[i] = err
				return
			}
			check := func(cond bool, format string, args ...any) {
				if !cond && errs[i] == nil {
					errs[i] = fmt.Errorf("%s: "+format, append([]any{ep}, args...)...)
				}
			}
			for _, r := range model.Requests() {
				check(r.GetEpisodeId() == ep, "model saw episode %q", r.GetEpisodeId())
				check(r.GetMessages()[1].GetContent() == "hello "+ep, "model saw user message %q", r.GetMessages()[1].GetContent())
			}
			calls := env.Calls()
			check(len(calls) == 3, "%d tool calls, want 3", len(calls))
			for _, c := range calls {
				check(c.GetEpisodeId() == ep && c.GetName() == tag && c.GetArguments() == ep, "env saw %v", c)
			}
			tr := resp.GetTrajectory()
			check(tr.GetToolCalls() == 3 && tr.GetMessages()[len(tr.GetMessages())-1].GetContent() == ep, "trajectory %v", tr)
			for _, turn := range tr.GetTurns() {
				for _, r := range turn.GetResults() {
					check(r.GetContent() == ep, "tool result %q", r.GetContent())
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestDuplicateEpisodeRefused(t *testing.T) {
	hc := plugintest.Connect(t, &plugin.ServeConfig{Harness: loopHarness{}}).Harness(t)
	inCall, release := make(chan struct{}), make(chan struct{})
	model := plugin.ModelFunc(func(context.Context, *plugin.GenerateRequest, *plugin.GenerateResponse) error {
		close(inCall)
		<-release
		return &plugin.HostError{Service: "model", Kind: "unavailable", Message: "x"}
	})
	done := make(chan error, 1)
	go func() {
		done <- hc.RunEpisode(context.Background(), plugin.HostSet{ModelService: model, EnvService: plugintest.NewFakeEnv(nil), UserService: plugintest.NewFakeUser("hi")}, &plugin.RunEpisodeRequest{EpisodeId: "same"}, &plugin.RunEpisodeResponse{})
	}()
	<-inCall
	err := hc.RunEpisode(context.Background(), plugin.HostSet{}, &plugin.RunEpisodeRequest{EpisodeId: "same"}, &plugin.RunEpisodeResponse{})
	if !errors.Is(err, plugin.ErrDuplicateEpisode) {
		t.Errorf("second episode %q = %v, want ErrDuplicateEpisode", "same", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestRunEpisodeDeadline(t *testing.T) {
	hc := plugintest.Connect(t, &plugin.ServeConfig{Harness: loopHarness{}}).Harness(t)
	ctx, cancel := context.WithCancel(context.Background())
	model := plugin.ModelFunc(func(mctx context.Context, _ *plugin.GenerateRequest, _ *plugin.GenerateResponse) error {
		cancel()
		<-mctx.Done()
		return mctx.Err()
	})
	err := hc.RunEpisode(ctx, plugin.HostSet{ModelService: model, EnvService: plugintest.NewFakeEnv(nil), UserService: plugintest.NewFakeUser("hi")}, &plugin.RunEpisodeRequest{}, &plugin.RunEpisodeResponse{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunEpisode = %v, want context.Canceled", err)
	}
	var pe *plugin.PluginError
	if errors.As(err, &pe) {
		t.Errorf("cancellation is a PluginError: %v", err)
	}
}
