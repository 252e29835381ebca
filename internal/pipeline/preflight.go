package pipeline

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/sdk/plugin"
)

// PreflightStep is one check of Preflight, reported when it ends. Its
// JSON form is part of `weft run --json`.
type PreflightStep struct {
	// Check is what was checked: "tasks", "endpoint", "harness",
	// "verifier" or "attributor".
	Check string `json:"check"`
	// Block names the config block checked, e.g. `policy "model"`,
	// `harness "native"`, `verifier`.
	Block string `json:"block"`
	// Target is what was probed or started: the models URL and the model
	// of an endpoint, "built-in NAME" or the binary (and its args) of a
	// plugin.
	Target string `json:"target"`
	OK     bool   `json:"ok"`
	// Detail says what was found (the served models, a plugin's name,
	// version and capabilities) or, when not OK, the diagnostics, one
	// FILE:LINE:COL line each.
	Detail     string `json:"detail"`
	DurationMS int64  `json:"duration_ms"`
}

// PreflightOptions configure Preflight.
type PreflightOptions struct {
	// Getenv reads API keys (nil = os.Getenv).
	Getenv func(string) string
	// Step receives each step as it ends (nil = none).
	Step func(PreflightStep)
}

// Preflight checks, before any module is built and before the run folder
// is touched, what a run of cfg needs from outside the config file, so that
// a run does not fail after its first episodes (or hours later, at its sft
// stage) on something knowable up front:
//
//   - the task files load and task ids are unique and exist (Check);
//   - every model endpoint a stage the pipeline runs uses (the rollout,
//     sft and grpo policies, the verifier's judge) answers and serves its
//     model (model.Client.Probe: GET base_url/models, else a one-token
//     request); a 404 from a base_url without a version path says to add
//     /v1;
//   - every harness is started and described, its settings are checked
//     against its settings_schema, and the harness of the sft and grpo
//     stages declares the resume capability;
//   - a verifier or attributor binary is started, is that kind of plugin,
//     and describes itself.
//
// Each failure is an error diagnostic at the config attribute at fault
// (file:line:col, as `weft validate` prints them). The steps are returned
// in order and given to opts.Step as they end.
func Preflight(ctx context.Context, cfg *config.Config, opts PreflightOptions) ([]PreflightStep, hcl.Diagnostics) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	var steps []PreflightStep
	report := func(st PreflightStep) {
		steps = append(steps, st)
		if opts.Step != nil {
			opts.Step(st)
		}
	}
	var diags hcl.Diagnostics

	start := time.Now()
	td := checkTaskIDs(cfg)
	st := PreflightStep{Check: "tasks", Block: "tasks", Target: fmt.Sprintf("%d task sets", len(cfg.Tasks)), OK: !td.HasErrors(),
		Detail: "task files load; ids unique and present"}
	if !st.OK {
		st.Detail = diagText(td)
	}
	st.DurationMS = time.Since(start).Milliseconds()
	report(st)
	diags = append(diags, td...)

	for _, p := range usedEndpoints(cfg) {
		d := probeEndpoint(ctx, p, getenv, report)
		diags = append(diags, d...)
	}
	diags = append(diags, checkHarnesses(ctx, cfg, report)...)
	diags = append(diags, checkPlugin(ctx, "verifier", cfg.Verifier, report)...)
	diags = append(diags, checkPlugin(ctx, "attributor", cfg.Attributor, report)...)
	return steps, diags
}

// usedEndpoints are the endpoint policies the stages cfg runs use, in the
// file's order: the rollout policy and the judge (rollout), the sft and
// grpo policies (their stages; the judge also scores for grpo's filter).
func usedEndpoints(cfg *config.Config) []config.Policy {
	used := map[string]bool{}
	has := func(s string) bool { return slices.Contains(cfg.Stages, s) }
	if has(StageRollout) {
		used[cfg.Rollout.Policy] = true
	}
	if has(StageRollout) || has(StageGRPO) {
		used[cfg.Verifier.Judge] = true
	}
	if cfg.SFT != nil && has(StageSFT) {
		used[cfg.SFT.Policy] = true
	}
	if cfg.GRPO != nil && has(StageGRPO) {
		used[cfg.GRPO.Policy] = true
	}
	var out []config.Policy
	for _, p := range cfg.Policies {
		if p.Endpoint != nil && used[p.Name] {
			out = append(out, p)
		}
	}
	return out
}

// probeEndpoint probes policy p's endpoint.
func probeEndpoint(ctx context.Context, p config.Policy, getenv func(string) string, report func(PreflightStep)) hcl.Diagnostics {
	start := time.Now()
	e := p.Endpoint
	st := PreflightStep{Check: "endpoint", Block: fmt.Sprintf("policy %q", p.Name), Target: e.Model + " at " + e.BaseURL}
	var diags hcl.Diagnostics
	c, err := endpointClient(e, getenv)
	var res *model.ProbeResult
	if err == nil {
		res, err = c.Probe(ctx)
	}
	switch {
	case err != nil:
		diags = append(diags, endpointDiag(p, res, err, getenv))
		st.Detail = diagText(diags)
	case res.Listed:
		st.OK, st.Detail = true, fmt.Sprintf("%s lists %q (%d models)", res.ModelsURL, e.Model, len(res.Models))
	case res.Models != nil:
		st.OK, st.Detail = true, fmt.Sprintf("%s does not list %q (it lists %d models), but a one-token request for it was answered", res.ModelsURL, e.Model, len(res.Models))
	default:
		st.OK, st.Detail = true, fmt.Sprintf("no models list at %s; a one-token request for %q was answered", res.ModelsURL, e.Model)
	}
	st.DurationMS = time.Since(start).Milliseconds()
	report(st)
	return diags
}

// endpointDiag is the diagnostic of a failed probe, at the attribute most
// likely at fault, with what to do.
func endpointDiag(p config.Policy, res *model.ProbeResult, err error, getenv func(string) string) *hcl.Diagnostic {
	e := p.Endpoint
	var me *model.Error
	if !errors.As(err, &me) {
		return diag(e.Source.Attr("base_url"), "Invalid endpoint", "Policy %q: %v.", p.Name, err)
	}
	at, summary, advice := e.Source.Attr("base_url"), "Model endpoint unreachable", ""
	switch {
	case me.Kind == model.KindUnavailable || me.Kind == model.KindTimeout:
		advice = " Is the server running and listening there? (weft run --skip-preflight starts the run anyway.)"
	case me.StatusCode == http.StatusUnauthorized || me.StatusCode == http.StatusForbidden:
		summary = "Model endpoint refused the API key"
		at = e.Source.Attr("api_key_env")
		switch {
		case e.APIKeyEnv == "":
			advice = " The policy sends no key: set api_key_env to the environment variable that holds it."
		case getenv(e.APIKeyEnv) == "":
			advice = fmt.Sprintf(" api_key_env names %s, which is empty or unset in weft's environment.", e.APIKeyEnv)
		default:
			advice = fmt.Sprintf(" The key is read from %s.", e.APIKeyEnv)
		}
	case res != nil && res.Models != nil:
		summary = "Model not served"
		at = e.Source.Attr("model")
	default:
		summary = "Model endpoint refused the probe"
	}
	return diag(at, summary, "Policy %q: %s.%s", p.Name, strings.TrimSuffix(err.Error(), "."), advice)
}

// checkPlugin starts a verifier or attributor binary (built-ins need no
// check) and asks it to describe itself.
func checkPlugin(ctx context.Context, what string, p config.Plugin, report func(PreflightStep)) hcl.Diagnostics {
	if p.Binary == "" {
		return nil
	}
	start := time.Now()
	st := PreflightStep{Check: what, Block: what, Target: strings.Join(append([]string{p.Binary}, p.Args...), " ")}
	d, err := describePlugin(ctx, what, p)
	var diags hcl.Diagnostics
	if err != nil {
		diags = append(diags, diag(p.Source.Attr("binary"), "Plugin did not describe itself", "The %s %s: %v.", what, p.Binary, err))
		st.Detail = diagText(diags)
	} else {
		st.OK, st.Detail = true, fmt.Sprintf("%s %s, capabilities %q", d.Name, d.Version, d.Capabilities)
	}
	st.DurationMS = time.Since(start).Milliseconds()
	report(st)
	return diags
}

func describePlugin(ctx context.Context, what string, p config.Plugin) (*plugin.DescribeResponse, error) {
	c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: exec.Command(p.Binary, p.Args...), Name: what})
	if err != nil {
		return nil, err
	}
	defer c.Kill()
	var desc interface {
		Describe(context.Context, *plugin.DescribeRequest, *plugin.DescribeResponse) error
	}
	if what == "verifier" {
		desc, err = c.Verifier()
	} else {
		desc, err = c.Attributor()
	}
	if err != nil {
		return nil, err
	}
	var resp plugin.DescribeResponse
	if err := desc.Describe(ctx, &plugin.DescribeRequest{}, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}
