package plugin_test

import (
	"github.com/weft-dev/weft/sdk/failure"
	"strings"

	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/weft-dev/weft/sdk/plugin"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

func TestHarnessRoundTrip(t *testing.T) {
	model := plugintest.NewFakeModel(
		plugintest.Calls(&plugin.ToolCall{Id: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}),
		plugintest.Text("3"),
	)
	env := plugintest.NewFakeEnv(map[string]plugintest.ToolFunc{
		"add": func(args string) (string, bool, error) { return "3 from " + args, false, nil },
	})
	user := plugintest.NewFakeUser("what is 1+2?")
	req := &plugin.RunEpisodeRequest{EpisodeId: "ep1", SystemPrompt: "be brief", Sampling: &plugin.Sampling{MaxTokens: 64}}
	resp, err := plugintest.RunHarness(t, loopHarness{}, plugin.HostSet{ModelService: model, EnvService: env, UserService: user}, req)
	if err != nil {
		t.Fatal(err)
	}
	li := uint64(0)
	want := &plugin.RunEpisodeResponse{Trajectory: &plugin.Trajectory{
		Messages: []*plugin.Message{
			{Role: "system", Content: "be brief"},
			{Role: "user", Content: "what is 1+2?"},
			{Role: "assistant", ToolCalls: []*plugin.ToolCall{{Id: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}}},
			{Role: "tool", Content: `3 from {"a":1,"b":2}`, ToolCallId: "call_1", Name: "add"},
			{Role: "assistant", Content: "3"},
		},
		Turns: []*plugin.Turn{
			{Index: 0, Response: &plugin.Message{Role: "assistant", ToolCalls: []*plugin.ToolCall{{Id: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}}},
				Calls:   []*plugin.ToolCall{{Id: "call_1", Name: "add", Arguments: `{"a":1,"b":2}`}},
				Results: []*plugin.ToolResult{{CallId: "call_1", Name: "add", Content: `3 from {"a":1,"b":2}`, LedgerIndex: &li}}},
			{Index: 1, Response: &plugin.Message{Role: "assistant", Content: "3"}},
		},
		Termination: "stop",
		ToolCalls:   1,
	}}
	if d := cmp.Diff(want, resp, protocmp.Transform()); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	// Host services saw the episode id on every request.
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model got %d requests, want 2", len(reqs))
	}
	wantGen := &plugin.GenerateRequest{EpisodeId: "ep1", Messages: want.Trajectory.Messages[:2], Tools: []*plugin.Tool{{Name: "add", InputSchema: plugin.MustJSONValue("{}")}}, Sampling: &plugin.Sampling{MaxTokens: 64}, Format: plugin.FormatNative}
	if d := cmp.Diff(wantGen, reqs[0], protocmp.Transform()); d != "" {
		t.Errorf("first Generate request (-want +got):\n%s", d)
	}
	wantCall := []*plugin.CallToolRequest{{EpisodeId: "ep1", Name: "add", Arguments: `{"a":1,"b":2}`, CallId: "call_1"}}
	if d := cmp.Diff(wantCall, env.Calls(), protocmp.Transform()); d != "" {
		t.Errorf("tool calls (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]*plugin.UserRequest{{EpisodeId: "ep1"}}, user.Requests(), protocmp.Transform()); d != "" {
		t.Errorf("user requests (-want +got):\n%s", d)
	}
	if a := req.GetHost(); !strings.HasPrefix(a.GetAddress(), "127.0.0.1:") || len(a.GetToken()) != 32 {
		t.Errorf("RunEpisode set Host %v, want a 127.0.0.1 address and a 32-digit token", a)
	}
}

func TestDescribeRoundTrip(t *testing.T) {
	conn := plugintest.Connect(t, &plugin.ServeConfig{Harness: loopHarness{}, Verifier: verifier{}, Attributor: attributor{}})
	ctx := context.Background()
	type describer interface {
		Describe(context.Context, *plugin.DescribeRequest, *plugin.DescribeResponse) error
	}
	for _, tc := range []struct {
		d    describer
		want *plugin.DescribeResponse
	}{
		{conn.Harness(t), &plugin.DescribeResponse{Name: "loop", Version: "1.0.0", Format: plugin.FormatNative, Capabilities: []string{"test"}}},
		{conn.Verifier(t), &plugin.DescribeResponse{Name: "verifier"}},
		{conn.Attributor(t), &plugin.DescribeResponse{Name: "attributor"}},
	} {
		var got plugin.DescribeResponse
		if err := tc.d.Describe(ctx, &plugin.DescribeRequest{}, &got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, &got, protocmp.Transform()); d != "" {
			t.Errorf("Describe (-want +got):\n%s", d)
		}
	}
}

func TestVerifyAndAttributeRoundTrip(t *testing.T) {
	conn := plugintest.Connect(t, &plugin.ServeConfig{Verifier: verifier{}, Attributor: attributor{}})
	ctx := context.Background()
	var gotQuery *plugin.QueryRequest
	state := plugin.StateFunc(func(_ context.Context, req *plugin.QueryRequest, resp *plugin.QueryResponse) error {
		gotQuery = req
		resp.Columns, resp.Rows = []string{"n"}, []*plugin.ValueList{{Values: []*plugin.Value{{Kind: &pluginpb.Value_IntValue{IntValue: 1}}}}}
		return nil
	})
	var vr plugin.VerifyResponse
	if err := conn.Verifier(t).Verify(ctx, plugin.HostSet{StateService: state}, &plugin.VerifyRequest{EpisodeId: "ep_v"}, &vr); err != nil {
		t.Fatal(err)
	}
	wantV := &plugin.VerifyResponse{Checkpoints: []*plugin.Checkpoint{{Name: "n_is_1", Score: 1, Checks: []*plugin.CheckResult{{Kind: pluginpb.CheckKind_CHECK_KIND_SQL, Passed: true, Evidence: "[n]=[[1]]"}}}}, Score: 1}
	if d := cmp.Diff(wantV, &vr, protocmp.Transform()); d != "" {
		t.Errorf("Verify (-want +got):\n%s", d)
	}
	if d := cmp.Diff(&plugin.QueryRequest{EpisodeId: "ep_v", Version: "final", Sql: "SELECT n FROM t"}, gotQuery, protocmp.Transform()); d != "" {
		t.Errorf("Query request (-want +got):\n%s", d)
	}

	var ar plugin.AttributeResponse
	areq := &plugin.AttributeRequest{EpisodeId: "ep_a", Checkpoints: []*plugin.Checkpoint{{Name: "ok", Score: 1}, {Name: "bad", Score: 0}}}
	if err := conn.Attributor(t).Attribute(ctx, nil, areq, &ar); err != nil {
		t.Fatal(err)
	}
	wantA := &plugin.AttributeResponse{Attributions: []*plugin.Attribution{{Checkpoint: "bad", Blame: plugin.BlamePolicy, Evidence: "ep_a", Revise: "prompt"}}}
	if d := cmp.Diff(wantA, &ar, protocmp.Transform()); d != "" {
		t.Errorf("Attribute (-want +got):\n%s", d)
	}
}

func TestHostErrorReachesPlugin(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want *plugin.Failure
	}{
		{"host error", &plugin.HostError{Service: "model", Kind: "rate_limited", Message: "slow down"}, plugin.NewFailure("model", "rate_limited", "slow down")},
		{"service filled in", &plugin.HostError{Kind: "timeout", Message: "t"}, plugin.NewFailure("model", "timeout", "t")},
		{"plain error", errors.New("boom"), plugin.NewFailure("model", "internal", "boom")},
		{"deadline", context.DeadlineExceeded, plugin.NewFailure("model", "deadline", "context deadline exceeded")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen error
			h := harnessFunc(func(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
				seen = host.Model().Generate(ctx, &plugin.GenerateRequest{}, &plugin.GenerateResponse{})
				resp.Failure = plugin.FailureFromError(seen)
				return nil
			})
			model := plugin.ModelFunc(func(context.Context, *plugin.GenerateRequest, *plugin.GenerateResponse) error { return tc.err })
			resp, err := plugintest.RunHarness(t, h, plugin.HostSet{ModelService: model}, &plugin.RunEpisodeRequest{})
			if err != nil {
				t.Fatal(err)
			}
			var he *plugin.HostError
			if !errors.As(seen, &he) {
				t.Fatalf("plugin saw %T %v, want *HostError", seen, seen)
			}
			if d := cmp.Diff(tc.want, resp.GetFailure(), protocmp.Transform()); d != "" {
				t.Errorf("failure (-want +got):\n%s", d)
			}
		})
	}
}

func TestUnofferedServiceIsUnavailable(t *testing.T) {
	var seen []error
	h := harnessFunc(func(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
		seen = append(seen,
			host.Env().ListTools(ctx, &plugin.ListToolsRequest{}, &plugin.ListToolsResponse{}),
			host.User().Next(ctx, &plugin.UserRequest{}, &plugin.UserResponse{}),
			host.State().Query(ctx, &plugin.QueryRequest{}, &plugin.QueryResponse{}))
		return nil
	})
	if _, err := plugintest.RunHarness(t, h, plugin.HostSet{}, nil); err != nil {
		t.Fatal(err)
	}
	for i, svc := range []failure.Component{failure.Env, failure.User, failure.State} {
		var he *plugin.HostError
		if !errors.As(seen[i], &he) || he.Service != svc || he.Kind != "unavailable" {
			t.Errorf("%s: got %v, want HostError %s/unavailable", svc, seen[i], svc)
		}
	}
}

func TestPluginErrorReachesHost(t *testing.T) {
	_, err := plugintest.RunHarness(t, loopHarness{}, plugin.HostSet{}, &plugin.RunEpisodeRequest{Settings: plugin.MustJSONValue(`"fail"`)})
	var pe *plugin.PluginError
	if !errors.As(err, &pe) || pe.Kind != "error" || pe.Plugin != "harness" || pe.Err.Error() != "harness refused the settings" {
		t.Fatalf("got %#v, want PluginError harness/error", err)
	}
	if errors.Is(err, plugin.ErrPluginExited) {
		t.Error("an error return matches ErrPluginExited")
	}
	// A harness returning its host's failure: the host gets the *HostError.
	h := harnessFunc(func(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
		return host.Model().Generate(ctx, &plugin.GenerateRequest{}, &plugin.GenerateResponse{})
	})
	model := plugin.ModelFunc(func(context.Context, *plugin.GenerateRequest, *plugin.GenerateResponse) error {
		return &plugin.HostError{Service: "model", Kind: "trap", Message: "m"}
	})
	_, err = plugintest.RunHarness(t, h, plugin.HostSet{ModelService: model}, nil)
	var he *plugin.HostError
	if !errors.As(err, &he) || *he != (plugin.HostError{Service: "model", Kind: "trap", Message: "m"}) {
		t.Fatalf("got %v, want the HostError", err)
	}
}

type harnessFunc func(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error

func (harnessFunc) Describe(context.Context, *plugin.DescribeRequest, *plugin.DescribeResponse) error {
	return nil
}

func (f harnessFunc) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	return f(ctx, host, req, resp)
}
