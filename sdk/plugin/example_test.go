package plugin_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// echoHarness asks the user for the opening message, sends it to the
// model once and ends the episode with the model's answer.
type echoHarness struct{}

func (echoHarness) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Format = "echo", plugin.FormatNative
	return nil
}

func (echoHarness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	resp.Trajectory = &plugin.Trajectory{}
	var user plugin.UserResponse
	if err := host.User().Next(ctx, &plugin.UserRequest{}, &user); err != nil {
		resp.Failure = plugin.FailureFromError(err)
		return nil
	}
	prompt := []*plugin.Message{{Role: plugin.RoleSystem, Content: req.GetSystemPrompt()}, {Role: plugin.RoleUser, Content: user.GetContent()}}
	var gen plugin.GenerateResponse
	if err := host.Model().Generate(ctx, &plugin.GenerateRequest{Messages: prompt}, &gen); err != nil {
		resp.Failure = plugin.FailureFromError(err)
		return nil
	}
	resp.Trajectory.Messages = append(prompt, gen.GetMessage())
	resp.Trajectory.Termination = plugin.TerminationStop
	return nil
}

// An in-process run of a small harness against fake host services: the
// episode goes through the real gRPC adapters and broker callbacks.
func Example() {
	t := &testing.T{} // in a test, use the test's t
	model := plugintest.NewFakeModel(plugintest.Text("Hello, Ada!"))
	host := plugin.HostSet{ModelService: model, UserService: plugintest.NewFakeUser("I am Ada.")}
	resp, err := plugintest.RunHarness(t, echoHarness{}, host, &plugin.RunEpisodeRequest{EpisodeId: "ep_1", SystemPrompt: "Greet the user."})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range resp.GetTrajectory().GetMessages() {
		fmt.Printf("%s: %s\n", m.GetRole(), m.GetContent())
	}
	fmt.Println("termination:", resp.GetTrajectory().GetTermination())
	fmt.Println("model saw episode:", model.Requests()[0].GetEpisodeId())
	// Output:
	// system: Greet the user.
	// user: I am Ada.
	// assistant: Hello, Ada!
	// termination: stop
	// model saw episode: ep_1
}
