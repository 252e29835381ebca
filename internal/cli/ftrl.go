package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/train"
)

func newFTRLCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ftrl",
		Short: "FTRL's per-step tool-use rewards (docs/ftrl.md)",
		Long: `FTRL (bytedance/FTRL) trains tool use with a per-step reward computed from
the environment's feedback alone. 'weft ftrl score' checks weft's
implementation of it against reference cases computed by FTRL's own code.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newFTRLScoreCmd(a))
	return cmd
}

func newFTRLScoreCmd(a *app) *cobra.Command {
	var mode string
	var strictFeedback bool
	cmd := &cobra.Command{
		Use:   "score FILE",
		Short: "Score FTRL reward cases and compare with FTRL's own results",
		Long: `Reads a JSONL file of FTRL reward cases (the format of
examples/data/ftrl-reward/README.md: a response, the tools it ran
against, the tool outputs FTRL saw, the reward arguments, and the four
scores and unsolved_set after the turn that FTRL's code computed), scores
each case with weft's FTRL reward and compares all four scores (exactly)
and the unsolved_set after the turn.

--mode compatible (the default) reproduces FTRL's code, parser quirks
included, and replays the recorded tool outputs; it also renders each
call's output from the case's tools and counts how many are byte-identical
to FTRL's (--strict-feedback makes a difference a failure). --mode default
is weft's own reading (docs/ftrl.md lists each difference) and runs the
calls it parses against the case's tools.

Prints one line per failing case or malformed line (with its line number),
then "N passed, N failed". Exits 1 when any case fails.`,
		Example: `  weft ftrl score examples/data/ftrl-reward/cases.jsonl
  weft ftrl score --mode default examples/data/ftrl-reward/cases.jsonl
  go run ./cmd/weft ftrl score FILE --json`,
		Args: exactArgs(1, "FILE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := train.ParseFTRLMode(mode)
			if err != nil {
				return usageErrorf("--mode: %v", err)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			rep, err := train.ScoreFTRLCases(cmd.Context(), f, m, strictFeedback)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if err := a.print(rep, func(w io.Writer) error {
				for _, fl := range rep.Failures {
					fmt.Fprintln(w, "FAIL", fl.String())
				}
				if !strictFeedback {
					for _, d := range rep.RenderDiffs {
						fmt.Fprintln(w, "NOTE", d)
					}
				}
				if m == train.FTRLCompatible {
					fmt.Fprintf(w, "tool outputs: %d of %d rendered from the tools byte-identical to FTRL's feedback\n", rep.Rendered, rep.Calls)
				}
				_, err := fmt.Fprintln(w, rep.Summary())
				return err
			}); err != nil {
				return err
			}
			if rep.Passed+rep.Failed == 0 {
				return fmt.Errorf("%s holds no cases", args[0])
			}
			if rep.Failed > 0 {
				return errSilentFailure
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&mode, "mode", "compatible", "compatible (FTRL's code, quirks included) or default (weft's reading)")
	cmd.Flags().BoolVar(&strictFeedback, "strict-feedback", false, "also fail a case when weft's rendering of a tool output differs from the recorded feedback (compatible mode)")
	return cmd
}
