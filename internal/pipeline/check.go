package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/sdk/plugin"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// Check runs the checks of cfg that need the files and plugins it names
// (what config.Load cannot see), as diagnostics with the source ranges of
// the config attributes at fault, like the decoder's own:
//
//   - every task file loads; task ids are unique over all task sets after
//     their ids/limit filters (a duplicate is reported at the later file);
//     every id of a task set's ids is in its files (reported at the id);
//   - every harness's settings match the settings_schema its Describe
//     returns (built-ins in process, binaries started and stopped), and
//     the harness of the sft and grpo stages (when the pipeline runs them)
//     declares the resume capability, reported at the block's harness.
//
// `weft validate` prints them; FromConfig fails on the task-id ones
// before it builds anything.
func Check(ctx context.Context, cfg *config.Config) hcl.Diagnostics {
	return append(checkTaskIDs(cfg), checkHarnesses(ctx, cfg, nil)...)
}

// diagError is the error of diagnostics, one formatted line each.
func diagError(diags hcl.Diagnostics) error { return errors.New(diagText(diags)) }

// diagText is diagnostics, one formatted line each.
func diagText(diags hcl.Diagnostics) string {
	var lines []string
	for _, d := range diags {
		lines = append(lines, config.FormatDiagnostic(d))
	}
	return strings.Join(lines, "\n")
}

func diag(rng hcl.Range, summary, format string, args ...any) *hcl.Diagnostic {
	return &hcl.Diagnostic{Severity: hcl.DiagError, Summary: summary, Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()}
}

// idAt is one task id and the config range of the file it came from.
type idAt struct {
	id   string
	file string
	rng  hcl.Range
}

// filterTasks keeps the items whose ids are in ids (all when ids is
// empty; the first item of an id), then the first limit (0 = all). It
// returns the index in ids of each id no item has.
func filterTasks[T any](items []T, id func(T) string, ids []string, limit int) (kept []T, missing []int) {
	kept = items
	if len(ids) > 0 {
		want := map[string]bool{}
		for _, x := range ids {
			want[x] = true
		}
		kept = nil
		for _, it := range items {
			if want[id(it)] {
				kept = append(kept, it)
				delete(want, id(it))
			}
		}
		for i, x := range ids {
			if want[x] {
				missing = append(missing, i)
			}
		}
	}
	if limit > 0 && len(kept) > limit {
		kept = kept[:limit]
	}
	return kept, missing
}

// checkTaskIDs loads the ids of every task set's files and checks them.
func checkTaskIDs(cfg *config.Config) hcl.Diagnostics {
	var diags hcl.Diagnostics
	type first struct {
		at  idAt
		set string
	}
	seen := map[string]first{}
	for _, ts := range cfg.Tasks {
		var all []idAt
		if ts.Tau2 != "" {
			raw, err := task.LoadTau2File(ts.Tau2)
			if err != nil {
				diags = append(diags, diag(ts.Source.Attr("tau2"), "Invalid tau2 tasks file", "%v", err))
			}
			for _, t := range raw {
				all = append(all, idAt{t.ID, ts.Tau2, ts.Source.Attr("tau2")})
			}
		}
		for i, f := range ts.Weft {
			tasks, err := task.LoadFile(f)
			if err != nil {
				diags = append(diags, diag(ts.Source.Elem("weft", i), "Invalid weft tasks file", "%v", err))
			}
			for _, t := range tasks {
				all = append(all, idAt{t.ID, f, ts.Source.Elem("weft", i)})
			}
			diags = append(diags, checkTaskModules(cfg, ts, f, ts.Source.Elem("weft", i), tasks)...)
		}
		kept, missing := filterTasks(all, func(a idAt) string { return a.id }, ts.IDs, ts.Limit)
		for _, i := range missing {
			diags = append(diags, diag(ts.Source.Elem("ids", i), "Unknown task id",
				"Task set %q has no task %q (its files hold %d tasks).", ts.Name, ts.IDs[i], len(all)))
		}
		// One diagnostic per file that repeats ids, naming the first few.
		type dup struct {
			at    idAt
			first first
			ids   []string
		}
		var dups []*dup
		byFile := map[string]*dup{}
		for _, a := range kept {
			f, ok := seen[a.id]
			if !ok {
				seen[a.id] = first{a, ts.Name}
				continue
			}
			key := a.file + "\x00" + f.at.file + "\x00" + f.set
			d := byFile[key]
			if d == nil {
				d = &dup{at: a, first: f}
				byFile[key] = d
				dups = append(dups, d)
			}
			d.ids = append(d.ids, a.id)
		}
		for _, d := range dups {
			shown := d.ids
			if len(shown) > 5 {
				shown = shown[:5]
			}
			q := make([]string, len(shown))
			for i, s := range shown {
				q[i] = fmt.Sprintf("%q", s)
			}
			more := ""
			if len(d.ids) > len(shown) {
				more = fmt.Sprintf(" and %d more", len(d.ids)-len(shown))
			}
			diags = append(diags, diag(d.at.rng, "Duplicate task id",
				"%d task ids of %s in tasks %q are also in %s of tasks %q (%s:%d): %s%s. Task ids must be unique over the run; filter with ids or limit.",
				len(d.ids), d.at.file, ts.Name, d.first.at.file, d.first.set, d.first.at.rng.Filename, d.first.at.rng.Start.Line,
				strings.Join(q, ", "), more))
		}
	}
	return diags
}

// checkTaskModules checks the modules the tasks of file f (of task set
// ts) name: each must be a declared module block (by name or digest),
// reported at rng, and one of the task set's modules (its modules
// attribute), reported there; one diagnostic per file and module.
func checkTaskModules(cfg *config.Config, ts config.TaskSet, f string, rng hcl.Range, tasks []*task.Task) hcl.Diagnostics {
	declared := map[string]bool{}
	var names []string
	for _, m := range cfg.Modules {
		declared[m.Name] = true
		names = append(names, m.Name)
		if m.Digest != "" {
			declared[m.Digest] = true
		}
	}
	var diags hcl.Diagnostics
	reported := map[string]bool{}
	for _, t := range tasks {
		for _, m := range t.Modules {
			if reported[m] {
				continue
			}
			switch {
			case !declared[m]:
				reported[m] = true
				diags = append(diags, diag(rng, "Unknown task module",
					"Task %q of %s names module %q, which no module block declares (modules: %s).", t.ID, f, m, strings.Join(names, ", ")))
			case !slices.Contains(ts.Modules, m):
				reported[m] = true
				diags = append(diags, diag(ts.Source.Attr("modules"), "Task module not in the task set",
					"Task %q of %s runs on module %q, but tasks %q has modules %q: add it there or drop the task.", t.ID, f, m, ts.Name, ts.Modules))
			}
		}
	}
	return diags
}

// checkHarnesses describes every harness (built-ins in process, binaries
// started and stopped) and checks its settings against the settings_schema
// it describes ("" = any settings), and that the harness of a training
// stage the pipeline runs (sft, grpo) declares the resume capability.
// step, when not nil, receives one PreflightStep per harness.
func checkHarnesses(ctx context.Context, cfg *config.Config, step func(PreflightStep)) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for _, h := range cfg.Harnesses {
		start := time.Now()
		st := PreflightStep{Check: "harness", Block: fmt.Sprintf("harness %q", h.Name), Target: harnessTarget(h)}
		var mine hcl.Diagnostics
		d, err := describeHarness(ctx, h)
		var schema string
		if err == nil {
			schema, err = schemaText(d.SettingsSchema)
		}
		if err != nil {
			mine = append(mine, diag(h.Source.Attr("binary"), "Harness did not describe itself", "Harness %q: %v.", h.Name, err))
		} else {
			st.Detail = fmt.Sprintf("%s %s, capabilities %q", d.Name, d.Version, d.Capabilities)
			if err := validateSettings(h.Name, schema, h.Settings); err != nil {
				mine = append(mine, diag(h.Source.Attr("settings"), "Invalid harness settings",
					"The settings of harness %q do not match its settings_schema: %v.", h.Name, err))
			}
			for _, u := range resumeUsers(cfg, h.Name) {
				if !slices.Contains(d.Capabilities, plugin.CapabilityResume) {
					mine = append(mine, diag(u.rng, "Harness cannot resume",
						"The %s stage runs harness %q, which does not declare the %q capability (%s %s declares %q): turn-by-turn sampling resumes conversations (RunEpisodeRequest.history). Use a harness that does (the built-ins do) or add resume support (docs/plugins.md).",
						u.stage, h.Name, plugin.CapabilityResume, d.Name, d.Version, d.Capabilities))
				}
			}
		}
		st.OK = !mine.HasErrors()
		if !st.OK {
			st.Detail = diagText(mine)
		}
		st.DurationMS = time.Since(start).Milliseconds()
		if step != nil {
			step(st)
		}
		diags = append(diags, mine...)
	}
	return diags
}

// stageUse is a training stage that runs a harness, and the config range
// that names it.
type stageUse struct {
	stage string
	rng   hcl.Range
}

// resumeUsers are the training stages the pipeline runs with harness name
// (they need it to resume conversations).
func resumeUsers(cfg *config.Config, name string) []stageUse {
	var out []stageUse
	if s := cfg.SFT; s != nil && s.Harness == name && slices.Contains(cfg.Stages, StageSFT) {
		out = append(out, stageUse{StageSFT, s.Source.Attr("harness")})
	}
	if g := cfg.GRPO; g != nil && g.Harness == name && slices.Contains(cfg.Stages, StageGRPO) {
		out = append(out, stageUse{StageGRPO, g.Source.Attr("harness")})
	}
	return out
}

func harnessTarget(h config.Harness) string {
	if h.Builtin != "" {
		return "built-in " + h.Builtin
	}
	return strings.Join(append([]string{h.Binary}, h.Args...), " ")
}

// describeHarness is a harness's Describe answer (a binary is started and
// stopped).
func describeHarness(ctx context.Context, h config.Harness) (*plugin.DescribeResponse, error) {
	var resp plugin.DescribeResponse
	if h.Builtin != "" {
		b, ok := builtin.Harness(h.Builtin)
		if !ok {
			return nil, fmt.Errorf("no built-in harness %q", h.Builtin)
		}
		if err := b.Describe(ctx, &plugin.DescribeRequest{}, &resp); err != nil {
			return nil, err
		}
		return &resp, nil
	}
	c, err := plugin.Start(ctx, plugin.StartConfig{Cmd: exec.Command(h.Binary, h.Args...), Name: "harness " + h.Name})
	if err != nil {
		return nil, err
	}
	defer c.Kill()
	hc, err := c.Harness()
	if err != nil {
		return nil, err
	}
	if err := hc.Describe(ctx, &plugin.DescribeRequest{}, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// schemaText is a described settings_schema as JSON text ("" when the
// harness gives none: any settings).
func schemaText(v *pluginpb.Value) (string, error) {
	if v == nil {
		return "", nil
	}
	b, err := plugin.ValueJSON(v)
	if err != nil {
		return "", fmt.Errorf("its settings_schema: %w", err)
	}
	return string(b), nil
}

// validateSettings checks settings (a JSON object) against schema, a JSON
// Schema (draft 2020-12 unless it says otherwise; "" accepts anything).
// The error names the JSON pointer of the failing value.
func validateSettings(name, schema string, settings []byte) error {
	if strings.TrimSpace(schema) == "" {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schema))
	if err != nil {
		return fmt.Errorf("its settings_schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "weft:harness/" + name + "/settings.json"
	if err := c.AddResource(url, doc); err != nil {
		return fmt.Errorf("its settings_schema is invalid: %v", err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return fmt.Errorf("its settings_schema is invalid: %v", err)
	}
	if len(bytes.TrimSpace(settings)) == 0 {
		settings = []byte("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(settings))
	if err != nil {
		return err
	}
	if err := s.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return errors.New(strings.Join(leaves(ve), "; "))
		}
		return err
	}
	return nil
}

var printer = message.NewPrinter(language.English)

// leaves are the deepest causes of a validation error, each "at /pointer:
// message" ("at the top level" for the object itself), in the library's
// order.
func leaves(ve *jsonschema.ValidationError) []string {
	if len(ve.Causes) == 0 {
		at := "/" + strings.Join(ve.InstanceLocation, "/")
		if at == "/" {
			at = "the top level"
		}
		return []string{"at " + at + ": " + ve.ErrorKind.LocalizedString(printer)}
	}
	var out []string
	for _, c := range ve.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}
