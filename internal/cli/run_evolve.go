package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/internal/pipeline"
)

// evolveRunResult is weft run's --json output for a config with an evolve
// block: the run folder and the stage's summary.
type evolveRunResult struct {
	Dir     string                  `json:"dir"`
	Summary *pipeline.EvolveSummary `json:"evolve"`
}

// runEvolve is weft run of a config with an evolve block: the evolve stage
// offline (scripted policy, deterministic or scripted synthesizer), then a
// row per round.
func runEvolve(ctx context.Context, a *app, cfg *config.Config, file, out string) error {
	fmt.Fprintf(a.env.Stderr, "weft run: %s -> %s (evolve)\n", file, out)
	sum, err := pipeline.RunEvolve(ctx, cfg, out, func(msg string) { fmt.Fprintf(a.env.Stderr, "weft run: %s\n", msg) })
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			fmt.Fprintf(a.env.Stderr, "weft run: interrupted; rerun the same command to start the evolve stage again\n")
			return &exitError{code: 130}
		}
		return err
	}
	return a.print(evolveRunResult{Dir: out, Summary: sum}, func(w io.Writer) error { return printEvolve(w, sum) })
}

// printEvolve is the human summary: a row per round, then the
// benchmark's score when there is one.
func printEvolve(w io.Writer, s *pipeline.EvolveSummary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ROUND\tTASKS\tCERTIFIED\tEPISODES\tPASS RATE\tNON-POLICY TOOL ERRORS\tPOLICY\tENV\tTASK\tVERIFIER\tAPPLIED\tROLLED BACK\tREGRESSED")
	for _, r := range s.Result.Rounds {
		name := fmt.Sprint(r.Round)
		if !r.Revise {
			name = "after"
		}
		applied, back := 0, 0
		for _, n := range r.Applied {
			applied += n
		}
		for _, n := range r.RolledBack {
			back += n
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%.3f\t%.4f (%d/%d)\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", name, r.Tasks, r.Certified, r.Episodes, report.RateOr0(r.PassRate),
			report.RateOr0(r.ToolErrorRate), r.NonPolicyToolErrors, r.ToolCalls, r.Attributions[attribute.ClassPolicy], r.Attributions[attribute.ClassEnvironment],
			r.Attributions[attribute.ClassTask], r.Attributions[attribute.ClassVerifier], applied, back, len(r.Regressed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	ids := make([]string, 0, len(s.Result.Dropped))
	for id := range s.Result.Dropped {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		fmt.Fprintf(w, "dropped task %s: %s\n", id, s.Result.Dropped[id])
	}
	if b := s.Benchmark; b != nil {
		fmt.Fprintf(w, "\nbenchmark: %d planted defects (%v)\n", b.Defects, b.ByClass)
		for _, r := range b.Rounds {
			p := "n/a"
			if r.Precision != nil {
				p = fmt.Sprintf("%.3f", *r.Precision)
			}
			fmt.Fprintf(w, "after round %d: found %v, fixed %v (%.1f%%), precision %s (%d/%d), regressed %d\n",
				r.Round, r.Found, r.Fixed, 100*r.FixedShare, p, r.OnTarget, r.Applied, r.Regressed)
		}
	}
	return nil
}
