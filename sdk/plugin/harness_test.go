package plugin_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/weft-dev/weft/sdk/plugin"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// loopHarness is the test harness: the user's opening message, then model
// turns (running each native tool call through Env) until the model
// answers in text, at most MaxTurns turns.
type loopHarness struct{}

func (loopHarness) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version, resp.Format = "loop", "1.0.0", plugin.FormatNative
	resp.Capabilities = []string{"test"}
	return nil
}

func (loopHarness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	if plugin.SettingsJSON(req.GetSettings()) == `"fail"` {
		return errors.New("harness refused the settings")
	}
	traj := &plugin.Trajectory{}
	resp.Trajectory = traj
	fail := func(err error) error {
		resp.Failure = plugin.FailureFromError(err)
		traj.Termination = plugin.TerminationFailure
		return nil
	}
	var u plugin.UserResponse
	if err := host.User().Next(ctx, &plugin.UserRequest{}, &u); err != nil {
		return fail(err)
	}
	msgs := []*plugin.Message{{Role: plugin.RoleSystem, Content: req.GetSystemPrompt()}, {Role: plugin.RoleUser, Content: u.GetContent()}}
	var tools plugin.ListToolsResponse
	if err := host.Env().ListTools(ctx, &plugin.ListToolsRequest{}, &tools); err != nil {
		return fail(err)
	}
	maxTurns := int(req.GetLimits().GetMaxTurns())
	if maxTurns == 0 {
		maxTurns = 10
	}
	for i := 0; i < maxTurns; i++ {
		var g plugin.GenerateResponse
		if err := host.Model().Generate(ctx, &plugin.GenerateRequest{Messages: msgs, Tools: tools.GetTools(), Sampling: req.GetSampling(), Format: plugin.FormatNative}, &g); err != nil {
			return fail(err)
		}
		turn := &plugin.Turn{Index: int32(i), Response: g.GetMessage(), Calls: g.GetMessage().GetToolCalls()}
		traj.Turns = append(traj.Turns, turn)
		msgs = append(msgs, g.GetMessage())
		if len(turn.Calls) == 0 {
			traj.Messages = msgs
			traj.Termination = plugin.TerminationStop
			return nil
		}
		for _, c := range turn.Calls {
			var r plugin.CallToolResponse
			if err := host.Env().CallTool(ctx, &plugin.CallToolRequest{Name: c.GetName(), Arguments: c.GetArguments(), CallId: c.GetId()}, &r); err != nil {
				return fail(err)
			}
			traj.ToolCalls++
			li := r.GetLedgerIndex()
			turn.Results = append(turn.Results, &plugin.ToolResult{CallId: c.GetId(), Name: c.GetName(), Content: r.GetContent(), IsError: r.GetIsError(), LedgerIndex: &li})
			msgs = append(msgs, &plugin.Message{Role: plugin.RoleTool, Content: r.GetContent(), ToolCallId: c.GetId(), Name: c.GetName()})
		}
	}
	traj.Messages = msgs
	traj.Termination = plugin.TerminationMaxTurns
	return nil
}

// callbackHarness makes N Model callbacks per episode (benchmarks, kill
// test). N comes from req.Seed.
type callbackHarness struct{}

func (callbackHarness) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = "callbacks"
	return nil
}

func (callbackHarness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	resp.Trajectory = &plugin.Trajectory{}
	for i := uint64(0); i < req.GetSeed(); i++ {
		var g plugin.GenerateResponse
		if err := host.Model().Generate(ctx, &plugin.GenerateRequest{Messages: []*plugin.Message{{Role: plugin.RoleUser, Content: strconv.FormatUint(i, 10)}}}, &g); err != nil {
			resp.Failure = plugin.FailureFromError(err)
			return nil
		}
		resp.Trajectory.Messages = append(resp.Trajectory.Messages, g.GetMessage())
	}
	resp.Trajectory.Termination = plugin.TerminationStop
	return nil
}

type verifier struct{}

func (verifier) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = "verifier"
	return nil
}

func (verifier) Verify(ctx context.Context, host plugin.Host, req *plugin.VerifyRequest, resp *plugin.VerifyResponse) error {
	var q plugin.QueryResponse
	if err := host.State().Query(ctx, &plugin.QueryRequest{Version: "final", Sql: "SELECT n FROM t"}, &q); err != nil {
		resp.Failure = plugin.FailureFromError(err)
		return nil
	}
	score := 0.0
	rows, _ := plugin.ValueJSON(&plugin.Value{Kind: &pluginpb.Value_ListValue{ListValue: &plugin.ValueList{Values: rowValues(q.GetRows())}}})
	if string(rows) == "[[1]]" {
		score = 1
	}
	resp.Checkpoints = []*plugin.Checkpoint{{Name: "n_is_1", Score: score, Checks: []*plugin.CheckResult{{Kind: pluginpb.CheckKind_CHECK_KIND_SQL, Passed: score == 1, Evidence: fmt.Sprintf("%s=%s", q.GetColumns(), rows)}}}}
	resp.Score = score
	return nil
}

type attributor struct{}

func (attributor) Describe(_ context.Context, _ *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name = "attributor"
	return nil
}

func (attributor) Attribute(ctx context.Context, host plugin.Host, req *plugin.AttributeRequest, resp *plugin.AttributeResponse) error {
	for _, c := range req.GetCheckpoints() {
		if c.GetScore() < 1 {
			resp.Attributions = append(resp.Attributions, &plugin.Attribution{Checkpoint: c.GetName(), Blame: plugin.BlamePolicy, Evidence: req.GetEpisodeId(), Revise: "prompt"})
		}
	}
	return nil
}

// rowValues wraps query rows as list values.
func rowValues(rows []*plugin.ValueList) []*plugin.Value {
	out := make([]*plugin.Value, len(rows))
	for i, r := range rows {
		out[i] = &plugin.Value{Kind: &pluginpb.Value_ListValue{ListValue: r}}
	}
	return out
}
