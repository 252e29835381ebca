package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/plugintest"
)

// failedChecks returns the names of the failed (not skipped) checks.
func failedChecks(rep *Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if !c.Passed && !c.Skipped {
			out = append(out, c.Name)
		}
	}
	return out
}

func skippedChecks(rep *Report) []string {
	var out []string
	for _, c := range rep.Checks {
		if c.Skipped {
			out = append(out, c.Name)
		}
	}
	return out
}

var allChecks = []string{CheckDescribe, CheckBasicEpisode, CheckToolError, CheckMaxTurns, CheckMaxToolCalls,
	CheckTurnDeadline, CheckEpisodeDeadline, CheckModelFailure, CheckEnvFailure,
	CheckListToolsFailure, CheckUserFailure, CheckOpeningDone, CheckConcurrent,
	CheckResume, CheckSettings, CheckFormatError}

func TestGoodHarnessPassesEveryFormat(t *testing.T) {
	t.Parallel()
	for _, f := range []plugin.OutputFormat{plugin.FormatNative, plugin.FormatHermes, plugin.FormatReAct} {
		t.Run(f.String(), func(t *testing.T) {
			t.Parallel()
			rep := RunHarness(t.Context(), &testHarness{format: f}, Options{})
			if !rep.Passed() {
				t.Fatalf("good harness failed:\n%s", rep)
			}
			var names []string
			for _, c := range rep.Checks {
				names = append(names, c.Name)
			}
			if !slices.Equal(names, allChecks) {
				t.Errorf("checks %v, want %v", names, allChecks)
			}
			if got := skippedChecks(rep); !slices.Equal(got, []string{CheckSettings}) {
				t.Errorf("skipped %v, want only settings (schema \"\")", got)
			}
			if rep.Plugin != "test-harness 0.1.0" {
				t.Errorf("Plugin = %q", rep.Plugin)
			}
			for _, c := range rep.Checks {
				if c.Detail == "" {
					t.Errorf("check %s has no detail", c.Name)
				}
			}
		})
	}
}

// A harness that declares a closed settings schema must refuse unknown
// settings; one with an open schema may accept them.
func TestSettingsCheck(t *testing.T) {
	t.Parallel()
	rep := RunHarness(t.Context(), &testHarness{format: plugin.FormatNative,
		schema: `{"type":"object","additionalProperties":false}`}, Options{})
	if !rep.Passed() || len(skippedChecks(rep)) != 0 {
		t.Fatalf("closed schema, refusing harness:\n%s", rep)
	}
	if d := rep.Checks[len(rep.Checks)-2].Detail; !strings.Contains(d, "returned an error: settings") {
		t.Errorf("settings detail %q does not say how the harness refused", d)
	}
	// A closed schema but a harness that ignores settings: fails.
	lax := &laxSettings{testHarness{format: plugin.FormatNative, schema: `{"type":"object","additionalProperties":false}`}}
	rep = RunHarness(t.Context(), lax, Options{})
	if got := failedChecks(rep); !slices.Equal(got, []string{CheckSettings}) {
		t.Errorf("lax harness failed %v, want [settings]\n%s", got, rep)
	}
	// An open schema and an accepting harness: passes.
	open := &laxSettings{testHarness{format: plugin.FormatNative, schema: `{"type":"object"}`}}
	if rep = RunHarness(t.Context(), open, Options{}); !rep.Passed() {
		t.Errorf("open schema:\n%s", rep)
	}
}

// laxSettings accepts any settings whatever its schema says.
type laxSettings struct{ testHarness }

func (h *laxSettings) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	inner := h.testHarness
	inner.schema = ""
	return inner.RunEpisode(ctx, host, req, resp)
}

func TestBrokenHarnessesFailExactlyTheirChecks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    *testHarness
		want []string
	}{
		{"ignores max_turns", &testHarness{format: plugin.FormatNative, ignoreMaxTurns: true}, []string{CheckMaxTurns}},
		{"crashes on garbage", &testHarness{format: plugin.FormatHermes, panicOnGarbage: true}, []string{CheckFormatError}},
		{"drops tool results", &testHarness{format: plugin.FormatReAct, dropResults: true}, []string{CheckBasicEpisode, CheckToolError}},
		{"returns host errors", &testHarness{format: plugin.FormatNative, returnHostErrors: true}, []string{CheckModelFailure, CheckEnvFailure, CheckListToolsFailure, CheckUserFailure}},
		{"ignores the history", &testHarness{format: plugin.FormatHermes, ignoreHistory: true}, []string{CheckResume}},
		{"reuses history call ids", &testHarness{format: plugin.FormatReAct, historyIDs: true}, []string{CheckResume}},
		{"ignores a user done at the opening", &testHarness{format: plugin.FormatNative, ignoreOpenDone: true}, []string{CheckOpeningDone}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rep := RunHarness(t.Context(), c.h, Options{})
			if got := failedChecks(rep); !slices.Equal(got, c.want) {
				t.Fatalf("failed %v, want %v\n%s", got, c.want, rep)
			}
			if rep.Passed() {
				t.Error("Passed() is true")
			}
		})
	}
}

// Resume runs only for a harness that declares the capability, and its
// failures say what is wrong.
func TestResumeCheck(t *testing.T) {
	t.Parallel()
	rep := RunHarness(t.Context(), &testHarness{format: plugin.FormatNative, noResume: true}, Options{})
	if !rep.Passed() || !slices.Equal(skippedChecks(rep), []string{CheckResume, CheckSettings}) {
		t.Fatalf("without the capability: skipped %v, want [resume settings]\n%s", skippedChecks(rep), rep)
	}
	for _, c := range rep.Checks {
		if c.Name == CheckResume && !strings.Contains(c.Detail, `does not declare the "resume" capability`) {
			t.Errorf("resume skipped with %q", c.Detail)
		}
	}
	want := map[string][]string{
		"ignores": {"the canonical messages after the system message are not exactly the history",
			`the first prompt lacks "echo: mk-resume-h"`, "the first User.Next did not get the history: 0 messages recorded, 3 sent"},
		"ids": {`the new call reuses the history's call id "call_0_0"`, `tool_call id "call_0_0" is not unique`},
	}
	for name, h := range map[string]*testHarness{
		"ignores": {format: plugin.FormatReAct, ignoreHistory: true},
		"ids":     {format: plugin.FormatHermes, historyIDs: true},
	} {
		rep := RunHarness(t.Context(), h, Options{})
		for _, c := range rep.Checks {
			if c.Name != CheckResume {
				continue
			}
			for _, w := range want[name] {
				if !strings.Contains(c.Detail, w) {
					t.Errorf("%s: resume detail %q lacks %q", name, c.Detail, w)
				}
			}
		}
	}
}

// The failure details name what went wrong.
func TestFailureDetails(t *testing.T) {
	t.Parallel()
	rep := RunHarness(t.Context(), &testHarness{format: plugin.FormatNative, ignoreMaxTurns: true, panicOnGarbage: true}, Options{})
	want := map[string]string{
		CheckMaxTurns:    "kept calling Generate past 20 turns",
		CheckFormatError: "panicked: cannot parse",
	}
	for _, c := range rep.Checks {
		if w, ok := want[c.Name]; ok && !strings.Contains(c.Detail, w) {
			t.Errorf("%s detail %q lacks %q", c.Name, c.Detail, w)
		}
	}
}

// hermesCodec renders intents in Hermes, standing in for a custom format.
type hermesCodec struct{}

func (hermesCodec) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	in := req.Messages[0]
	out := &plugin.Message{Role: plugin.RoleAssistant, Content: in.Content}
	for _, c := range in.ToolCalls {
		out.Content += fmt.Sprintf("<tool_call>{\"name\":%q,\"arguments\":%s}</tool_call>", c.Name, c.Arguments)
	}
	if out.Content == "" {
		out.Content = "<tool_call>{broken"
	}
	resp.Message = out
	return nil
}

func TestCustomFormat(t *testing.T) {
	t.Parallel()
	h := &testHarness{format: plugin.OutputFormat(0)}
	rep := RunHarness(t.Context(), h, Options{Model: hermesCodec{}})
	if !rep.Passed() {
		t.Fatalf("custom format with a codec:\n%s", rep)
	}
	// Without a codec the harness is not at fault: describe passes with a
	// note and every episode check is skipped, saying why.
	rep = RunHarness(t.Context(), h, Options{})
	if got := failedChecks(rep); len(got) != 0 {
		t.Errorf("without a codec failed %v, want none", got)
	}
	if d := rep.Checks[0]; !d.Passed || !strings.Contains(d.Detail, "custom format: episode checks need Options.Model") {
		t.Errorf("without a codec describe = %+v, want passed with the custom-format note", d)
	}
	if got := skippedChecks(rep); !slices.Equal(got, allChecks[1:]) {
		t.Errorf("without a codec skipped %v, want every episode check %v", got, allChecks[1:])
	}
	for _, c := range rep.Checks[1:] {
		if !strings.HasPrefix(c.Detail, "custom format: episode checks need Options.Model") {
			t.Errorf("check %s skipped with %q, want the custom-format reason", c.Name, c.Detail)
		}
	}
}

type badDescribe struct{ testHarness }

func (badDescribe) Describe(ctx context.Context, req *plugin.DescribeRequest, resp *plugin.DescribeResponse) error {
	resp.Name, resp.Version, resp.Format, resp.SettingsSchema = "", "latest", plugin.FormatNative, plugin.MustJSONValue(`"not an object"`)
	return nil
}

func TestDescribeCheck(t *testing.T) {
	t.Parallel()
	rep := RunHarness(t.Context(), &badDescribe{testHarness{format: plugin.FormatNative}}, Options{})
	d := rep.Checks[0]
	if d.Passed {
		t.Fatal("describe passed")
	}
	for _, w := range []string{"name is empty", `version "latest"`, "settings_schema is not a JSON object"} {
		if !strings.Contains(d.Detail, w) {
			t.Errorf("describe detail %q lacks %q", d.Detail, w)
		}
	}
}

func TestCanonicalProblems(t *testing.T) {
	t.Parallel()
	tc := func(id string) *plugin.ToolCall { return &plugin.ToolCall{Id: id, Name: "echo", Arguments: "{}"} }
	good := []*plugin.Message{
		{Role: "system", Content: "s"}, {Role: "user", Content: "u"},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{tc("a"), tc("b")}},
		{Role: "tool", ToolCallId: "b"}, {Role: "tool", ToolCallId: "a"},
		{Role: "assistant", Content: "done"},
	}
	if p := canonicalProblems(good); len(p) != 0 {
		t.Errorf("good messages: %v", p)
	}
	bad := []*plugin.Message{
		{Role: "robot"},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{tc("a"), tc("a"), tc("")}},
		{Role: "tool", ToolCallId: "a"}, {Role: "tool", ToolCallId: "a"}, {Role: "tool", ToolCallId: "zz"},
		{Role: "assistant", ToolCalls: []*plugin.ToolCall{tc("c")}},
		{Role: "user", Content: "early"},
	}
	got := strings.Join(canonicalProblems(bad), "\n")
	for _, w := range []string{`role "robot"`, `id "a" is not unique`, "has no id", `"a" is answered twice`,
		`answers "zz", which no earlier`, "comes before tool_calls [c] are answered"} {
		if !strings.Contains(got, w) {
			t.Errorf("problems lack %q:\n%s", w, got)
		}
	}
}

func TestReportString(t *testing.T) {
	t.Parallel()
	rep := &Report{Plugin: "x 1.0.0", Checks: []Check{{Name: "a", Passed: true, Detail: "fine"},
		{Name: "b", Detail: "broke"}, {Name: "c", Skipped: true, Detail: "n/a"}}}
	want := "conformance of x 1.0.0\nPASS a: fine\nFAIL b: broke\nSKIP c: n/a\n1 passed, 1 failed, 1 skipped\n"
	if got := rep.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if rep.Passed() {
		t.Error("Passed() with a failed check")
	}
}

// Run reports each check as a subtest.
func TestRun(t *testing.T) {
	Run(t, &testHarness{format: plugin.FormatHermes}, Options{})
}

// Over the real gRPC adapters (host errors, deadlines and cancellation
// crossing the wire), the good harness still passes and a broken one
// still fails exactly its check.
func TestOverGRPC(t *testing.T) {
	t.Parallel()
	for _, f := range []plugin.OutputFormat{plugin.FormatNative, plugin.FormatReAct} {
		hc := plugintest.Connect(t, &plugin.ServeConfig{Harness: &testHarness{format: f}}).Harness(t)
		if rep := RunHarness(t.Context(), hc, Options{}); !rep.Passed() {
			t.Errorf("%s over gRPC:\n%s", f, rep)
		}
	}
	hc := plugintest.Connect(t, &plugin.ServeConfig{Harness: &testHarness{format: plugin.FormatHermes, returnHostErrors: true}}).Harness(t)
	rep := RunHarness(t.Context(), hc, Options{})
	if got := failedChecks(rep); !slices.Equal(got, []string{CheckModelFailure, CheckEnvFailure, CheckListToolsFailure, CheckUserFailure}) {
		t.Errorf("host-error-returning harness over gRPC failed %v\n%s", got, rep)
	}
}

// settingsBreaker refuses nothing: on the unknown setting of the settings
// check it returns err (a crash or a timeout seen from the host) instead.
type settingsBreaker struct {
	testHarness
	fail func(ctx context.Context) error
}

func (h *settingsBreaker) RunEpisode(ctx context.Context, host plugin.Host, req *plugin.RunEpisodeRequest, resp *plugin.RunEpisodeResponse) error {
	if strings.Contains(plugin.SettingsJSON(req.GetSettings()), "conformance_unknown_setting") {
		return h.fail(ctx)
	}
	return h.testHarness.RunEpisode(ctx, host, req, resp)
}

// A crash or a timeout on the unknown setting is not a refusal: the
// settings check fails with that reason, while the method's own error
// still refuses.
func TestSettingsCrashIsNotRefusal(t *testing.T) {
	t.Parallel()
	closed := `{"type":"object","additionalProperties":false}`
	cases := []struct {
		name string
		fail func(ctx context.Context) error
		want string
	}{
		{"crash", func(context.Context) error {
			return &plugin.PluginError{Plugin: "harness", Kind: "exited", Err: plugin.ErrPluginExited}
		}, "with an unknown setting RunEpisode failed (exited) instead of refusing it: weft plugin harness: exited: plugin process exited"},
		{"broken connection", func(context.Context) error {
			return &plugin.PluginError{Plugin: "harness", Kind: "unavailable", Err: fmt.Errorf("connection reset")}
		}, "with an unknown setting RunEpisode failed (unavailable) instead of refusing it"},
		{"timeout", func(ctx context.Context) error {
			<-ctx.Done()
			return ctx.Err()
		}, "with an unknown setting RunEpisode timed out instead of refusing it: context deadline exceeded"},
		{"remote timeout", func(ctx context.Context) error {
			return &plugin.PluginError{Plugin: "harness", Kind: "error", Err: fmt.Errorf("deadline: %w", context.DeadlineExceeded)}
		}, "timed out instead of refusing it"},
		{"panic", func(context.Context) error { panic("boom") }, "panicked instead of refusing it: panicked: boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := &settingsBreaker{testHarness{format: plugin.FormatNative, schema: closed}, c.fail}
			rep := RunHarness(t.Context(), h, Options{Timeout: 2 * time.Second})
			if got := failedChecks(rep); !slices.Equal(got, []string{CheckSettings}) {
				t.Fatalf("failed %v, want [settings]\n%s", got, rep)
			}
			for _, ch := range rep.Checks {
				if ch.Name == CheckSettings && !strings.Contains(ch.Detail, c.want) {
					t.Errorf("settings detail %q, want it to hold %q", ch.Detail, c.want)
				}
			}
		})
	}
	// The plugin method's own error across the wire still refuses.
	refusing := &settingsBreaker{testHarness{format: plugin.FormatNative, schema: closed}, func(context.Context) error {
		return &plugin.PluginError{Plugin: "harness", Kind: "error", Err: fmt.Errorf("settings: unknown property")}
	}}
	if rep := RunHarness(t.Context(), refusing, Options{}); !rep.Passed() {
		t.Errorf("a PluginError of Kind error is a refusal:\n%s", rep)
	}
}
