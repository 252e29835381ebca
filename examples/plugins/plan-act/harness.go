package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

const planPrompt = "Work in two phases. With your first tool call, write a short numbered plan " +
	"in your message. Then act on it with tool calls, one step at a time, and answer the user " +
	"in plain text (no tool call) when you need them or are done."

const settingsSchema = `{"type":"object","properties":{"pin_plan":{"type":"boolean"}},"additionalProperties":false}`

type harness struct{}

func (harness) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version, resp.Format, resp.SettingsSchema = "plan-act", "0.1.0", plugin.FormatNative, plugin.MustJSONValue(settingsSchema)
	return nil
}

// settings parses the settings object; unknown fields are an error.
func settings(s string) (pin bool, err error) {
	cfg := struct {
		PinPlan *bool `json:"pin_plan"`
	}{}
	if s != "" {
		d := json.NewDecoder(bytes.NewReader([]byte(s)))
		d.DisallowUnknownFields()
		if err := d.Decode(&cfg); err != nil {
			return false, fmt.Errorf("plan-act settings: %w", err)
		}
	}
	return cfg.PinPlan == nil || *cfg.PinPlan, nil
}

// withMs bounds ctx by ms milliseconds (0 = no bound).
func withMs(ctx context.Context, ms int64) (context.Context, context.CancelFunc) {
	if ms <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
}

func (harness) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	pin, err := settings(plugin.SettingsJSON(req.Settings))
	if err != nil {
		return err
	}
	tr := &plugin.Trajectory{}
	resp.Trajectory = tr
	lim := req.GetLimits()
	epCtx, cancel := withMs(ctx, lim.GetEpisodeTimeoutMs())
	defer cancel()
	// end classifies an error: a limit's deadline, or a host failure.
	end := func(err error, turnCtx context.Context) error {
		switch {
		case epCtx.Err() != nil && ctx.Err() == nil:
			tr.Termination = plugin.TerminationEpisodeDeadline
		case turnCtx != nil && errors.Is(turnCtx.Err(), context.DeadlineExceeded) && epCtx.Err() == nil:
			tr.Termination = plugin.TerminationTurnDeadline
		default:
			tr.Termination, resp.Failure = plugin.TerminationFailure, plugin.FailureFromError(err)
		}
		return nil
	}
	var tools plugin.ListToolsResponse
	var open plugin.UserResponse
	if err := host.Env().ListTools(epCtx, &plugin.ListToolsRequest{}, &tools); err != nil {
		return end(err, nil)
	}
	if err := host.User().Next(epCtx, &plugin.UserRequest{}, &open); err != nil {
		return end(err, nil)
	}
	system := req.SystemPrompt + "\n\n" + planPrompt
	if open.Done { // the user has nothing to ask: no turn
		tr.Messages, tr.Termination = []*plugin.Message{{Role: plugin.RoleSystem, Content: system}}, plugin.TerminationDone
		return nil
	}
	tr.Messages = []*plugin.Message{{Role: plugin.RoleSystem, Content: system}, {Role: plugin.RoleUser, Content: open.Content}}
	history := slices.Clone(tr.Messages[1:]) // what the model sees after the system message
	plan := ""
	for turn := 0; ; turn++ {
		if lim.GetMaxTurns() > 0 && turn >= int(lim.GetMaxTurns()) {
			tr.Termination = plugin.TerminationMaxTurns
			return nil
		}
		sys := system
		if pin && plan != "" {
			sys += "\n\nYour plan (keep to it, revise it if needed):\n" + plan
		}
		prompt := append([]*plugin.Message{{Role: plugin.RoleSystem, Content: sys}}, history...)
		turnCtx, cancelTurn := withMs(epCtx, lim.GetTurnTimeoutMs())
		term, err := runTurn(turnCtx, host, req, tr, prompt, tools.Tools, &history, &plan)
		if err != nil {
			defer cancelTurn() // after end: it reads turnCtx's deadline
			return end(err, turnCtx)
		}
		cancelTurn()
		if term != "" {
			tr.Termination = term
			return nil
		}
	}
}

// runTurn generates one answer and runs its tool calls or passes it to the
// user; it returns a termination when the episode ends there.
func runTurn(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, tr *plugin.Trajectory,
	prompt []*plugin.Message, tools []*plugin.Tool, history *[]*plugin.Message, plan *string) (string, error) {
	start := time.Now()
	var out plugin.GenerateResponse
	g := &plugin.GenerateRequest{Messages: prompt, Tools: tools, Sampling: req.Sampling, Format: plugin.FormatNative}
	if err := host.Model().Generate(ctx, g, &out); err != nil {
		return "", err
	}
	m := out.GetMessage()
	t := &plugin.Turn{Index: int32(len(tr.Turns)), Prompt: prompt, Response: m, Calls: m.GetToolCalls()}
	tr.Turns = append(tr.Turns, t)
	defer func() { t.DurationMs = time.Since(start).Milliseconds() }()
	if m == nil || len(m.ToolCalls) == 0 && m.Content == "" {
		t.FormatError, t.Calls = "empty answer: no content and no tool calls", nil
		tr.FormatErrors++
		*history = append(*history, &plugin.Message{Role: plugin.RoleUser, Content: "(Your last answer was empty. Call a tool or answer me.)"})
		return "", nil
	}
	tr.Messages, *history = append(tr.Messages, m), append(*history, m)
	if len(m.ToolCalls) == 0 {
		var ur plugin.UserResponse
		if err := host.User().Next(ctx, &plugin.UserRequest{Messages: slices.Clone(tr.Messages)}, &ur); err != nil {
			return "", err
		}
		if t.UserReply = ur.Content; ur.Done {
			return plugin.TerminationDone, nil
		}
		reply := &plugin.Message{Role: plugin.RoleUser, Content: ur.Content}
		tr.Messages, *history = append(tr.Messages, reply), append(*history, reply)
		return "", nil
	}
	if *plan == "" {
		*plan = m.Content
	}
	term := ""
	for _, c := range m.ToolCalls {
		res := &plugin.ToolResult{CallId: c.Id, Name: c.Name, Content: "not run: the episode's tool-call limit is reached", IsError: true}
		if max := req.GetLimits().GetMaxToolCalls(); max > 0 && tr.ToolCalls >= max {
			term = plugin.TerminationMaxToolCalls
		} else {
			var cr plugin.CallToolResponse
			if err := host.Env().CallTool(ctx, &plugin.CallToolRequest{Name: c.Name, Arguments: c.Arguments, CallId: c.Id}, &cr); err != nil {
				return "", err
			}
			tr.ToolCalls++
			res.Content, res.IsError, res.LedgerIndex = cr.Content, cr.IsError, &cr.LedgerIndex
		}
		t.Results = append(t.Results, res)
		msg := &plugin.Message{Role: plugin.RoleTool, Content: res.Content, ToolCallId: c.Id, Name: c.Name}
		tr.Messages, *history = append(tr.Messages, msg), append(*history, msg)
	}
	return term, nil
}
