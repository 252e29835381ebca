//go:build unix

package cli

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/weft-dev/weft/sdk/plugin"
	pluginv2 "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// v2Harness is a go-plugin plugin of protocol version 2 whose client is the
// generated weft.plugin.v2 Harness client (the host side only).
type v2Harness struct {
	goplugin.NetRPCUnsupportedPlugin
}

func (v2Harness) GRPCServer(*goplugin.GRPCBroker, *grpc.Server) error {
	return errors.New("host side only")
}

func (v2Harness) GRPCClient(_ context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return pluginv2.NewHarnessClient(c), nil
}

// v2Host serves weft.plugin.v2's Model, Env and User on loopback to callers
// with the bearer token: the model calls echo once, then answers; Env
// fails with a trap when failEnv is set.
type v2Host struct {
	pluginv2.UnimplementedModelServer
	pluginv2.UnimplementedEnvServer
	pluginv2.UnimplementedUserServer
	failEnv bool
	gens    int
	nexts   int
	calls   []*pluginv2.CallToolRequest
}

const v2Token = "go-host-token-81"

var trap = &pluginv2.Failure{Component: pluginv2.Component_COMPONENT_ENV, Kind: pluginv2.FailureKind_FAILURE_KIND_TRAP, Message: "the module trapped"}

func (h *v2Host) Generate(_ context.Context, req *pluginv2.GenerateRequest) (*pluginv2.GenerateResponse, error) {
	h.gens++
	if h.gens == 1 {
		return &pluginv2.GenerateResponse{Message: &pluginv2.Message{Role: "assistant",
			ToolCalls: []*pluginv2.ToolCall{{Id: "call_a", Name: "echo", Arguments: `{"text":"hi"}`}}}}, nil
	}
	return &pluginv2.GenerateResponse{Message: &pluginv2.Message{Role: "assistant", Content: "Done: hi"}}, nil
}

func (h *v2Host) ListTools(context.Context, *pluginv2.ListToolsRequest) (*pluginv2.ListToolsResponse, error) {
	return &pluginv2.ListToolsResponse{Tools: []*pluginv2.Tool{{Name: "echo"}}}, nil
}

func (h *v2Host) CallTool(_ context.Context, req *pluginv2.CallToolRequest) (*pluginv2.CallToolResponse, error) {
	h.calls = append(h.calls, req)
	if h.failEnv {
		st, err := status.New(codes.Aborted, trap.Message).WithDetails(trap)
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}
	return &pluginv2.CallToolResponse{Content: "echo: hi", LedgerIndex: 1 << 40}, nil
}

func (h *v2Host) Next(context.Context, *pluginv2.UserRequest) (*pluginv2.UserResponse, error) {
	h.nexts++
	if h.nexts == 1 {
		return &pluginv2.UserResponse{Content: "Please echo hi."}, nil
	}
	return &pluginv2.UserResponse{Done: true}, nil
}

func serveV2Host(t *testing.T, h *v2Host) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	auth := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer "+v2Token {
			return nil, status.Error(codes.Unauthenticated, "no or wrong bearer token")
		}
		return next(ctx, req)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(auth))
	pluginv2.RegisterModelServer(s, h)
	pluginv2.RegisterEnvServer(s, h)
	pluginv2.RegisterUserServer(s, h)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

func obj(key string, v *pluginv2.Value) *pluginv2.Value {
	return &pluginv2.Value{Kind: &pluginv2.Value_ObjectValue{ObjectValue: &pluginv2.ValueObject{
		Fields: []*pluginv2.ObjectField{{Key: key, Value: v}}}}}
}

func str(s string) *pluginv2.Value {
	return &pluginv2.Value{Kind: &pluginv2.Value_StringValue{StringValue: s}}
}

// TestNodeHarnessV2GoHost runs the Node.js plugin over weft.plugin.v2 from
// a Go host built on go-plugin and the generated pluginpb/v2 code: the
// handshake negotiates version 2, host services are reached at
// HostAccess.address with the bearer token, an int64 ledger index above
// 2^32 stays exact, the host's Failure detail comes back as the response's
// failure, and refused settings are status Unknown with a Failure detail.
func TestNodeHarnessV2GoHost(t *testing.T) {
	bin := nodeHarness(t)
	gp := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig: goplugin.HandshakeConfig{ProtocolVersion: 2,
			MagicCookieKey: plugin.MagicCookieKey, MagicCookieValue: plugin.MagicCookieValue},
		VersionedPlugins: map[int]goplugin.PluginSet{2: {plugin.HarnessPlugin: v2Harness{}}},
		Cmd:              exec.Command(bin),
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           hclog.NewNullLogger(),
	})
	t.Cleanup(gp.Kill)
	cp, err := gp.Client()
	if err != nil {
		t.Fatal(err)
	}
	if v := gp.NegotiatedVersion(); v != 2 {
		t.Fatalf("negotiated protocol version %d, want 2", v)
	}
	raw, err := cp.Dispense(plugin.HarnessPlugin)
	if err != nil {
		t.Fatal(err)
	}
	h := raw.(pluginv2.HarnessClient)
	ctx := t.Context()

	d, err := h.Describe(ctx, &pluginv2.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	var ap *pluginv2.Value
	for _, f := range d.GetSettingsSchema().GetObjectValue().GetFields() {
		keys = append(keys, f.Key)
		if f.Key == "additionalProperties" {
			ap = f.Value
		}
	}
	if diff := cmp.Diff([]string{"type", "additionalProperties", "properties"}, keys); diff != "" {
		t.Errorf("settings schema keys, in order (-want +got):\n%s", diff)
	}
	if d.Name != "node-harness" || d.Format != pluginv2.OutputFormat_OUTPUT_FORMAT_NATIVE || ap == nil || ap.GetBoolValue() {
		t.Errorf("describe: %v", d)
	}

	host := &v2Host{}
	addr := serveV2Host(t, host)
	resp, err := h.RunEpisode(ctx, &pluginv2.RunEpisodeRequest{EpisodeId: "ep-go", Host: &pluginv2.HostAccess{Address: addr, Token: v2Token},
		SystemPrompt: "Be brief.", Limits: &pluginv2.Limits{}, Settings: obj("instructions", str("Use echo."))})
	if err != nil {
		t.Fatal(err)
	}
	tr := resp.GetTrajectory()
	var roles []string
	for _, m := range tr.GetMessages() {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "tool", "assistant"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if resp.Failure != nil || tr.Termination != "done" || tr.Messages[0].Content != "Be brief.\n\nUse echo." ||
		len(tr.Turns) != 2 || len(tr.Turns[0].Results) != 1 || tr.Turns[0].Results[0].GetLedgerIndex() != 1<<40 {
		t.Errorf("episode: %v", resp)
	}
	if len(host.calls) != 1 || host.calls[0].EpisodeId != "ep-go" || host.calls[0].CallId != "call_a" {
		t.Errorf("Env calls: %v", host.calls)
	}

	failing := &v2Host{failEnv: true}
	resp, err = h.RunEpisode(ctx, &pluginv2.RunEpisodeRequest{EpisodeId: "ep-trap",
		Host: &pluginv2.HostAccess{Address: serveV2Host(t, failing), Token: v2Token}, Limits: &pluginv2.Limits{}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(trap, resp.Failure, protocmp.Transform()); diff != "" || resp.GetTrajectory().GetTermination() != "failure" {
		t.Errorf("termination %q; failure (-want +got):\n%s", resp.GetTrajectory().GetTermination(), diff)
	}

	_, err = h.RunEpisode(ctx, &pluginv2.RunEpisodeRequest{EpisodeId: "ep-set", Host: &pluginv2.HostAccess{Address: addr, Token: v2Token},
		Settings: obj("nope", str("x"))})
	st, _ := status.FromError(err)
	var detail *pluginv2.Failure
	for _, d := range st.Details() {
		if f, ok := d.(*pluginv2.Failure); ok {
			detail = f
		}
	}
	want := &pluginv2.Failure{Component: pluginv2.Component_COMPONENT_PLUGIN, Kind: pluginv2.FailureKind_FAILURE_KIND_ERROR, Message: st.Message()}
	if st.Code() != codes.Unknown || !strings.Contains(st.Message(), `unknown setting "nope"`) || !proto.Equal(detail, want) {
		t.Errorf("refused settings: code %v, message %q, detail %v", st.Code(), st.Message(), detail)
	}
}
