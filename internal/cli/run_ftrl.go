package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/synth/ftrl"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/internal/pipeline"
)

// ftrlRunResult is weft run's --json output for a config with an ftrl
// block: the run folder and core/synth/ftrl's summary.
type ftrlRunResult struct {
	Dir     string        `json:"dir"`
	Summary *ftrl.Summary `json:"ftrl"`
}

// runFTRL is weft run of a config with an ftrl block: the ftrl stage
// offline (nothing to probe: no endpoint, plugin or module registry), then
// the counts per stage and scenario type.
func runFTRL(ctx context.Context, a *app, cfg *config.Config, file, out string) error {
	fmt.Fprintf(a.env.Stderr, "weft run: %s -> %s (ftrl)\n", file, out)
	sum, err := pipeline.RunFTRL(ctx, cfg, out)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			fmt.Fprintf(a.env.Stderr, "weft run: interrupted; rerun the same command to start the ftrl stage again\n")
			return &exitError{code: 130}
		}
		return err
	}
	if err := a.print(ftrlRunResult{Dir: out, Summary: sum}, func(w io.Writer) error { return printFTRL(w, sum) }); err != nil {
		return err
	}
	if len(sum.ServersFailed) > 0 {
		fmt.Fprintf(a.env.Stderr, "weft run: %d deployed servers failed validation (first: %s); see 5-deployed.jsonl\n", len(sum.ServersFailed), sum.ServersFailed[0])
		return &exitError{code: ExitError}
	}
	return nil
}

// printFTRL is the human summary: a row per scenario type, then the
// scaled variants by kind, the reward branches and the GRPO figures.
func printFTRL(w io.Writer, s *ftrl.Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TYPE\tSCENARIOS\tSUB-Q\tDOCS n\tTOOLS m\tm/n\tVARIANTS\tSERVERS\tTOOLS DEPLOYED\tPASSED\tSAMPLES\tGROUPS\tNON-ZERO")
	for _, t := range append(ftrlTypeNames(), "all") {
		c := s.Types[t]
		if c == nil {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.3f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", t, c.Scenarios, c.SubQuestions, c.Documents, c.Integrated, c.MergeRatio,
			c.Variants, c.Servers, c.DeployedTools, c.ToolsPassed, c.Samples, c.Groups, c.NonZero)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprint(w, "\nscaled variants:")
	for _, k := range ftrl.ScaleKinds {
		if c := s.Scale[k]; c != nil {
			fmt.Fprintf(w, " %s %d (%d changes);", k, c.Variants, c.Changes)
		}
	}
	fmt.Fprint(w, "\nreward branches:")
	var bs []string
	for b := range s.Branches {
		bs = append(bs, string(b))
	}
	slices.Sort(bs)
	for _, b := range bs {
		fmt.Fprintf(w, " %s %d;", b, s.Branches[train.FTRLBranch(b)])
	}
	all := s.Types["all"]
	if all == nil {
		_, err := fmt.Fprintln(w)
		return err
	}
	if _, err := fmt.Fprintf(w, "\ngrpo (atomic_turn over FTRL prefixes, G = %d, reward solve-F1, %s mode): %d groups, %d with non-zero advantage (%s)\n",
		s.G, s.Mode, all.Groups, all.NonZero, strconv.FormatFloat(100*s.NonZeroShare, 'f', 1, 64)+"%"); err != nil {
		return err
	}
	return printFTRLRewards(w, s)
}

// printFTRLRewards is the candidates' reward histogram per scenario type:
// a column per solve-F1 value (in increasing order), a row per type, then
// the share of groups with a non-zero advantage.
func printFTRLRewards(w io.Writer, s *ftrl.Summary) error {
	var keys []string
	val := map[string]float64{}
	for _, c := range s.Types {
		for k := range c.Rewards {
			if _, ok := val[k]; !ok {
				v, err := strconv.ParseFloat(k, 64)
				if err != nil {
					return fmt.Errorf("reward histogram key %q: %w", k, err)
				}
				val[k] = v
				keys = append(keys, k)
			}
		}
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Compare(val[a], val[b]) })
	fmt.Fprintln(w, "\ncandidate solve-F1 per scenario type (reward histogram):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "TYPE")
	for _, k := range keys {
		fmt.Fprintf(tw, "\t%s", k)
	}
	fmt.Fprintln(tw, "\tGROUPS\tNON-ZERO SHARE")
	for _, t := range append(ftrlTypeNames(), "all") {
		c := s.Types[t]
		if c == nil {
			continue
		}
		fmt.Fprint(tw, t)
		for _, k := range keys {
			fmt.Fprintf(tw, "\t%d", c.Rewards[k])
		}
		share := 0.0
		if c.Groups > 0 {
			share = float64(c.NonZero) / float64(c.Groups)
		}
		fmt.Fprintf(tw, "\t%d\t%s\n", c.Groups, strconv.FormatFloat(100*share, 'f', 1, 64)+"%")
	}
	return tw.Flush()
}

func ftrlTypeNames() []string {
	out := make([]string, len(ftrl.ScenarioTypes))
	for i, t := range ftrl.ScenarioTypes {
		out[i] = string(t)
	}
	return out
}
