package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/synth/compose"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// composeFlags are the knobs of weft synth compose (compose.Options).
type composeFlags struct {
	seed                                       uint64
	tasks, turns, spread, genSeeds, distractor int
	shared                                     int
}

func (c *composeFlags) add(cmd *cobra.Command) {
	cmd.Flags().Uint64Var(&c.seed, "seed", 1, "seed of the atomic pool, the sampling and the distractors")
	cmd.Flags().IntVar(&c.tasks, "tasks", 100, "composed tasks to make")
	cmd.Flags().IntVar(&c.turns, "turns", 20, "median atomic turns (atomic tasks) per composed task, in [2, 200]")
	cmd.Flags().IntVar(&c.spread, "spread", 0, "atomic turns vary in [turns-spread, turns+spread]; less than --turns (0: turns/4)")
	cmd.Flags().IntVar(&c.genSeeds, "gen-seeds", 6, "binding seeds of the atomic pool per server (weft synth tasks runs)")
	cmd.Flags().IntVar(&c.distractor, "distractors", 2, "near-miss distractors per bound entity in context enrichment, in [0, 16] (0: none)")
	cmd.Flags().IntVar(&c.shared, "shared-entities", 0, "people bound in two servers' users at once (same user_id, names, email): after edges across servers")
}

// check refuses values outside the compose block's ranges (core/config's
// schema, the same bounds weft validate applies to the attributes), and a
// --spread not below --turns, before any work.
func (c *composeFlags) check(cmd *cobra.Command) error {
	for _, f := range []struct {
		flag, attr string
		v          int
	}{
		{"tasks", "tasks", c.tasks},
		{"turns", "turns", c.turns},
		{"spread", "spread", c.spread},
		{"gen-seeds", "gen_seeds", c.genSeeds},
		{"shared-entities", "shared_entities", c.shared},
	} {
		if err := flagInBounds(f.flag, "compose."+f.attr, f.v, ""); err != nil {
			return err
		}
	}
	// -1 was the flag's "none" before 0 meant none (as in the attribute);
	// it is still accepted.
	if c.distractor != -1 {
		if err := flagInBounds("distractors", "compose.distractors", c.distractor, " (0 = none)"); err != nil {
			return err
		}
	}
	if cmd.Flags().Changed("spread") && c.spread >= c.turns {
		return usageErrorf("--spread must be less than --turns (%d), got %d: a task draws its atomic turns from [turns-spread, turns+spread]", c.turns, c.spread)
	}
	return nil
}

// flagInBounds is a usage error when v is outside the range the config
// schema gives attr (config.Bounds), naming the flag and the range.
func flagInBounds(flag, attr string, v int, hint string) error {
	lo, hi := config.Bounds(attr)
	switch {
	case lo != nil && hi != nil && (float64(v) < *lo || float64(v) > *hi):
		return usageErrorf("--%s must be in [%g, %g]%s, got %d", flag, *lo, *hi, hint, v)
	case lo != nil && float64(v) < *lo:
		return usageErrorf("--%s must be at least %g%s, got %d", flag, *lo, hint, v)
	case hi != nil && float64(v) > *hi:
		return usageErrorf("--%s must be at most %g%s, got %d", flag, *hi, hint, v)
	}
	return nil
}

// checkServers refuses a server given twice (the same directory or file,
// however spelled) before the atomic pools are built.
func checkServers(servers []string) error {
	seen := map[string]string{}
	for _, s := range servers {
		p, err := filepath.Abs(s)
		if err != nil {
			return usageErrorf("--server %s: %v", s, err)
		}
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		if first, ok := seen[p]; ok {
			return usageErrorf("--server %s is given twice (first as %s); each server joins the group once", s, first)
		}
		seen[p] = s
	}
	return nil
}

// options maps the flags to compose.Options. --distractors 0 means none,
// as the compose block's distractors = 0 does (compose.Options' 0 is its
// default, 2, so none is -1 there); the flag's default is 2.
func (c *composeFlags) options() compose.Options {
	d := c.distractor
	if d == 0 {
		d = -1
	}
	return compose.Options{Seed: c.seed, Tasks: c.tasks, Turns: c.turns, Spread: c.spread, GenSeeds: c.genSeeds, Distractors: d, SharedEntities: c.shared}
}

func newSynthComposeCmd(a *app) *cobra.Command {
	tf := &taskEnvFlags{}
	cf := &composeFlags{}
	var configFile string
	cmd := &cobra.Command{
		Use:   "compose (--server DIR --server DIR ... | --config FILE)",
		Short: "Compose certified atomic tasks of several servers into grounded cross-server tasks",
		Long: `Compose cross-server tasks (docs/certification.md, "Composition"): certified
atomic tasks are generated per server (as weft synth tasks does, over
--gen-seeds binding seeds), sampled across the servers with coverage-aware
weights into DAGs whose after edges come from read/write dependencies on
shared entities, grounded in three rounds (entity initialization, relation
completion, context enrichment with uniqueness checks) into each task's
own initial_state, and re-certified on it. The servers form one lifecycle
group: tables of the same name stay apart under table namespaces, clashing
tools are named module__tool. Writes the tasks (--out, weft.tasks/v1) and
the report (--report); progress goes to stderr. The same seed gives the
same bytes.`,
		Example: `  weft synth compose --server examples/servers/tau2-retail --server examples/servers/tau2-airline --out compose.weft.json
  weft synth compose --server examples/servers/tau2-retail --server examples/servers/tau2-airline --tasks 10 --turns 8 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configFile != "" {
				if len(tf.servers) > 0 {
					return usageErrorf("give --config or --server, not both")
				}
				cfg, diags := config.Load(configFile, config.LoadOptions{})
				for _, d := range diags {
					fmt.Fprintln(a.env.Stderr, config.FormatDiagnostic(d))
				}
				if cfg == nil || diags.HasErrors() {
					return fmt.Errorf("%s: invalid config: %s", configFile, countErrors(diags))
				}
				if cfg.Compose == nil {
					return usageErrorf("%s has no compose block", configFile)
				}
				return runComposeConfig(cmd.Context(), a, cfg.Compose)
			}
			if len(tf.servers) < 2 {
				return usageErrorf("give at least two --server DIR (or --config FILE with a compose block)")
			}
			if err := cf.check(cmd); err != nil {
				return err
			}
			if err := checkServers(tf.servers); err != nil {
				return err
			}
			if err := tf.checkOutputs(); err != nil {
				return err
			}
			return composeAndReport(cmd.Context(), a, tf.servers, cf.options(), tf.out, tf.reportPath())
		},
	}
	tf.add(cmd, "synth-compose.weft.json")
	// compose reads specs (spec.Load), not bundles or registry references.
	cmd.Flags().Lookup("server").Usage = "a server: spec directory or spec JSON file (repeat: at least two, one lifecycle group)"
	cmd.Flags().MarkHidden("wasm")
	cf.add(cmd)
	cmd.Flags().StringVar(&configFile, "config", "", "an HCL config with a compose block (configs/synth-compose-gen.hcl) instead of the flags")
	return cmd
}

// composeOptions maps a compose block to compose.Options (distractors
// 0 = none).
func composeOptions(c *config.Compose) compose.Options {
	d := c.Distractors
	if d == 0 {
		d = -1
	}
	return compose.Options{Seed: c.Seed, Tasks: c.Tasks, Turns: c.Turns, Spread: c.Spread, GenSeeds: c.GenSeeds,
		PerTool: c.PerTool, Rounds: c.Rounds, Distractors: d, SharedEntities: c.SharedEntities, MaxAttempts: c.MaxAttempts}
}

// runComposeConfig runs a compose block (weft run FILE, weft synth compose
// --config FILE).
func runComposeConfig(ctx context.Context, a *app, c *config.Compose) error {
	for _, p := range []string{c.Out, c.Report} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
	}
	return composeAndReport(ctx, a, c.Servers, composeOptions(c), c.Out, c.Report)
}

// composeAndReport loads the servers, composes, writes the tasks and the
// report, and prints the summary (or with --json the report).
func composeAndReport(ctx context.Context, a *app, dirs []string, opts compose.Options, out, reportPath string) error {
	var servers []*spec.Server
	for _, d := range dirs {
		s, err := spec.Load(d)
		if err != nil {
			return err
		}
		servers = append(servers, s)
	}
	opts.Progress = func(msg string) { fmt.Fprintf(a.env.Stderr, "weft compose: %s\n", msg) }
	res, err := compose.Run(ctx, servers, opts)
	if err != nil {
		return a.interrupted(ctx, "synth compose", err)
	}
	if err := writeCompose(res, out, reportPath); err != nil {
		return err
	}
	r := res.Report
	return a.print(r, func(w io.Writer) error {
		fmt.Fprintf(w, "servers %s, seed %d: %d composed of %d sampled (median %.1f atomic turns)\n",
			strings.Join(r.Servers, ", "), r.Seed, r.Composed, r.Attempts, r.TurnsMedian)
		for _, p := range r.Pools {
			fmt.Fprintf(w, "  pool %s: %d generated, %d certified, %d pruned, %d kept, %d in the pool\n", p.Server, p.Generated, p.Certified, p.Pruned, p.Kept, p.Pool)
		}
		fmt.Fprintf(w, "rejected: %s\n", countsText(r.RejectedBy))
		writeRejections(w, r.Rejections, reportPath)
		fmt.Fprintf(w, "atomic turns: %s\n", histText(r.AtomicTurns))
		fmt.Fprintf(w, "servers per task: %s\n", histText(r.ServersPerTask))
		fmt.Fprintf(w, "after edges %d (%d across servers), roots %d; tools covered %d of %d\n", r.Edges, r.CrossEdges, r.Roots, r.ToolsCovered, r.ToolsPossible)
		g := r.Grounding
		fmt.Fprintf(w, "grounding: rows %d entity + %d relation + %d context (%d distractors dropped); uniqueness checks %d, failed %d\n",
			g.EntityRows, g.RelationRows, g.ContextRows, g.DistractorsDropped, g.UniquenessChecks, g.UniquenessFailed)
		fmt.Fprintf(w, "wrote %s, %s and %s\n", out, task.StatesPath(out), reportPath)
		return nil
	})
}

// writeCompose writes the composed tasks (their initial states in one
// state set beside them, task.SaveSplit) and the report.
func writeCompose(res *compose.Result, out, reportPath string) error {
	if err := task.SaveSplit(out, res.Tasks); err != nil {
		return err
	}
	rb, err := json.MarshalIndent(res.Report, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(reportPath, append(rb, '\n'), 0o644)
}

// maxRejectionLines is how many rejections the summary lists.
const maxRejectionLines = 10

// writeRejections lists the first maxRejectionLines rejected samples, one
// line each (compose.Rejection.String), and how many more the report at
// reportPath holds.
func writeRejections(w io.Writer, rs []compose.Rejection, reportPath string) {
	for i, r := range rs {
		if i == maxRejectionLines {
			fmt.Fprintf(w, "  ... %d more in %s (\"rejections\")\n", len(rs)-i, reportPath)
			return
		}
		fmt.Fprintf(w, "  %s\n", r)
	}
}

func countsText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func histText(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d:%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
