package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// taskEnvFlags are the flags that pick the servers of weft synth tasks and
// weft synth certify.
type taskEnvFlags struct {
	servers []string
	wasm    bool
	out     string
	report  string
}

func (t *taskEnvFlags) add(cmd *cobra.Command, out string) {
	cmd.Flags().StringArrayVar(&t.servers, "server", nil, "a server: spec directory, spec JSON file, bundle file or registry reference (repeat for a lifecycle group of several)")
	cmd.Flags().BoolVar(&t.wasm, "wasm", false, "run synthesized servers on the interpreter wasm module (Runtime.LoadServer) instead of natively")
	cmd.Flags().StringVar(&t.out, "out", out, "the certified tasks file to write (weft.tasks/v1)")
	cmd.Flags().StringVar(&t.report, "report", "", "the report JSON file to write (default: --out with .report.json)")
}

func (t *taskEnvFlags) reportPath() string {
	if t.report != "" {
		return t.report
	}
	return strings.TrimSuffix(strings.TrimSuffix(t.out, ".json"), ".weft") + ".report.json"
}

// taskEnv loads the servers into one tasks.Env: synthesized servers
// natively (or on the interpreter with wasm), wasm modules on a runtime
// (allowWasm). It returns the specs of the synthesized ones, the module
// names and a close function.
func taskEnv(ctx context.Context, f *moduleFlags, t *taskEnvFlags, allowWasm bool) (*tasks.Env, []*spec.Server, []string, func(), error) {
	if len(t.servers) == 0 {
		return nil, nil, nil, nil, usageErrorf("give at least one --server REF|DIR")
	}
	if err := t.checkOutputs(); err != nil {
		return nil, nil, nil, nil, err
	}
	st := state.NewStore()
	var rt *module.Runtime
	closeAll := func() {
		if rt != nil {
			rt.Close(ctx)
		}
		st.Close()
	}
	var mods []*module.Module
	var seeds []*state.Version
	var specs []*spec.Server
	var names []string
	fail := func(err error) (*tasks.Env, []*spec.Server, []string, func(), error) {
		closeAll()
		return nil, nil, nil, nil, err
	}
	for _, ref := range t.servers {
		var b *module.Bundle
		var srv *spec.Server
		if fi, err := os.Stat(ref); err == nil && (fi.IsDir() || strings.HasSuffix(ref, ".json")) {
			s, err := spec.Load(ref)
			if err != nil {
				return fail(err)
			}
			srv = s
		} else {
			bb, _, err := f.load(ref)
			if err != nil {
				return fail(err)
			}
			b = bb
			if b.IsServer() {
				if srv, err = b.Spec(); err != nil {
					return fail(err)
				}
			}
		}
		var m *module.Module
		var err error
		switch {
		case srv != nil && !t.wasm:
			m, err = module.NewNativeServer(srv, module.Config{CallTimeout: tasks.CallTimeout})
			b = &module.Bundle{Schema: srv.Schema, Seed: srv.Seed}
		default:
			if srv == nil && !allowWasm {
				return fail(fmt.Errorf("%s is a wasm module (%s), not a synthesized server: task generation reads a server's spec", ref, b.Manifest.Name))
			}
			if rt == nil {
				if rt, err = f.runtimeWith(ctx, module.Config{CallTimeout: tasks.CallTimeout}); err != nil {
					return fail(err)
				}
			}
			reg, rerr := f.openRegistry()
			if rerr != nil {
				return fail(rerr)
			}
			if b == nil {
				if b, _, err = f.specBundle(ref); err != nil {
					return fail(err)
				}
			}
			m, err = rt.Load(ctx, reg, b)
		}
		if err != nil {
			return fail(err)
		}
		v, err := b.SeedVersion(ctx, st)
		if err != nil {
			return fail(fmt.Errorf("%s: seed state: %w", ref, err))
		}
		mods = append(mods, m)
		seeds = append(seeds, v)
		if srv != nil {
			specs = append(specs, srv)
			names = append(names, srv.Name)
		} else {
			names = append(names, m.Manifest().Name)
		}
	}
	env, err := tasks.GroupEnv(st, mods, seeds)
	if err != nil {
		return fail(err)
	}
	return env, specs, names, closeAll, nil
}

// checkOutputs fails before any work when the directory of --out or
// --report is not there, instead of after generating or certifying.
func (t *taskEnvFlags) checkOutputs() error {
	for _, p := range []string{t.out, t.reportPath()} {
		dir := filepath.Dir(p)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("cannot write %s: directory %s does not exist", p, dir)
		}
	}
	return nil
}

// writeOutputs writes the tasks file and the report JSON.
func writeOutputs(t *taskEnvFlags, ts []*task.Task, report any) error {
	var b bytes.Buffer
	if err := task.Save(&b, ts); err != nil {
		return err
	}
	if err := os.WriteFile(t.out, b.Bytes(), 0o644); err != nil {
		return err
	}
	rb, err := json.MarshalIndent(report, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(t.reportPath(), append(rb, '\n'), 0o644)
}

func printReasons(w io.Writer, by map[tasks.Reason]int) {
	var parts []string
	for _, r := range tasks.Reasons {
		if by[r] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, by[r]))
		}
	}
	if len(parts) == 0 {
		parts = []string{"none"}
	}
	fmt.Fprintf(w, "rejections: %s\n", strings.Join(parts, ", "))
}

func newSynthTasksCmd(a *app, f *moduleFlags) *cobra.Command {
	tf := &taskEnvFlags{}
	var seed uint64
	var perTool, rounds int
	var writer, baseURL, modelName, apiKeyEnv string
	cmd := &cobra.Command{
		Use:   "tasks --server REF|DIR",
		Short: "Generate certified atomic tasks for synthesized servers",
		Long: `Generate atomic tasks for one or more synthesized servers (a lifecycle group)
from their tool dependency graph: per write tool, the read tools whose
outputs feed its *_id arguments, then the write; per read tool, the read.
Entity bindings are sampled from the seed state with --seed; request text
comes from templates (--writer template) or a model behind an
OpenAI-compatible endpoint (--writer endpoint). Every candidate is
certified by execution (docs/certification.md); certified tasks with the
same signature (tool multiset, diff shape) are pruned to one, and a
coverage map (tool x read/write x error branch) drives regeneration rounds
until it stops growing. Writes the tasks (--out, weft.tasks/v1) and the
report (--report); progress goes to stderr. The same seed gives the same
bytes.`,
		Example: `  weft synth tasks --server examples/servers/tau2-airline --out airline.tasks.weft.json
  weft synth tasks --server examples/servers/tau2-retail --seed 7 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if perTool < 0 || rounds < 0 {
				return usageErrorf("--per-tool and --rounds must be 0 (the default) or more, got %d and %d", perTool, rounds)
			}
			var w tasks.RequestWriter
			switch writer {
			case "template":
			case "endpoint":
				if baseURL == "" || modelName == "" {
					return usageErrorf("--writer endpoint needs --base-url and --model")
				}
				cfg := model.ClientConfig{BaseURL: baseURL, Model: modelName}
				if apiKeyEnv != "" {
					if cfg.APIKey = os.Getenv(apiKeyEnv); cfg.APIKey == "" {
						return fmt.Errorf("--api-key-env %s: the variable is empty or unset", apiKeyEnv)
					}
				}
				c, err := model.NewClient(cfg)
				if err != nil {
					return err
				}
				// Before any server loads or file is written: the endpoint
				// answers and serves the model (model.Client.Probe).
				if _, err := c.Probe(ctx); err != nil {
					return fmt.Errorf("--writer endpoint: %s does not serve model %q: %w", baseURL, modelName, err)
				}
				w = &tasks.ModelWriter{Model: c}
			default:
				return usageErrorf("--writer must be template or endpoint, got %q", writer)
			}
			env, specs, _, closeEnv, err := taskEnv(ctx, f, tf, false)
			if err != nil {
				return err
			}
			defer closeEnv()
			log := a.log()
			res, err := tasks.Generate(ctx, env, specs, tasks.GenOptions{Seed: seed, PerTool: perTool, MaxRounds: rounds, Writer: w,
				Progress: func(round int, msg string) { log.Info("round", "round", round, "result", msg) }})
			if err != nil {
				return a.interrupted(ctx, "synth tasks", err)
			}
			if err := writeOutputs(tf, res.Tasks, res.Report); err != nil {
				return err
			}
			r := res.Report
			return a.print(r, func(w io.Writer) error {
				fmt.Fprintf(w, "servers %s, seed %d: %d rounds, %d attempts, %d discarded, %d candidates, %d certified, %d pruned, %d kept (%d write, %d read)\n",
					strings.Join(r.Servers, ", "), r.Seed, r.Rounds, r.Attempts, r.Discarded, r.Generated, r.Certified, r.Pruned, r.Kept, r.KeptWrite, r.KeptRead)
				printReasons(w, r.ByReason)
				fmt.Fprintf(w, "coverage: %d of %d cells (tool x read/write x branch)\n", r.Coverage.Covered, r.Coverage.Possible)
				fmt.Fprintf(w, "wrote %s and %s\n", tf.out, tf.reportPath())
				return nil
			})
		},
	}
	tf.add(cmd, "synth-tasks.weft.json")
	cmd.Flags().Uint64Var(&seed, "seed", 0, "seed of the binding samples")
	cmd.Flags().IntVar(&perTool, "per-tool", 0, "candidates per tool per round (default 6)")
	cmd.Flags().IntVar(&rounds, "rounds", 0, "at most this many regeneration rounds (default 5)")
	cmd.Flags().StringVar(&writer, "writer", "template", "who writes request text, briefs and rubric items: template|endpoint")
	cmd.Flags().StringVar(&baseURL, "base-url", "", "the endpoint writer's OpenAI-compatible base URL (with /v1)")
	cmd.Flags().StringVar(&modelName, "model", "", "the endpoint writer's model")
	cmd.Flags().StringVar(&apiKeyEnv, "api-key-env", "", "environment variable holding the endpoint's API key")
	return cmd
}

func newSynthCertifyCmd(a *app, f *moduleFlags) *cobra.Command {
	tf := &taskEnvFlags{}
	var failOnReject bool
	cmd := &cobra.Command{
		Use:   "certify TASKS --server REF|DIR",
		Short: "Certify existing tasks (weft.tasks/v1 or tau2-bench tasks.json) by execution",
		Long: `Certify every atomic task of TASKS against the servers (one lifecycle group;
synthesized servers natively or with --wasm on the interpreter module, wasm
modules from the registry): each reference runs twice from a fresh fork of
its initial state with different session seeds (identical diffs and
outputs), its checkpoint passes on the reference's final state, fails on
the initial state and fails with any one state-changing call dropped; a
read-only reference needs a required_call or communicate check; bindings
must name entities of the state. A tau2-bench tasks.json is converted
first, with the servers' read-only tools and gold replay (as weft run
does). Writes the certified tasks (--out) and the report with every
rejection, its reason and failing call (--report). With --strict, exits 1
when any task is rejected.`,
		Example: `  weft synth certify examples/data/tau2-retail/tasks.json --server examples/servers/tau2-retail
  weft synth certify examples/data/tau2-airline/tasks.json --server examples/servers/tau2-airline --json`,
		Args: exactArgs(1, "a tasks file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			env, _, names, closeEnv, err := taskEnv(ctx, f, tf, true)
			if err != nil {
				return err
			}
			defer closeEnv()
			ts, err := loadAnyTasks(ctx, env, args[0], names)
			if err != nil {
				return a.interrupted(ctx, "synth certify", err)
			}
			log := a.log()
			rep, certified, err := tasks.Certify(ctx, ts, groupResolver(env, names), tasks.Options{
				Progress: func(done, total int) {
					if done%20 == 0 || done == total {
						log.Info("certifying", "done", done, "total", total)
					}
				}})
			if err != nil {
				return a.interrupted(ctx, "synth certify", err)
			}
			if err := writeOutputs(tf, certified, rep); err != nil {
				return err
			}
			perr := a.print(summaryOf(rep), func(w io.Writer) error {
				fmt.Fprintf(w, "%d of %d tasks certified, %d of %d atomic tasks (%d read-only), %d warnings\n",
					rep.TasksCertified, rep.Tasks, rep.AtomicCertified, rep.Atomic, rep.ReadOnlyAtomic, rep.Warnings)
				printReasons(w, rep.ByReason)
				for _, r := range rep.Rejections() {
					at := r.Task
					if r.Atomic != "" {
						at += "/" + r.Atomic
					}
					fmt.Fprintf(w, "  %-10s %-26s %s\n", at, r.Reason, r.Detail)
				}
				fmt.Fprintf(w, "wrote %s and %s\n", tf.out, tf.reportPath())
				return nil
			})
			if perr != nil {
				return perr
			}
			if failOnReject && rep.TasksCertified < rep.Tasks {
				return errSilentFailure
			}
			return nil
		},
	}
	tf.add(cmd, "certified.weft.json")
	cmd.Flags().BoolVar(&failOnReject, "strict", false, "exit 1 when any task is rejected")
	return cmd
}

// interrupted is err, or, when err is ctx's cancellation (Ctrl-C,
// SIGTERM), an "interrupted" line on stderr and exit status 130, as weft
// run ends: nothing was written.
func (a *app) interrupted(ctx context.Context, cmd string, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		fmt.Fprintf(a.env.Stderr, "weft %s: interrupted; nothing was written; rerun the same command to start again\n", cmd)
		return &exitError{code: 130}
	}
	return err
}

// groupResolver resolves a task's modules to env when every one of them
// is among names (the servers given); a task naming another module is
// rejected (no_env). No modules: env.
func groupResolver(env *tasks.Env, names []string) tasks.Resolver {
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	return func(mods []string) (*tasks.Env, error) {
		for _, m := range mods {
			if !have[m] {
				return nil, fmt.Errorf("module %q is not among the servers given (%s)", m, strings.Join(names, ", "))
			}
		}
		return env, nil
	}
}

// certifySummary is the --json output of weft synth certify: the report
// without per-task results, plus the rejections.
type certifySummary struct {
	Format          string               `json:"format"`
	Tasks           int                  `json:"tasks"`
	TasksCertified  int                  `json:"tasks_certified"`
	Atomic          int                  `json:"atomic"`
	AtomicCertified int                  `json:"atomic_certified"`
	ReadOnlyAtomic  int                  `json:"read_only_atomic"`
	ByReason        map[tasks.Reason]int `json:"by_reason"`
	Warnings        int                  `json:"warnings"`
	Rejections      []tasks.Rejection    `json:"rejections"`
}

func summaryOf(r *tasks.Report) certifySummary {
	rj := r.Rejections()
	if rj == nil {
		rj = []tasks.Rejection{}
	}
	return certifySummary{r.Format, r.Tasks, r.TasksCertified, r.Atomic, r.AtomicCertified, r.ReadOnlyAtomic, r.ByReason, r.Warnings, rj}
}

// loadAnyTasks reads a weft.tasks/v1 file, or a tau2-bench tasks.json
// converted against env (its tools, its gold replay) with modules names.
func loadAnyTasks(ctx context.Context, env *tasks.Env, path string, names []string) ([]*task.Task, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Format string `json:"format"`
	}
	if json.Unmarshal(b, &probe) == nil && probe.Format != "" {
		if probe.Format != task.Format {
			return nil, fmt.Errorf("%s: format %q, want %s or a tau2-bench tasks list", path, probe.Format, task.Format)
		}
		// Each invalid task is rejected on its own (invalid_task); ids
		// must still be unique for the certified file to be written.
		ts, err := task.LoadFileUnvalidated(path)
		if err != nil {
			return nil, err
		}
		seen := map[string]int{}
		for i, t := range ts {
			if j, dup := seen[t.ID]; dup {
				return nil, fmt.Errorf("%s: tasks[%d] has the id %q of tasks[%d]: task ids must be unique", path, i, t.ID, j)
			}
			seen[t.ID] = i
		}
		return ts, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(b, &list) != nil {
		return nil, errors.New(path + ": neither a weft.tasks/v1 file nor a tau2-bench tasks list")
	}
	source := strings.Join(names, "+")
	if !strings.HasPrefix(source, "tau2-") {
		source = "tau2-" + source
	}
	return env.ConvertTau2(ctx, path, names, source)
}
