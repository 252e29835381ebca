package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/internal/pipeline"
)

// runResult is the --json output of `weft run`.
type runResult struct {
	Dir         string `json:"dir"`
	Interrupted bool   `json:"interrupted"`
	// Preflight is nil with --skip-preflight.
	Preflight *preflightResult `json:"preflight,omitempty"`
	// Metrics is nil when the run was interrupted or did not start.
	Metrics *report.Metrics `json:"metrics,omitempty"`
	// Report is the report.html this run wrote; absent when no report
	// stage ran (an older report in the folder is not this run's).
	Report string `json:"report,omitempty"`
}

// preflightResult is the preflight part of `weft run --json` (all of it
// with --preflight-only).
type preflightResult struct {
	OK          bool                     `json:"ok"`
	Steps       []pipeline.PreflightStep `json:"steps"`
	Diagnostics []config.Diagnostic      `json:"diagnostics"`
}

func newRunCmd(a *app) *cobra.Command {
	var out string
	var vars []string
	var callTimeout time.Duration
	var pf preflightFlags
	var f moduleFlags
	var qf queueFlags
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run an experiment config: rollouts, verification, attribution, SFT and GRPO data, report",
		Long: `Runs the pipeline an HCL experiment config declares (see weft config docs)
and writes the run folder: config.json (the resolved config), tasks.weft.json,
episodes.jsonl, trajectories.jsonl, sft.jsonl, grpo.jsonl, datasets/,
metrics.json and report.html (docs/run.md describes each file).

Progress goes to stderr (bars on a terminal, lines otherwise); a summary table
(or, with --json, one JSON object) goes to stdout at the end.

Before anything is built or written, a preflight checks what the run needs
from outside the file: task files and ids; every model endpoint a stage uses
answers and serves its model (GET base_url/models, else a one-token
request); every harness starts, describes itself, accepts its settings, and
the sft/grpo harness can resume conversations; verifier and attributor
binaries start. A failure is printed as FILE:LINE:COL: error: ... at the
config attribute at fault, exits 1 and leaves the run folder as it was.
--preflight-only runs just the preflight; --skip-preflight skips it.

A run is resumable: rerunning over the same folder skips the episodes and
tasks already finished. Ctrl-C stops starting new work, keeps everything
finished and exits with status 130; rerun the same command to finish.`,
		Example: `  # The main job on the embedded defaults (what make demo runs)
  weft run configs/tau2-retail.hcl

  # Into another folder, overriding a variable
  weft run configs/tau2-retail.hcl --out /tmp/run1 --var faults_scale=0.5

  # Check the endpoint and the plugins of a model run, and stop
  weft run configs/tau2-retail-vllm.hcl --var base_url=http://gpu:8000/v1 --preflight-only`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("run takes exactly one config FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			vm, err := parseVars(vars)
			if err != nil {
				return err
			}
			if callTimeout <= 0 {
				return usageErrorf("--call-timeout must be positive, got %s", callTimeout)
			}
			if pf.only && pf.skip {
				return usageErrorf("--preflight-only and --skip-preflight exclude each other")
			}
			return runExperiment(cmd.Context(), a, &f, pf, args[0], out, vm, callTimeout, &qf)
		},
	}
	qf.add(cmd, `run the jobs on a NATS JetStream work queue served by weft worker: nats://HOST:PORT, or "embedded" (an in-process server on 127.0.0.1:4222, or embedded://HOST:PORT); overrides rollout.queue`)
	cmd.Flags().StringVar(&out, "out", "", "run folder (default: the config's output.dir)")
	cmd.Flags().StringArrayVar(&vars, "var", nil, "set a config variable, NAME=VALUE (repeatable)")
	cmd.Flags().DurationVar(&callTimeout, "call-timeout", 30*time.Second, "deadline of one tool call in a module (a looping module is stopped after it; on a loaded machine calls queue for CPU)")
	cmd.Flags().BoolVar(&pf.only, "preflight-only", false, "run the preflight (endpoints probed, plugins started and described, settings and resume checked) and stop")
	cmd.Flags().BoolVar(&pf.skip, "skip-preflight", false, "start the run without the preflight (an endpoint that only comes up later, say)")
	f.add(cmd)
	return cmd
}

// preflightFlags are weft run's --preflight-only and --skip-preflight.
type preflightFlags struct{ only, skip bool }

func runExperiment(ctx context.Context, a *app, f *moduleFlags, pf preflightFlags, file, out string, vars map[string]string, callTimeout time.Duration, qf *queueFlags) error {
	cfg, diags := config.Load(file, config.LoadOptions{Vars: vars})
	if cfg == nil {
		for _, d := range diags {
			fmt.Fprintln(a.env.Stderr, config.FormatDiagnostic(d))
		}
		return fmt.Errorf("%s: invalid config: %s", file, countErrors(diags))
	}
	if out == "" {
		out = cfg.Output.Dir
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The folder first: a folder another weft run holds, or one of another
	// experiment, is refused at once, not after the preflight and the
	// module build. A missing folder is created and locked here (a second
	// run on it is refused as early) and removed by Release if no stage ran.
	var claim *pipeline.Claim
	if !pf.only {
		c, err := pipeline.ClaimFolder(out, cfg.Resolved())
		if err != nil {
			return err
		}
		claim = c
		defer claim.Release()
	}

	if cfg.FTRL != nil {
		if pf.only {
			return a.print(runResult{Dir: out}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: an ftrl run is offline, nothing to preflight\n", file)
				return err
			})
		}
		return runFTRL(ctx, a, cfg, file, out)
	}
	if cfg.Compose != nil {
		if pf.only {
			return a.print(runResult{Dir: out}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: a compose run is offline, nothing to preflight\n", file)
				return err
			})
		}
		fmt.Fprintf(a.env.Stderr, "weft run: %s -> %s (compose)\n", file, cfg.Compose.Out)
		return runComposeConfig(ctx, a, cfg.Compose)
	}
	if cfg.Evolve != nil {
		if pf.only {
			return a.print(runResult{Dir: out}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: an evolve run is offline, nothing to preflight\n", file)
				return err
			})
		}
		return runEvolve(ctx, a, cfg, file, out)
	}

	var pre *preflightResult
	if !pf.skip {
		pre = runPreflight(ctx, a, cfg)
		if ctx.Err() != nil {
			fmt.Fprintf(a.env.Stderr, "weft run: interrupted during the preflight; nothing was built or written\n")
			if a.json {
				a.print(runResult{Dir: out, Interrupted: true, Preflight: pre}, nil)
			}
			return &exitError{code: 130}
		}
		if !pre.OK {
			n := errorCount(pre.Diagnostics)
			if a.json {
				a.print(runResult{Dir: out, Preflight: pre}, nil)
			}
			return fmt.Errorf("%s: preflight failed: %d %s; nothing was built or written", file, n, plural(n, "error", "errors"))
		}
		if pf.only {
			return a.print(runResult{Dir: out, Preflight: pre}, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s: preflight ok (%d checks); weft run without --preflight-only starts the run\n", file, len(pre.Steps))
				return err
			})
		}
	}

	rt, err := f.runtimeWith(ctx, module.Config{CallTimeout: callTimeout})
	if err != nil {
		return err
	}
	defer rt.Close(context.Background())
	var reg *module.Registry
	if f.registry != "" {
		if reg, err = f.openRegistry(); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.env.Stderr, "weft run: %s -> %s\n", file, out)
	start := time.Now()
	b, err := pipeline.FromConfig(ctx, cfg, pipeline.Env{Runtime: rt, Registry: reg})
	if err != nil {
		return err
	}
	defer b.Close()
	fmt.Fprintf(a.env.Stderr, "weft run: %d tasks, modules ready in %s\n", len(b.Tasks), time.Since(start).Round(time.Millisecond))

	disp, closeQueue, err := dispatcherFor(ctx, a, qf, cfg.Rollout.Queue, file, vars, b)
	if err != nil {
		return err
	}
	defer closeQueue()
	prog := newProgress(a.env.Stderr)
	onEvent := prog.event
	if hook := runProgressHook; hook != nil {
		onEvent = func(e pipeline.Event) { prog.event(e); hook(e) }
	}
	popts := pipeline.Options{Dir: out, Progress: onEvent, Claim: claim, GeneratedAt: time.Now().UTC().Format(time.RFC3339)}
	if disp != nil {
		popts.Dispatcher = disp
	}
	res, err := pipeline.Run(ctx, b.Spec, popts)
	prog.wait()
	if disp != nil {
		s := disp.Stats()
		fmt.Fprintf(a.env.Stderr, "weft run: queue: %d jobs published, %d results, %d duplicate results dropped, %d malformed dropped, %d refusals (%d units refused out)\n",
			s.Published, s.Results, s.Duplicates, s.Malformed, s.Refusals, s.RefusedOut)
	}
	interrupted := errors.Is(err, context.Canceled) && ctx.Err() != nil
	if interrupted {
		fmt.Fprintf(a.env.Stderr, "weft run: interrupted; what finished is in %s; rerun the same command to resume\n", out)
		if a.json {
			a.print(runResult{Dir: out, Interrupted: true}, nil)
		}
		return &exitError{code: 130}
	}
	if err != nil {
		return err
	}
	for _, c := range res.Infra {
		fmt.Fprintf(a.env.Stderr, "weft run: %d rollout episodes ended on infrastructure failures of kind %s, e.g.: %s\n", c.Episodes, c.Kind, c.Example)
	}
	if n := len(res.Failures); n > 0 {
		fmt.Fprintf(a.env.Stderr, "weft run: %d training-stage tasks did not finish (first: %s task %s: %s); details in %s; a rerun tries them again\n",
			n, res.Failures[0].Stage, res.Failures[0].TaskID, res.Failures[0].Message, filepath.Join(out, pipeline.FileFailures))
	}
	r := runResult{Dir: res.Dir, Preflight: pre, Metrics: &res.Metrics, Report: res.Report}
	if err := a.print(r, func(w io.Writer) error { return printSummary(w, r) }); err != nil {
		return err
	}
	if m := res.Metrics; m.Episodes > 0 && m.ScoredEpisodes == 0 {
		// Nothing was measured: a run to fail in scripts and CI, its
		// folder written all the same.
		fmt.Fprintf(a.env.Stderr, "weft run: no episode was scored: all %d ended on infrastructure failures (see above); the folder %s holds them\n", m.Episodes, out)
		return &exitError{code: ExitError}
	}
	return nil
}

// runPreflight runs pipeline.Preflight with its steps on stderr: a line
// each, or with --json one JSON object per line ({"preflight": STEP}); the
// diagnostics of a failure follow as FILE:LINE:COL lines.
func runPreflight(ctx context.Context, a *app, cfg *config.Config) *preflightResult {
	step := func(st pipeline.PreflightStep) {
		if a.json {
			b, _ := json.Marshal(struct {
				Preflight pipeline.PreflightStep `json:"preflight"`
			}{st})
			fmt.Fprintf(a.env.Stderr, "%s\n", b)
			return
		}
		verdict := "ok"
		detail := st.Detail
		if !st.OK {
			verdict, detail = "FAILED", "see below"
		}
		fmt.Fprintf(a.env.Stderr, "preflight %-6s %-10s %s (%s): %s (%d ms)\n", verdict, st.Check, st.Block, st.Target, detail, st.DurationMS)
	}
	steps, diags := pipeline.Preflight(ctx, cfg, pipeline.PreflightOptions{Step: step})
	if steps == nil {
		steps = []pipeline.PreflightStep{}
	}
	if !a.json {
		for _, d := range diags {
			fmt.Fprintln(a.env.Stderr, config.FormatDiagnostic(d))
		}
	}
	return &preflightResult{OK: !diags.HasErrors(), Steps: steps, Diagnostics: config.Diagnostics(diags)}
}

func errorCount(ds []config.Diagnostic) int {
	n := 0
	for _, d := range ds {
		if d.Severity == "error" {
			n++
		}
	}
	return n
}

// runProgressHook, when set (by tests), sees every pipeline progress event
// of `weft run` after it is rendered; tests use it to interrupt a run at a
// known point.
var runProgressHook func(pipeline.Event)

// exitError ends the process with a given status, the message already
// printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// progress renders pipeline events: mpb bars on a terminal, one line per
// stage step of 10 % otherwise.
type progress struct {
	w    io.Writer
	tty  bool
	p    *mpb.Progress
	mu   sync.Mutex
	bars map[string]*mpb.Bar
	last map[string]int
}

func newProgress(w io.Writer) *progress {
	pr := &progress{w: w, bars: map[string]*mpb.Bar{}, last: map[string]int{}}
	if f, ok := w.(*os.File); ok && isatty.IsTerminal(f.Fd()) {
		pr.tty = true
		pr.p = mpb.New(mpb.WithOutput(w), mpb.WithWidth(40))
	}
	return pr
}

func (pr *progress) event(e pipeline.Event) {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	if pr.tty {
		bar := pr.bars[e.Stage]
		if bar == nil {
			if e.End {
				return
			}
			bar = pr.p.AddBar(int64(e.Total),
				mpb.PrependDecorators(decor.Name(fmt.Sprintf("%-9s", e.Stage)), decor.CountersNoUnit(" %d/%d")),
				mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.Elapsed(decor.ET_STYLE_GO)))
			pr.bars[e.Stage] = bar
		}
		if e.End {
			bar.SetTotal(-1, true)
			return
		}
		bar.SetCurrent(int64(e.Done))
		return
	}
	switch {
	case e.End && e.Stopped:
		fmt.Fprintf(pr.w, "%-9s stopped\n", e.Stage)
	case e.End:
		fmt.Fprintf(pr.w, "%-9s done\n", e.Stage)
	case e.Done == 0:
		fmt.Fprintf(pr.w, "%-9s %d to run (%d already done)\n", e.Stage, e.Total, e.Skipped)
	case e.Total > 0:
		pct := e.Done * 10 / e.Total
		if pct > pr.last[e.Stage] || e.Done == e.Total {
			pr.last[e.Stage] = pct
			fmt.Fprintf(pr.w, "%-9s %d/%d\n", e.Stage, e.Done, e.Total)
		}
	}
}

func (pr *progress) wait() {
	if pr.p != nil {
		pr.mu.Lock()
		for _, b := range pr.bars {
			if !b.Completed() {
				b.Abort(false)
			}
		}
		pr.mu.Unlock()
		pr.p.Wait()
	}
}

func pct(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", *f*100)
}

func printSummary(w io.Writer, r runResult) error {
	m := r.Metrics
	if m.Episodes > 0 || len(m.PassRateBy) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "VIEW\tHARNESS\tEPISODES\tINFRA\tPASSED\tPASS RATE\tMEAN SCORE")
		for _, g := range m.PassRateBy {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\n", g.View, g.Harness, g.Episodes, g.InfraFailures, g.Passed, pct(g.PassRate), score(g.MeanScore))
		}
		fmt.Fprintf(tw, "all\t\t%d\t%d\t%d\t%s\t%s\n", m.Episodes, m.InfraFailures, m.Passed, pct(m.PassRate), score(m.MeanScore))
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(w, "\ntool error rate %s (%d of %d calls)\n", pct(m.ToolErrorRate), m.ToolErrors, m.ToolCalls)
	} else {
		// No rollout episodes (e.g. stages = ["import"]): no empty table.
		fmt.Fprintln(w, "no rollout episodes in the run folder")
	}
	if len(m.Attributions) > 0 {
		var classes []string
		for c, n := range m.Attributions {
			classes = append(classes, fmt.Sprintf("%s %d", c, n))
		}
		sort.Strings(classes)
		fmt.Fprintf(w, "attributions: %s\n", strings.Join(classes, ", "))
	} else if m.Episodes > 0 {
		fmt.Fprintln(w, "attributions: none")
	}
	if m.SFTMode != "" {
		fmt.Fprintf(w, "sft (%s): %d of %d tasks kept whole, %d turns kept, %d attempts, %d turns resampled%s\n",
			m.SFTMode, m.SFTTrajectories, m.SFTTasks, m.SFTKeptTurns, m.SFTAttempts, m.SFTTurnsResampled, unfinished(m.SFTFailedTasks))
	}
	if c := m.SFTCompare; c != nil {
		fmt.Fprintf(w, "sft (%s, same budget): %d of %d tasks kept whole, %d turns kept, %d attempts\n",
			c.Mode, c.Accepted, c.Tasks, c.KeptTurns, c.Attempts)
	}
	if m.GRPOLevel != "" {
		fmt.Fprintf(w, "grpo (%s): %d groups, %d with non-zero advantage, %d segments, masked share %s%s\n",
			m.GRPOLevel, m.GRPOGroups, m.GRPONonZeroGroups, m.GRPOSegments, pct(m.GRPOMaskedShare), unfinished(m.GRPOFailedTasks))
	}
	if r.Report != "" {
		fmt.Fprintf(w, "\nrun folder: %s (report: %s)\n", r.Dir, r.Report)
	} else {
		fmt.Fprintf(w, "\nrun folder: %s (no report: the pipeline has no report stage)\n", r.Dir)
	}
	return nil
}

func score(f *float64) string {
	if f == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *f)
}

// unfinished is the summary's note on a stage's tasks that did not finish.
func unfinished(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d tasks did not finish (failures.json)", n)
}
