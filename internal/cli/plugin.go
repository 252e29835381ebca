package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/plugins/builtin"
	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
	"github.com/weft-dev/weft/sdk/plugin/conformance"
)

func newPluginCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "List the built-in harnesses and check harness plugins",
		Long: `Harnesses, verifiers and attributors run as plugin processes
(hashicorp/go-plugin over gRPC, protocol weft.plugin.v1). The built-in
harnesses (react, hermes, native) are served by this binary itself; a custom
harness is any binary built against weft's sdk/plugin that calls plugin.Serve.`,
	}
	cmd.AddCommand(newPluginListCmd(a), newPluginConformanceCmd(a), newPluginServeCmd(a))
	return cmd
}

type harnessInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Format       string   `json:"format"`
	Capabilities []string `json:"capabilities"`
}

func formatName(f plugin.OutputFormat) string {
	switch f {
	case plugin.FormatNative:
		return "native"
	case plugin.FormatHermes:
		return "hermes"
	case plugin.FormatReAct:
		return "react"
	}
	return "custom"
}

func newPluginListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Short:   "List the built-in harnesses",
		Example: "  weft plugin list\n  weft plugin list --json",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var out struct {
				Harnesses []harnessInfo `json:"harnesses"`
			}
			for _, name := range builtin.Names() {
				h, _ := builtin.Harness(name)
				var d plugin.DescribeResponse
				if err := h.Describe(cmd.Context(), &plugin.DescribeRequest{}, &d); err != nil {
					return fmt.Errorf("describing %s: %w", name, err)
				}
				out.Harnesses = append(out.Harnesses, harnessInfo{Name: d.Name, Version: d.Version,
					Format: formatName(d.Format), Capabilities: append([]string{}, d.Capabilities...)})
			}
			return a.print(out, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tVERSION\tFORMAT\tCAPABILITIES")
				for _, h := range out.Harnesses {
					caps := strings.Join(h.Capabilities, ", ")
					if caps == "" {
						caps = "-"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h.Name, h.Version, h.Format, caps)
				}
				return tw.Flush()
			})
		},
	}
}

func newPluginConformanceCmd(a *app) *cobra.Command {
	var builtinName string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "conformance [BINARY [ARGS...]]",
		Short: "Run the plugin conformance harness against a harness plugin",
		Long: `Start the harness plugin BINARY (with ARGS), or the built-in harness named by
--builtin, and run weft's conformance checks against it with fake host
services: describe, a basic episode, tool errors, format-error recovery, each
limit, host failures and concurrent episodes. Exits 1 when a check fails.`,
		Example: `  go build -o bin/plan-act ./examples/plugins/plan-act
  weft plugin conformance bin/plan-act
  weft plugin conformance --builtin hermes --json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (builtinName == "") == (len(args) == 0) {
				return usageErrorf("give a plugin BINARY or --builtin NAME (not both)")
			}
			if timeout <= 0 {
				return usageErrorf("--timeout must be positive (got %s); it bounds the whole run, e.g. --timeout 2m", timeout)
			}
			if _, ok := builtin.Harness(builtinName); builtinName != "" && !ok {
				return usageErrorf("no built-in harness %q (have %s)", builtinName, strings.Join(builtin.Names(), ", "))
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			l := &host.Launcher{Logger: a.log()}
			defer l.Close()
			var h plugin.Harness
			var err error
			if builtinName != "" {
				h, err = l.Builtin(ctx, builtinName)
			} else {
				h, err = l.Binary(ctx, args[0], args[1:]...)
			}
			if err != nil {
				return err
			}
			rep := conformance.RunHarness(ctx, h, conformance.Options{})
			if err := a.print(rep, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "plugin %s\n", rep.Plugin)
				for _, c := range rep.Checks {
					status := "ok"
					switch {
					case c.Skipped:
						status = "skip"
					case !c.Passed:
						status = "FAIL"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", status, c.Name, c.Detail)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				pass, fail, skip := tally(rep)
				_, err := fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", pass, fail, skip)
				return err
			}); err != nil {
				return err
			}
			if !rep.Passed() {
				_, n, _ := tally(rep)
				return fmt.Errorf("the plugin failed %d conformance %s", n, plural(n, "check", "checks"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&builtinName, "builtin", "", "check a built-in harness (react, hermes, native) instead of a binary")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Minute, "give up after this long")
	return cmd
}

// tally counts the passed, failed and skipped checks of rep.
func tally(rep *conformance.Report) (pass, fail, skip int) {
	for _, c := range rep.Checks {
		switch {
		case c.Skipped:
			skip++
		case c.Passed:
			pass++
		default:
			fail++
		}
	}
	return pass, fail, skip
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func newPluginServeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:    "serve NAME",
		Short:  "Serve a built-in harness as a plugin process (started by weft itself)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return host.ServeBuiltin(args[0])
		},
	}
}
