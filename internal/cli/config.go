package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/internal/pipeline"
)

const validateLong = `Decode and check an HCL experiment config without running it: syntax,
unknown blocks and attributes, value types, files that must exist (paths
are relative to the config file's directory), names that must be declared
(policies, harnesses, views, modules), value ranges and the pipeline's
stage order; then what needs the files and plugins it names: every task
file loads, task ids are unique over the task sets and every id of a task
set's ids exists, each harness's settings match the settings_schema the
harness describes (built-ins in process, plugin binaries started briefly),
and the harness of the sft and grpo stages declares the resume capability.
Model endpoints are not contacted: 'weft run FILE --preflight-only' does
that.

Each problem is printed on stdout as
  FILE:LINE:COL: error: SUMMARY; DETAIL
and the exit status is 1 when there is any error. With --json, stdout is one
object: {"file", "valid", "diagnostics": [{"severity", "summary", "detail",
"filename", "line", "column", "end_line", "end_column"}], "config"} where
"config" is the resolved config (absolute paths, defaults filled in,
durations in nanoseconds), present only when valid.

The schema reference is 'weft config docs'.`

const validateExample = `  weft validate configs/tau2-retail.hcl
  weft validate configs/tau2-retail-vllm.hcl --var base_url=http://gpu:8000/v1
  weft validate configs/tau2-retail.hcl --json`

func newValidateCmd(a *app) *cobra.Command {
	var vars []string
	cmd := &cobra.Command{
		Use:     "validate FILE",
		Short:   "Check an HCL experiment config and print its diagnostics",
		Long:    validateLong,
		Example: validateExample,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("%q takes exactly one config file, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			values, err := parseVars(vars)
			if err != nil {
				return err
			}
			file := args[0]
			cfg, diags := config.Load(file, config.LoadOptions{Vars: values})
			if cfg != nil {
				// What needs the files and plugins the config names:
				// task ids, harness settings against settings_schema.
				if more := pipeline.Check(cmd.Context(), cfg); more.HasErrors() {
					diags, cfg = append(diags, more...), nil
				}
			}
			res := struct {
				File        string              `json:"file"`
				Valid       bool                `json:"valid"`
				Diagnostics []config.Diagnostic `json:"diagnostics"`
				Config      json.RawMessage     `json:"config,omitempty"`
			}{File: file, Valid: cfg != nil, Diagnostics: config.Diagnostics(diags)}
			if cfg != nil {
				res.Config = cfg.Resolved()
			}
			if err := a.print(res, func(w io.Writer) error {
				for _, d := range diags {
					fmt.Fprintln(w, config.FormatDiagnostic(d))
				}
				if cfg != nil {
					_, err := fmt.Fprintf(w, "%s: ok\n", file)
					return err
				}
				_, err := fmt.Fprintf(w, "%s: %s\n", file, countErrors(diags))
				return err
			}); err != nil {
				return err
			}
			if cfg == nil {
				return errSilentFailure
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&vars, "var", nil, "set a variable, NAME=VALUE (repeatable)")
	return cmd
}

// parseVars turns --var NAME=VALUE flags into a map.
func parseVars(vars []string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range vars {
		name, value, ok := strings.Cut(v, "=")
		if !ok || name == "" {
			return nil, usageErrorf("--var %q: want NAME=VALUE", v)
		}
		out[name] = value
	}
	return out, nil
}

func countErrors(diags hcl.Diagnostics) string {
	n := len(diags.Errs())
	if n == 1 {
		return "1 error"
	}
	return fmt.Sprintf("%d errors", n)
}

func newConfigCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Experiment config tools",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "docs",
		Short: "Print the HCL experiment config reference (Markdown)",
		Long: `Print the reference of the HCL experiment config schema as Markdown:
every block and attribute with its type, default and meaning, generated
from the decoder's own schema table (docs/config.md is this output).
With --json: {"markdown": "..."}.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			doc := config.Docs()
			return a.print(struct {
				Markdown string `json:"markdown"`
			}{doc}, func(w io.Writer) error {
				_, err := io.WriteString(w, doc)
				return err
			})
		},
	})
	return cmd
}
