package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/plugin"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// Bounds of the scripted episodes.
const (
	limitTurns     = 3
	limitToolCalls = 3
	limitDeadline  = 200 * time.Millisecond
	concurrency    = 8
	// modelCap is the most Generate calls one scripted episode answers.
	modelCap = 20
	// hangGrace is how long RunEpisode may run on after its context ended.
	hangGrace          = 2 * time.Second
	systemPromptMarker = "You are the conformance agent (policy marker sysprompt-7f3a)."
)

var versionRE = regexp.MustCompile(`^v?\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.+-]+)?$`)

type runner struct {
	h    plugin.Harness
	opts Options
	desc *plugin.DescribeResponse
}

// format is the harness's declared output format.
func (r *runner) format() plugin.OutputFormat { return r.desc.GetFormat() }

// customNote says why a custom format without Options.Model (its
// renderer) runs no episode check.
const customNote = "custom format: episode checks need Options.Model"

func knownFormat(f plugin.OutputFormat) bool {
	return f == plugin.FormatNative || f == plugin.FormatHermes || f == plugin.FormatReAct
}

// skipReason says why an episode check cannot run ("" = it can).
func (r *runner) skipReason(name string) string {
	if r.desc == nil {
		return "Describe failed, so the harness's output format is unknown"
	}
	if !knownFormat(r.format()) && r.opts.Model == nil {
		return customNote + " (format " + r.format().String() + ")"
	}
	if name == CheckSettings && r.desc.SettingsSchema == nil {
		return `settings_schema is absent (the harness accepts any settings): nothing to check`
	}
	if name == CheckResume && !slices.Contains(r.desc.Capabilities, plugin.CapabilityResume) {
		return `the harness does not declare the "resume" capability (RunEpisodeRequest.history)`
	}
	return ""
}

func (r *runner) describe(ctx context.Context) Check {
	var p problems
	var resp plugin.DescribeResponse
	err := callSafely(func() error { return r.h.Describe(ctx, &plugin.DescribeRequest{}, &resp) })
	if err != nil {
		p.add("Describe failed: %v", err)
		return p.check(CheckDescribe, "")
	}
	r.desc = &resp
	if resp.Name == "" {
		p.add("name is empty")
	}
	if !versionRE.MatchString(resp.Version) {
		p.add("version %q is not semver-like (want e.g. 1.2.0 or v0.1.0-dev)", resp.Version)
	}
	note := ""
	if !knownFormat(resp.Format) && r.opts.Model == nil {
		// Not a fault of the harness: the episode checks are skipped.
		note = "; " + customNote
	}
	if s := resp.SettingsSchema; s != nil && s.GetObjectValue() == nil {
		p.add("settings_schema is not a JSON object")
	}
	return p.check(CheckDescribe, fmt.Sprintf("%s %s, format %s, %d capabilities%s", resp.Name, resp.Version, resp.Format, len(resp.Capabilities), note))
}

// callSafely runs f, turning a panic into an error.
func callSafely(f func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panicked: %v", v)
		}
	}()
	return f()
}

// episode is one scripted episode: its host, request and outcome.
type episode struct {
	marker string
	host   *fakeHost
	req    *plugin.RunEpisodeRequest

	resp    *plugin.RunEpisodeResponse
	err     error // RunEpisode's error (or its panic)
	hung    bool
	elapsed time.Duration
}

func (r *runner) newEpisode(id string, mk func(marker string) script) *episode {
	marker := "mk-" + id
	model := newScriptedModel(r.format(), r.opts.Model, mk(marker), modelCap)
	return &episode{
		marker: marker,
		host: &fakeHost{model: model, env: newEnv(),
			user: plugintest.NewFakeUser("Hello, please echo " + marker + " for me.")},
		req: &plugin.RunEpisodeRequest{
			EpisodeId:    "conformance-" + id,
			TaskId:       "conformance",
			SystemPrompt: systemPromptMarker,
			Limits:       &plugin.Limits{},
			Sampling:     &plugin.Sampling{},
			Settings:     settingsValue(r.opts.Settings),
			Seed:         7,
		},
	}
}

// run runs the episode under the check timeout and records its outcome.
func (r *runner) run(ctx context.Context, ep *episode) {
	ctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	resp := &plugin.RunEpisodeResponse{}
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- callSafely(func() error { return r.h.RunEpisode(ctx, ep.host.services(), ep.req, resp) })
	}()
	select {
	case err := <-done:
		ep.err = err
	case <-ctx.Done():
		select {
		case err := <-done:
			ep.err = err
		case <-time.After(hangGrace):
			ep.hung = true
		}
	}
	ep.elapsed = time.Since(start)
	if !ep.hung {
		ep.resp = resp
	}
}

// ended reports problems with how RunEpisode returned and whether the
// trajectory can be inspected.
func (ep *episode) ended(p *problems) bool {
	switch {
	case ep.hung:
		p.add("RunEpisode did not return within %s of its context ending", hangGrace)
		return false
	case ep.err != nil:
		p.add("RunEpisode returned an error: %v", ep.err)
		return false
	case ep.resp.Trajectory == nil:
		p.add("RunEpisode returned no trajectory")
		return false
	}
	return true
}

// verify checks a completed episode: its termination, no failure, one
// Turn per Generate with exact prompts and responses, canonical messages,
// Env call ids and ledger indices. countCalls also checks the tool_calls
// counter against the calls Env saw.
func (r *runner) verify(p *problems, ep *episode, termination string, countCalls bool) bool {
	if !ep.ended(p) {
		return false
	}
	tr := ep.resp.Trajectory
	if f := ep.resp.Failure; f != nil {
		p.add("unexpected failure %q: %s", f.Kind, f.Message)
	}
	if ep.host.model.capHit {
		p.add("the harness kept calling Generate past %d turns", modelCap)
	}
	if tr.Termination != termination {
		p.add("termination %q, want %q", tr.Termination, termination)
	}
	p.list = append(p.list, canonicalProblems(tr.Messages)...)
	r.turnProblems(p, ep)
	calls, resps := ep.host.env.Calls(), ep.host.env.Results()
	ids := map[string]bool{}
	for _, m := range tr.Messages {
		for _, c := range m.ToolCalls {
			ids[c.Id] = true
		}
	}
	seen := map[string]bool{}
	ledger := map[string]uint64{}
	for i, c := range calls {
		switch {
		case c.CallId == "":
			p.add("Env call %d (%s) has no call_id", i, c.Name)
		case seen[c.CallId]:
			p.add("call_id %q reached Env twice", c.CallId)
		case !ids[c.CallId]:
			p.add("Env call %q is not a tool_call of the canonical messages", c.CallId)
		}
		seen[c.CallId] = true
		if resps[i] != nil {
			ledger[c.CallId] = resps[i].LedgerIndex
		}
	}
	for ti, t := range tr.Turns {
		for _, res := range t.Results {
			want, ran := ledger[res.CallId]
			switch {
			case ran && res.LedgerIndex == nil:
				p.add("turn %d: result of %q has no ledger_index (Env returned %d)", ti, res.CallId, want)
			case ran && res.GetLedgerIndex() != want:
				p.add("turn %d: result of %q has ledger_index %d, Env returned %d", ti, res.CallId, res.GetLedgerIndex(), want)
			case !ran && res.LedgerIndex != nil:
				p.add("turn %d: result of %q has a ledger_index but the call never reached Env", ti, res.CallId)
			}
		}
	}
	if countCalls && int(tr.ToolCalls) != len(calls) {
		p.add("trajectory counts %d tool calls, Env saw %d", tr.ToolCalls, len(calls))
	}
	fe := 0
	for _, t := range tr.Turns {
		if t.FormatError != "" {
			fe++
		}
	}
	if int(tr.FormatErrors) != fe {
		p.add("trajectory counts %d format errors, its turns have %d", tr.FormatErrors, fe)
	}
	return true
}

// turnProblems checks one Turn per Generate, each with the exact prompt,
// the exact response and the results in call order, and the format of
// every Generate.
func (r *runner) turnProblems(p *problems, ep *episode) {
	reqs, resps := ep.host.model.requests()
	turns := ep.resp.Trajectory.Turns
	if len(turns) != len(reqs) {
		p.add("%d turns for %d Generate calls (want one Turn per Generate)", len(turns), len(reqs))
	}
	for i, req := range reqs {
		if req.Format != r.format() {
			p.add("Generate %d asked for format %s, the harness declares %s", i, req.Format, r.format())
			break
		}
	}
	for i := 0; i < len(turns) && i < len(reqs); i++ {
		t := turns[i]
		if t.Index != turns[0].Index+int32(i) {
			p.add("turn %d has index %d (want consecutive indices)", i, t.Index)
		}
		if d := messagesDiff(t.Prompt, reqs[i].Messages); d != "" {
			p.add("turn %d: Prompt is not what Generate received: %s", i, d)
		}
		if i < len(resps) && !proto.Equal(t.Response, resps[i]) {
			p.add("turn %d: Response is not the assistant message the model returned", i)
		}
		if len(t.Results) > len(t.Calls) {
			p.add("turn %d: %d results for %d calls", i, len(t.Results), len(t.Calls))
		}
		for j, res := range t.Results {
			if j < len(t.Calls) && res.CallId != t.Calls[j].Id {
				p.add("turn %d: result %d answers %q, call %d is %q (want results in call order)", i, j, res.CallId, j, t.Calls[j].Id)
			}
		}
	}
}

// messagesDiff describes the first difference of two message lists ("" =
// equal).
func messagesDiff(got, want []*plugin.Message) string {
	for i := 0; i < len(got) && i < len(want); i++ {
		if !proto.Equal(got[i], want[i]) {
			return fmt.Sprintf("message %d differs (%s %q vs %s %q)", i, got[i].GetRole(), clip(got[i].GetContent()), want[i].GetRole(), clip(want[i].GetContent()))
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d messages recorded, %d sent", len(got), len(want))
	}
	return ""
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "..."
	}
	return s
}

// canonicalProblems checks the OpenAI chat form: valid roles, tool_call
// ids present and unique, every tool_call answered by exactly one tool
// message before the next non-tool message, no tool message without its
// call.
func canonicalProblems(msgs []*plugin.Message) []string {
	var out []string
	if len(msgs) == 0 {
		return []string{"canonical messages are empty"}
	}
	calls := map[string]bool{} // id -> answered
	var pending []string
	for i, m := range msgs {
		switch m.Role {
		case plugin.RoleSystem, plugin.RoleUser, plugin.RoleAssistant, plugin.RoleTool:
		default:
			out = append(out, fmt.Sprintf("message %d has role %q", i, m.Role))
		}
		if m.Role != plugin.RoleTool && len(pending) > 0 {
			out = append(out, fmt.Sprintf("message %d (%s) comes before tool_calls %v are answered", i, m.Role, pending))
			pending = nil
		}
		for _, c := range m.ToolCalls {
			if m.Role != plugin.RoleAssistant {
				out = append(out, fmt.Sprintf("message %d: a %s message has tool_calls", i, m.Role))
			}
			if c.Id == "" {
				out = append(out, fmt.Sprintf("message %d: tool_call %q has no id", i, c.Name))
				continue
			}
			if _, dup := calls[c.Id]; dup {
				out = append(out, fmt.Sprintf("message %d: tool_call id %q is not unique", i, c.Id))
				continue
			}
			calls[c.Id] = false
			pending = append(pending, c.Id)
		}
		if m.Role == plugin.RoleTool {
			answered, ok := calls[m.ToolCallId]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("message %d: tool message answers %q, which no earlier tool_call has", i, m.ToolCallId))
			case answered:
				out = append(out, fmt.Sprintf("message %d: tool_call %q is answered twice", i, m.ToolCallId))
			}
			calls[m.ToolCallId] = true
			for k, id := range pending {
				if id == m.ToolCallId {
					pending = append(pending[:k], pending[k+1:]...)
					break
				}
			}
		}
	}
	if len(pending) > 0 {
		out = append(out, fmt.Sprintf("tool_calls %v are never answered by a tool message", pending))
	}
	return out
}

// Scripts.

func callEcho(text string) step {
	return step{calls: []call{{name: toolEcho, args: map[string]any{"text": text}}}}
}

// basicScript: echo the marker, then tell the user.
func basicScript(marker string) script {
	return func(n int) step {
		if n == 0 {
			return callEcho(marker)
		}
		return step{say: "I echoed " + marker + " for you."}
	}
}

// promptText joins every message content of a prompt.
func promptText(msgs []*plugin.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}

func (r *runner) basicEpisode(ctx context.Context, p *problems) string {
	ep := r.newEpisode("basic", basicScript)
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationDone, true) {
		return ""
	}
	tr := ep.resp.Trajectory
	calls := ep.host.env.Calls()
	if len(calls) != 1 {
		p.add("Env saw %d calls, want 1", len(calls))
	} else {
		var args map[string]any
		if calls[0].Name != toolEcho {
			p.add("Env call named %q, want %q", calls[0].Name, toolEcho)
		}
		if err := json.Unmarshal([]byte(calls[0].Arguments), &args); err != nil || len(args) != 1 || args["text"] != ep.marker {
			p.add("Env call arguments %s, want {\"text\":%q}", calls[0].Arguments, ep.marker)
		}
	}
	reqs, _ := ep.host.model.requests()
	if len(reqs) != 2 {
		p.add("%d Generate calls, want 2 (tool call, then the answer)", len(reqs))
	}
	if len(reqs) > 0 {
		first := promptText(reqs[0].Messages)
		if !strings.Contains(first, systemPromptMarker) {
			p.add("the first prompt does not contain the request's system_prompt")
		}
		if !strings.Contains(first, ep.marker) {
			p.add("the first prompt does not contain the user's opening message")
		}
		if r.format() == plugin.FormatNative {
			names := map[string]bool{}
			for _, t := range reqs[0].Tools {
				names[t.Name] = true
			}
			if !names[toolEcho] || !names[toolLookup] {
				p.add("native format: the first Generate's tools lack the Env tools (got %d tools)", len(reqs[0].Tools))
			}
		} else if !strings.Contains(first, toolEcho) || !strings.Contains(first, toolLookup) {
			p.add("text format: the first prompt does not name the Env tools")
		}
	}
	if len(reqs) > 1 && !strings.Contains(promptText(reqs[1].Messages), "echo: "+ep.marker) {
		p.add("the tool result %q never reached the model (second prompt lacks it)", "echo: "+ep.marker)
	}
	opening := false
	for _, m := range tr.Messages {
		if m.Role == plugin.RoleUser && m.Content == ep.host.user.Messages[0] {
			opening = true
		}
	}
	if !opening {
		p.add("canonical messages lack the opening user message")
	}
	ureqs := ep.host.user.Requests()
	switch {
	case len(ureqs) != 2:
		p.add("User.Next called %d times, want 2 (opening, then the reply)", len(ureqs))
	case len(ureqs[0].Messages) != 0:
		p.add("the opening User.Next carried %d messages, want none", len(ureqs[0].Messages))
	case len(ureqs[1].Messages) == 0 || ureqs[1].Messages[len(ureqs[1].Messages)-1].Role != plugin.RoleAssistant:
		p.add("the second User.Next does not end with the assistant's message")
	}
	for _, t := range tr.Turns {
		for _, res := range t.Results {
			if res.Content != "echo: "+ep.marker || res.IsError || res.Name != toolEcho {
				p.add("turn result %+v, want echo's %q", res, "echo: "+ep.marker)
			}
		}
	}
	return fmt.Sprintf("done in %d turns, %d canonical messages, 1 tool call with ledger index %d", len(tr.Turns), len(tr.Messages), ledgerBase)
}

func (r *runner) toolError(ctx context.Context, p *problems) string {
	ep := r.newEpisode("toolerr", func(marker string) script {
		return func(n int) step {
			if n == 0 {
				return step{calls: []call{{name: toolLookup, args: map[string]any{"order_id": marker}}}}
			}
			return step{say: "Sorry, there is no such order."}
		}
	})
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationDone, true) {
		return ""
	}
	want := "error: no order " + ep.marker
	reqs, _ := ep.host.model.requests()
	if len(reqs) < 2 || !strings.Contains(promptText(reqs[1].Messages), want) {
		p.add("the tool error %q never reached the model", want)
	}
	found := false
	for _, t := range ep.resp.Trajectory.Turns {
		for _, res := range t.Results {
			if res.Content == want && res.IsError {
				found = true
			}
		}
	}
	if !found {
		p.add("no turn result holds the tool error with is_error set")
	}
	return "the tool error went back to the model; the episode ended done with no failure"
}

func (r *runner) maxTurns(ctx context.Context, p *problems) string {
	ep := r.newEpisode("maxturns", func(marker string) script {
		return func(n int) step { return callEcho(fmt.Sprintf("%s-%d", marker, n)) }
	})
	ep.req.Limits.MaxTurns = limitTurns
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationMaxTurns, true) {
		return ""
	}
	if n := len(ep.resp.Trajectory.Turns); n > limitTurns {
		p.add("%d turns with max_turns %d", n, limitTurns)
	}
	return fmt.Sprintf("stopped at %d turns (limit %d) with a model that always calls a tool", len(ep.resp.Trajectory.Turns), limitTurns)
}

func (r *runner) maxToolCalls(ctx context.Context, p *problems) string {
	perTurn := 2 // a turn may carry several calls; ReAct and custom formats one
	if f := r.format(); f != plugin.FormatNative && f != plugin.FormatHermes {
		perTurn = 1
	}
	ep := r.newEpisode("maxcalls", func(marker string) script {
		return func(n int) step {
			var st step
			for i := 0; i < perTurn; i++ {
				st.calls = append(st.calls, call{name: toolEcho, args: map[string]any{"text": fmt.Sprintf("%s-%d-%d", marker, n, i)}})
			}
			return st
		}
	})
	ep.req.Limits.MaxToolCalls = limitToolCalls
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationMaxToolCalls, false) {
		return ""
	}
	calls := ep.host.env.Calls()
	if len(calls) > limitToolCalls {
		p.add("Env saw %d calls with max_tool_calls %d", len(calls), limitToolCalls)
	}
	return fmt.Sprintf("Env saw %d calls (limit %d, %d per turn)", len(calls), limitToolCalls, perTurn)
}

func (r *runner) deadline(ctx context.Context, p *problems, id, termination string, set func(*plugin.Limits)) string {
	ep := r.newEpisode(id, func(string) script {
		return func(int) step { return step{block: true} }
	})
	set(ep.req.Limits)
	r.run(ctx, ep)
	if !ep.ended(p) {
		return ""
	}
	if ep.elapsed >= r.opts.Timeout {
		p.add("the episode took %s with a %s limit", ep.elapsed.Round(time.Millisecond), limitDeadline)
	}
	if f := ep.resp.Failure; f != nil {
		p.add("a limit is not a failure, got failure %q: %s", f.Kind, f.Message)
	}
	if got := ep.resp.Trajectory.Termination; got != termination {
		p.add("termination %q, want %q", got, termination)
	}
	return fmt.Sprintf("ended %q after %s (limit %s) with a model that never answers", termination, ep.elapsed.Round(time.Millisecond), limitDeadline)
}

func (r *runner) turnDeadline(ctx context.Context, p *problems) string {
	return r.deadline(ctx, p, "turndl", plugin.TerminationTurnDeadline, func(l *plugin.Limits) {
		l.TurnTimeoutMs = limitDeadline.Milliseconds()
	})
}

func (r *runner) episodeDeadline(ctx context.Context, p *problems) string {
	return r.deadline(ctx, p, "epdl", plugin.TerminationEpisodeDeadline, func(l *plugin.Limits) {
		l.EpisodeTimeoutMs = limitDeadline.Milliseconds()
	})
}

// failed checks an episode that hit a host error: nil error, the failure
// kind's service prefix, termination "failure", a partial trajectory.
func failed(p *problems, ep *episode, service string, minTurns int) string {
	if !ep.ended(p) {
		return ""
	}
	f := ep.resp.Failure
	switch {
	case f == nil:
		p.add("no Failure set after the %s service failed", service)
	case func() bool { c, _ := plugin.FailureParts(f); return string(c) != service }():
		c, k := plugin.FailureParts(f)
		p.add("failure %s/%s, want component %q (plugin.FailureFromError)", c, k, service)
	}
	tr := ep.resp.Trajectory
	if tr.Termination != plugin.TerminationFailure {
		p.add("termination %q, want %q", tr.Termination, plugin.TerminationFailure)
	}
	if len(tr.Turns) < minTurns {
		p.add("the partial trajectory has %d turns, want at least %d", len(tr.Turns), minTurns)
	}
	if len(tr.Messages) == 0 {
		p.add("the partial trajectory has no messages")
	}
	return fmt.Sprintf("failure %q, termination failure, partial trajectory of %d turn(s) kept", f.GetKind(), len(tr.Turns))
}

func (r *runner) modelFailure(ctx context.Context, p *problems) string {
	ep := r.newEpisode("modelfail", func(marker string) script {
		return func(n int) step {
			if n == 0 {
				return callEcho(marker)
			}
			return step{err: &plugin.HostError{Service: "model", Kind: "unavailable", Message: "conformance: the endpoint is down"}}
		}
	})
	r.run(ctx, ep)
	return failed(p, ep, "model", 1)
}

func (r *runner) envFailure(ctx context.Context, p *problems) string {
	ep := r.newEpisode("envfail", basicScript)
	ep.host.env.FailCall, ep.host.env.Err = 1, &plugin.HostError{Service: "env", Kind: "trap", Message: "conformance: the tool module trapped"}
	r.run(ctx, ep)
	return failed(p, ep, "env", 0)
}

// listToolsFailure: Env.ListTools fails, so the episode ends in a
// failure before any model or tool call (the trajectory may be empty).
func (r *runner) listToolsFailure(ctx context.Context, p *problems) string {
	ep := r.newEpisode("listfail", basicScript)
	ep.host.env.FailList, ep.host.env.Err = true, &plugin.HostError{Service: "env", Kind: "unavailable", Message: "conformance: the session is gone"}
	r.run(ctx, ep)
	if !ep.ended(p) {
		return ""
	}
	f := ep.resp.Failure
	if c, _ := plugin.FailureParts(f); f == nil || c != "env" {
		p.add("failure %v after Env.ListTools failed, want component \"env\" (plugin.FailureFromError)", f)
	}
	tr := ep.resp.Trajectory
	if tr.Termination != plugin.TerminationFailure {
		p.add("termination %q, want %q", tr.Termination, plugin.TerminationFailure)
	}
	ep.noTurns(p, "after Env.ListTools failed")
	return fmt.Sprintf("failure %q, termination failure, no model or tool call", f.GetKind())
}

// noTurns adds a problem for every Generate call, Env call and turn of
// ep, which should have none (when says why, e.g. "after X failed").
func (ep *episode) noTurns(p *problems, when string) {
	reqs, _ := ep.host.model.requests()
	calls := ep.host.env.Calls()
	if n := len(ep.resp.Trajectory.Turns); len(reqs)+len(calls)+n != 0 {
		p.add("%d Generate calls, %d Env calls and %d turns %s, want none", len(reqs), len(calls), n, when)
	}
}

// userFailure: User.Next fails at the user's reply (after one tool call
// and a message to the user): a failure with the partial trajectory.
func (r *runner) userFailure(ctx context.Context, p *problems) string {
	ep := r.newEpisode("userfail", basicScript)
	ep.host.user.FailAt, ep.host.user.Err = 2, &plugin.HostError{Service: "user", Kind: "timeout", Message: "conformance: the user simulator is slow"}
	r.run(ctx, ep)
	return failed(p, ep, "user", 2)
}

// openingDone: the user is done at the opening User.Next: the episode
// ends done with no turn, no model call and no tool call.
func (r *runner) openingDone(ctx context.Context, p *problems) string {
	ep := r.newEpisode("opendone", basicScript)
	ep.host.user.Messages = nil
	r.run(ctx, ep)
	if !ep.ended(p) {
		return ""
	}
	if f := ep.resp.Failure; f != nil {
		p.add("unexpected failure %q: %s", f.Kind, f.Message)
	}
	tr := ep.resp.Trajectory
	if tr.Termination != plugin.TerminationDone {
		p.add("termination %q, want %q", tr.Termination, plugin.TerminationDone)
	}
	ep.noTurns(p, "for a user done at the opening")
	if n := len(ep.host.user.Requests()); n != 1 {
		p.add("User.Next called %d times, want 1", n)
	}
	return "a user done at the opening ended the episode done with no turn"
}

func (r *runner) concurrent(ctx context.Context, p *problems) string {
	var arrived atomic.Int32
	var serial atomic.Bool
	all := make(chan struct{})
	var once sync.Once
	barrier := func(ctx context.Context) error {
		if arrived.Add(1) == concurrency {
			once.Do(func() { close(all) })
		}
		select {
		case <-all:
		case <-time.After(3 * time.Second):
			serial.Store(true)
			once.Do(func() { close(all) })
		case <-ctx.Done():
			return ctx.Err()
		}
		return nil
	}
	eps := make([]*episode, concurrency)
	var wg sync.WaitGroup
	for i := range eps {
		eps[i] = r.newEpisode(fmt.Sprintf("conc%dq", i), basicScript)
		eps[i].host.model.barrier = barrier
		wg.Add(1)
		go func() {
			defer wg.Done()
			r.run(ctx, eps[i])
		}()
	}
	wg.Wait()
	if serial.Load() {
		p.add("only %d of %d episodes reached the model at once within 3 s (RunEpisode must run concurrently)", arrived.Load(), concurrency)
	}
	for i, ep := range eps {
		var q problems
		if r.verify(&q, ep, plugin.TerminationDone, true) {
			calls := ep.host.env.Calls()
			for _, c := range calls {
				if !strings.Contains(c.Arguments, ep.marker+`"`) {
					q.add("Env got a call for another episode: %s", c.Arguments)
				}
			}
			for j, other := range eps {
				if j != i && strings.Contains(promptText(ep.resp.Trajectory.Messages), other.marker) {
					q.add("its trajectory holds episode %d's marker", j)
				}
			}
		}
		for _, s := range q.list {
			p.add("episode %d: %s", i, s)
		}
	}
	return fmt.Sprintf("%d episodes ran at once on distinct hosts without crossing", concurrency)
}

// resumeCallID is the call id of the resume check's history: what a
// harness numbering its calls by turn gives its first call.
const resumeCallID = "call_0_0"

// resumeHistory is the resume check's history (canonical messages without
// the system message): the user's request, an echo call, its result.
func resumeHistory(marker string) []*plugin.Message {
	args := argsJSON(map[string]any{"text": marker + "-h"})
	return []*plugin.Message{
		{Role: plugin.RoleUser, Content: "Hello, please echo " + marker + "-h for me."},
		{Role: plugin.RoleAssistant, ToolCalls: []*plugin.ToolCall{{Id: resumeCallID, Name: toolEcho, Arguments: args}}},
		{Role: plugin.RoleTool, ToolCallId: resumeCallID, Name: toolEcho, Content: "echo: " + marker + "-h"},
	}
}

func (r *runner) resume(ctx context.Context, p *problems) string {
	ep := r.newEpisode("resume", func(marker string) script {
		return func(n int) step {
			if n == 0 {
				return callEcho(marker + "-2")
			}
			return step{say: "I echoed " + marker + "-2 too."}
		}
	})
	history := resumeHistory(ep.marker)
	ep.req.History = history
	followUp := "Now please echo " + ep.marker + "-2 too."
	ep.host.user.Messages[0] = followUp
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationDone, true) {
		return ""
	}
	tr := ep.resp.Trajectory
	msgs := tr.Messages
	switch {
	case len(msgs) == 0 || msgs[0].Role != plugin.RoleSystem:
		p.add("the canonical messages do not start with the system message")
	case len(msgs) < 1+len(history):
		p.add("the canonical messages hold %d messages after the system message, want the %d of the history first", len(msgs)-1, len(history))
	default:
		if d := messagesDiff(msgs[1:1+len(history)], history); d != "" {
			p.add("the canonical messages after the system message are not exactly the history: %s", d)
		}
		if len(msgs) < 2+len(history) || msgs[1+len(history)].Role != plugin.RoleUser || msgs[1+len(history)].Content != followUp {
			p.add("the user's follow-up does not come right after the history in the canonical messages")
		}
	}
	reqs, _ := ep.host.model.requests()
	if len(reqs) > 0 {
		first := promptText(reqs[0].Messages)
		for _, want := range []string{history[0].Content, history[2].Content, followUp} {
			if !strings.Contains(first, want) {
				p.add("the first prompt lacks %q", want)
			}
		}
		if i, j := strings.Index(first, history[2].Content), strings.Index(first, followUp); i >= 0 && j >= 0 && j < i {
			p.add("the first prompt has the follow-up before the history")
		}
	}
	ureqs := ep.host.user.Requests()
	if len(ureqs) == 0 {
		p.add("User.Next was never called")
	} else if d := messagesDiff(ureqs[0].Messages, history); d != "" {
		p.add("the first User.Next did not get the history: %s", d)
	}
	calls := ep.host.env.Calls()
	if len(calls) != 1 {
		p.add("Env saw %d calls, want 1 (the follow-up's; history calls must not run again)", len(calls))
	}
	for _, c := range calls {
		if c.CallId == resumeCallID {
			p.add("the new call reuses the history's call id %q", resumeCallID)
		}
	}
	if len(tr.Turns) > 0 && tr.Turns[0].Index != 0 {
		p.add("the first turn of the resumed run has index %d, want 0 (turns count this run's generations)", tr.Turns[0].Index)
	}
	newID := ""
	if len(calls) > 0 {
		newID = calls[0].CallId
	}
	return fmt.Sprintf("resumed after a %d-message history: its messages first, in the first prompt and the first User.Next; new call id %q", len(history), newID)
}

func (r *runner) settings(ctx context.Context, p *problems) string {
	var schema map[string]any
	if err := plugin.DecodeValue(r.desc.SettingsSchema, &schema); err != nil || schema == nil {
		p.add("settings_schema is not a JSON object: %v", err)
		return ""
	}
	ep := r.newEpisode("settings", basicScript)
	ep.req.Settings = plugin.MustJSONValue(`{"conformance_unknown_setting_x9": true}`)
	r.run(ctx, ep)
	if ep.hung {
		p.add("RunEpisode did not return with an unknown setting")
		return ""
	}
	if ep.err != nil {
		if why := notRefusal(ep.err); why != "" {
			p.add("with an unknown setting RunEpisode %s: %v", why, ep.err)
			return ""
		}
	}
	refused := ep.err != nil || ep.resp.Failure != nil
	how := "ran the episode"
	switch {
	case ep.err != nil:
		how = "returned an error: " + ep.err.Error()
	case ep.resp.Failure != nil:
		how = fmt.Sprintf("reported failure %q: %s", ep.resp.Failure.Kind, ep.resp.Failure.Message)
	}
	if ap, ok := schema["additionalProperties"].(bool); ok && !ap && !refused {
		p.add("the schema forbids unknown properties, yet the harness %s with one", how)
	}
	if !refused {
		var q problems
		r.verify(&q, ep, plugin.TerminationDone, true)
		for _, s := range q.list {
			p.add("accepted the unknown setting but: %s", s)
		}
	}
	return "with an unknown setting the harness " + how
}

// notRefusal says why err, returned by RunEpisode, is not the harness
// refusing its settings ("" when it is): only the RunEpisode method's own
// error refuses (a *plugin.PluginError of Kind "error" across a process,
// any plain error in process), not a crash, a broken connection, a
// timeout, a panic or a host service's failure passed on.
func notRefusal(err error) string {
	var pe *plugin.PluginError
	var he *plugin.HostError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out instead of refusing it"
	case errors.Is(err, context.Canceled):
		return "was canceled instead of refusing it"
	case errors.As(err, &pe) && pe.Kind != "error":
		return fmt.Sprintf("failed (%s) instead of refusing it", pe.Kind)
	case errors.As(err, &he):
		return "returned a host service's failure instead of refusing it"
	case strings.HasPrefix(err.Error(), "panicked: "):
		return "panicked instead of refusing it"
	}
	return ""
}

func (r *runner) formatError(ctx context.Context, p *problems) string {
	ep := r.newEpisode("garbage", func(marker string) script {
		return func(n int) step {
			switch n {
			case 0:
				return step{garbage: true}
			case 1:
				return callEcho(marker)
			}
			return step{say: "Done: " + marker}
		}
	})
	r.run(ctx, ep)
	if !r.verify(p, ep, plugin.TerminationDone, true) {
		return ""
	}
	tr := ep.resp.Trajectory
	if len(tr.Turns) == 0 || tr.Turns[0].FormatError == "" {
		p.add("the unparseable first answer did not make a format-error turn")
	} else if len(tr.Turns[0].Calls) != 0 || len(tr.Turns[0].Results) != 0 {
		p.add("the format-error turn has calls or results")
	}
	if tr.FormatErrors != 1 {
		p.add("format_errors %d, want 1", tr.FormatErrors)
	}
	if calls := ep.host.env.Calls(); len(calls) != 1 {
		p.add("Env saw %d calls after recovery, want 1", len(calls))
	}
	fe := ""
	if len(tr.Turns) > 0 {
		fe = tr.Turns[0].FormatError
	}
	return fmt.Sprintf("format-error turn (%q), then recovered and ended done", clip(fe))
}

// settingsValue converts the Options.Settings JSON text ("" = none; text
// that is not JSON is sent as a string value, which a harness must refuse).
func settingsValue(s string) *plugin.Value {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	v, err := plugin.JSONValue([]byte(s))
	if err != nil {
		return &plugin.Value{Kind: &pluginpb.Value_StringValue{StringValue: s}}
	}
	return v
}
