package conformance

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

// Check names, in the order RunHarness runs them. format_error runs last:
// a plugin binary that crashes on garbage then fails only that check.
const (
	CheckDescribe        = "describe"
	CheckBasicEpisode    = "basic_episode"
	CheckToolError       = "tool_error"
	CheckMaxTurns        = "max_turns"
	CheckMaxToolCalls    = "max_tool_calls"
	CheckTurnDeadline    = "turn_deadline"
	CheckEpisodeDeadline = "episode_deadline"
	CheckModelFailure    = "model_failure"
	CheckEnvFailure      = "env_failure"
	// CheckListToolsFailure: Env.ListTools fails before the first turn.
	CheckListToolsFailure = "list_tools_failure"
	// CheckUserFailure: User.Next fails at the user's reply.
	CheckUserFailure = "user_failure"
	// CheckOpeningDone: the user is done at the opening User.Next.
	CheckOpeningDone = "opening_done"
	CheckConcurrent  = "concurrent_episodes"
	// CheckResume runs only for a harness that declares
	// plugin.CapabilityResume.
	CheckResume      = "resume"
	CheckSettings    = "settings"
	CheckFormatError = "format_error"
)

// Options tune RunHarness. The zero value is ready to use.
type Options struct {
	// Model renders the scripted model's answers for a harness whose
	// declared format is not native, Hermes or ReAct. Each answer is asked
	// for with one Generate whose request holds a single assistant message
	// in native shape (content = a message to the user, or tool_calls with
	// their JSON arguments; neither = output the harness must not be able
	// to parse) and Format = the harness's format; resp.Message must be the
	// same intent written in that format. Nil with a custom format: the
	// episode checks are skipped.
	Model plugin.Model
	// Settings is the harness settings JSON object every episode gets
	// (RunEpisodeRequest.Settings) except in the settings check; "" = none.
	Settings string
	// Timeout bounds one check's episode (each of the concurrent ones);
	// default 10 s. The deadline checks require the episode to end within
	// it though their limit is 200 ms. A RunEpisode still running 2 s after
	// its context ended is reported as hung and abandoned.
	Timeout time.Duration
	// Script, if set, adds the scripted cases to Run (Go tests only; the
	// report of RunHarness and `weft plugin conformance` do not have
	// them): thirteen episodes whose model replies are written in the
	// harness's own format, each checked for its exact termination,
	// failure code, turn, tool-call, format-error and Env-call counts.
	Script *Script
	// Resume, if set, adds the prompt-stable resume cases to Run (Go
	// tests only): a run resumed from the canonical messages of an
	// earlier one gets the same prompts, format-error turns are dropped
	// from the history, and an invalid history is refused before any
	// host call.
	Resume *ResumeScript
}

// Check is the outcome of one conformance check.
type Check struct {
	// Name is one of the Check* constants.
	Name string `json:"name"`
	// Passed is true when the harness met every expectation of the check
	// (false for a skipped check).
	Passed bool `json:"passed"`
	// Skipped is true when the check does not apply (e.g. settings with a
	// settings schema of "", resume without the "resume" capability,
	// episode checks of a custom format without Options.Model); Detail
	// says why.
	Skipped bool `json:"skipped"`
	// Detail explains the outcome in plain words: what was seen on a pass,
	// every unmet expectation ("; "-separated) on a failure.
	Detail string `json:"detail"`
}

// Report is the outcome of RunHarness.
type Report struct {
	// Plugin is "name version" from Describe ("" if Describe failed).
	Plugin string  `json:"plugin"`
	Checks []Check `json:"checks"`
}

// Passed reports whether every check that ran passed.
func (r *Report) Passed() bool {
	for _, c := range r.Checks {
		if !c.Passed && !c.Skipped {
			return false
		}
	}
	return true
}

// String renders the report one check a line ("PASS name: detail"), then
// a summary line.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "conformance of %s\n", r.Plugin)
	pass, fail, skip := 0, 0, 0
	for _, c := range r.Checks {
		st := "PASS"
		switch {
		case c.Skipped:
			st, skip = "SKIP", skip+1
		case !c.Passed:
			st, fail = "FAIL", fail+1
		default:
			pass++
		}
		fmt.Fprintf(&b, "%s %s: %s\n", st, c.Name, c.Detail)
	}
	fmt.Fprintf(&b, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
	return b.String()
}

// RunHarness runs every conformance check against h and reports each one.
// It never fails itself: a harness that errors, panics (in process) or
// hangs fails the check at hand. ctx bounds the whole run; every check
// also has its own Options.Timeout.
func RunHarness(ctx context.Context, h plugin.Harness, opts Options) *Report {
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	r := &runner{h: h, opts: opts}
	rep := &Report{}
	desc := r.describe(ctx)
	rep.Checks = append(rep.Checks, desc)
	if r.desc != nil {
		rep.Plugin = strings.TrimSpace(r.desc.Name + " " + r.desc.Version)
	}
	checks := []struct {
		name string
		fn   func(context.Context, *problems) string
	}{
		{CheckBasicEpisode, r.basicEpisode},
		{CheckToolError, r.toolError},
		{CheckMaxTurns, r.maxTurns},
		{CheckMaxToolCalls, r.maxToolCalls},
		{CheckTurnDeadline, r.turnDeadline},
		{CheckEpisodeDeadline, r.episodeDeadline},
		{CheckModelFailure, r.modelFailure},
		{CheckEnvFailure, r.envFailure},
		{CheckListToolsFailure, r.listToolsFailure},
		{CheckUserFailure, r.userFailure},
		{CheckOpeningDone, r.openingDone},
		{CheckConcurrent, r.concurrent},
		{CheckResume, r.resume},
		{CheckSettings, r.settings},
		{CheckFormatError, r.formatError},
	}
	for _, c := range checks {
		if skip := r.skipReason(c.name); skip != "" {
			rep.Checks = append(rep.Checks, Check{Name: c.name, Skipped: true, Detail: skip})
			continue
		}
		var p problems
		ok := c.fn(ctx, &p)
		rep.Checks = append(rep.Checks, p.check(c.name, ok))
	}
	return rep
}

// Run is the conformance suite as a Go test: it runs RunHarness and
// reports each check as a subtest of t named after it (a failed check
// fails its subtest with the check's Detail, a skipped one skips it),
// then, when opts has them, the scripted cases (subtest "script/<case>")
// and the resume cases (subtest "resume_script/<case>").
//
//	func TestConformance(t *testing.T) {
//		conformance.Run(t, myharness.New(), conformance.Options{})
//	}
func Run(t *testing.T, h plugin.Harness, opts Options) {
	t.Helper()
	rep := RunHarness(t.Context(), h, opts)
	t.Logf("conformance of %s", rep.Plugin)
	for _, c := range rep.Checks {
		t.Run(c.Name, func(t *testing.T) {
			switch {
			case c.Skipped:
				t.Skip(c.Detail)
			case !c.Passed:
				t.Error(c.Detail)
			default:
				t.Log(c.Detail)
			}
		})
	}
	if opts.Script != nil {
		t.Run("script", func(t *testing.T) { scripted(t, h, *opts.Script) })
	}
	if opts.Resume != nil {
		t.Run("resume_script", func(t *testing.T) { resumeScripted(t, h, *opts.Resume) })
	}
}

// problems collects the unmet expectations of one check.
type problems struct{ list []string }

func (p *problems) add(format string, args ...any) {
	p.list = append(p.list, fmt.Sprintf(format, args...))
}

// check builds the Check: passed when nothing was added; ok is the detail
// of a pass.
func (p *problems) check(name, ok string) Check {
	if len(p.list) == 0 {
		return Check{Name: name, Passed: true, Detail: ok}
	}
	return Check{Name: name, Detail: strings.Join(p.list, "; ")}
}
