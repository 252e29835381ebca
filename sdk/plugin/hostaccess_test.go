package plugin_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/weft-dev/weft/sdk/plugin"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// accessHarness calls the host's Model at req.Host the way a non-Go
// plugin would: a plain gRPC connection, with and without the token.
type accessHarness struct{ loopHarness }

func (accessHarness) RunEpisode(ctx context.Context, _ plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	conn, err := grpc.NewClient("passthrough:///"+req.GetHost().GetAddress(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	m := pluginpb.NewModelClient(conn)
	g := &plugin.GenerateRequest{EpisodeId: req.GetEpisodeId()}
	_, noToken := m.Generate(ctx, g)
	_, badToken := m.Generate(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer nope"), g)
	out, okErr := m.Generate(metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+req.GetHost().GetToken()), g)
	resp.Trajectory = &plugin.Trajectory{Termination: strings.Join([]string{
		status.Code(noToken).String(), status.Code(badToken).String(), status.Code(okErr).String(), out.GetMessage().GetContent(),
	}, ",")}
	return nil
}

func TestHostServicesAtAddressNeedToken(t *testing.T) {
	conn := plugintest.Connect(t, &plugin.ServeConfig{Harness: accessHarness{}})
	host := plugin.HostSet{ModelService: plugin.ModelFunc(func(_ context.Context, _ *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
		resp.Message = &plugin.Message{Role: plugin.RoleAssistant, Content: "hi"}
		return nil
	})}
	var resp plugin.RunEpisodeResponse
	if err := conn.Harness(t).RunEpisode(context.Background(), host, &plugin.RunEpisodeRequest{EpisodeId: "ep_tok"}, &resp); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{codes.Unauthenticated.String(), codes.Unauthenticated.String(), codes.OK.String(), "hi"}, ",")
	if got := resp.GetTrajectory().GetTermination(); got != want {
		t.Errorf("no token, wrong token, right token = %s, want %s", got, want)
	}
}
