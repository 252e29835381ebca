package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/state"
)

func newStateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Load, inspect, query and diff versioned SQL states",
		Long: `Work with weft's versioned SQL state (core/state) from the command line.

States travel as JSON files in the weft.state/v1 layout written by
"weft state load": the DDL that created the schema plus every table's rows.
The layout is lossless, so hashes and diffs computed from files equal those
computed in memory.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStateLoadCmd(a), newStateHashCmd(a), newStateDiffCmd(a), newStateQueryCmd(a), newStateDemoCmd(a))
	return cmd
}

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErrorf("%q needs %s, got %d argument(s)", cmd.CommandPath(), names, len(args))
		}
		return nil
	}
}

func readState(ctx context.Context, s *state.Store, path string) (*state.Version, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	v, err := s.Import(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

type tableCount struct {
	Table string `json:"table"`
	Rows  int    `json:"rows"`
}

func counts(v *state.Version) []tableCount {
	var out []tableCount
	for _, t := range v.Tables() {
		n, _ := v.RowCount(t)
		out = append(out, tableCount{t, n})
	}
	return out
}

func newStateLoadCmd(a *app) *cobra.Command {
	var ddlPath, dataPath, outPath string
	cmd := &cobra.Command{
		Use:   "load --ddl SCHEMA.sql [--data ROWS.json] --out STATE.json",
		Short: "Create a state from DDL and JSON rows and write it as a state file",
		Long: `Create a state from MySQL-dialect DDL (every table needs a primary key) and
optional rows, given as a JSON object mapping each table to an array of row
objects: {"users": [{"id": 1, "name": "ann"}]}. Writes the state as a
weft.state/v1 file and prints its content hash and row counts.`,
		Example: `  weft state load --ddl schema.sql --data rows.json --out v0.json`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if ddlPath == "" || outPath == "" {
				return usageErrorf("--ddl and --out are required")
			}
			ddl, err := os.ReadFile(ddlPath)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			s := state.NewStore()
			defer s.Close()
			var v *state.Version
			if dataPath != "" {
				f, err := os.Open(dataPath)
				if err != nil {
					return err
				}
				defer f.Close()
				v, err = s.LoadJSON(ctx, string(ddl), f)
				if err != nil {
					return err
				}
			} else if v, err = s.Load(ctx, string(ddl)); err != nil {
				return err
			}
			out, err := os.Create(outPath)
			if err != nil {
				return err
			}
			if err := v.Export(out); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
			a.log().Info("state written", "path", outPath, "hash", v.Hash().String())
			res := struct {
				Path   string       `json:"path"`
				Hash   string       `json:"hash"`
				Tables []tableCount `json:"tables"`
			}{outPath, v.Hash().String(), counts(v)}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "%s  %s\n", res.Hash, outPath)
				return printCounts(w, res.Tables)
			})
		},
	}
	cmd.Flags().StringVar(&ddlPath, "ddl", "", "file with the CREATE TABLE statements")
	cmd.Flags().StringVar(&dataPath, "data", "", "JSON file with rows per table (optional)")
	cmd.Flags().StringVarP(&outPath, "out", "o", "", "state file to write")
	return cmd
}

func printCounts(w io.Writer, tc []tableCount) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TABLE\tROWS")
	for _, c := range tc {
		fmt.Fprintf(tw, "%s\t%d\n", c.Table, c.Rows)
	}
	return tw.Flush()
}

func newStateHashCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "hash STATE.json",
		Short: "Print the content hash of a state file",
		Args:  exactArgs(1, "one state file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := state.NewStore()
			defer s.Close()
			v, err := readState(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			res := struct {
				Path   string       `json:"path"`
				Hash   string       `json:"hash"`
				Tables []tableCount `json:"tables"`
			}{args[0], v.Hash().String(), counts(v)}
			return a.print(res, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "%s  %s\n", res.Hash, res.Path)
				return err
			})
		},
	}
}

func newStateDiffCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "diff A.json B.json",
		Short: "Show the row-level changes from state A to state B",
		Long: `Show the rows added, removed and changed (with old and new values of each
changed column), per table, keyed by primary key. Exits 0 whether or not the
states differ; with --json the output is the full change set.`,
		Args: exactArgs(2, "two state files"),
		RunE: func(cmd *cobra.Command, args []string) error {
			s := state.NewStore()
			defer s.Close()
			va, err := readState(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			vb, err := readState(cmd.Context(), s, args[1])
			if err != nil {
				return err
			}
			ch := state.Diff(va, vb)
			return a.print(ch, func(w io.Writer) error { return printChanges(w, ch) })
		},
	}
}

func printChanges(w io.Writer, ch *state.Changes) error {
	if ch.Empty() {
		_, err := fmt.Fprintln(w, "no changes")
		return err
	}
	for _, t := range ch.Tables {
		schema := ""
		if t.Schema != "" {
			schema = " (table " + t.Schema + ")"
		}
		fmt.Fprintf(w, "table %s%s: %d added, %d removed, %d changed\n", t.Table, schema, len(t.Added), len(t.Removed), len(t.Changed))
		for _, r := range t.Added {
			fmt.Fprintf(w, "  + %s %s\n", textList(r.Key), textList(r.Values))
		}
		for _, r := range t.Removed {
			fmt.Fprintf(w, "  - %s %s\n", textList(r.Key), textList(r.Values))
		}
		for _, r := range t.Changed {
			parts := make([]string, len(r.Columns))
			for i, c := range r.Columns {
				parts[i] = fmt.Sprintf("%s: %s -> %s", c.Column, textValue(c.Old), textValue(c.New))
			}
			fmt.Fprintf(w, "  ~ %s %s\n", textList(r.Key), strings.Join(parts, ", "))
		}
	}
	return nil
}

func newStateQueryCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "query STATE.json SQL [ARG...]",
		Short: "Run a read query against a state file",
		Long: `Run one SQL statement against a state file. ARGs bind to the ? placeholders
in order (as strings; the column types convert them). The state file is
never modified.`,
		Example: `  weft state query v0.json "SELECT name FROM users WHERE id = ?" 7`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("%q needs a state file and a SQL statement", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			s := state.NewStore()
			defer s.Close()
			v, err := readState(cmd.Context(), s, args[0])
			if err != nil {
				return err
			}
			qargs := make([]any, len(args)-2)
			for i, x := range args[2:] {
				qargs[i] = x
			}
			rows, err := s.Fork(v).Query(cmd.Context(), args[1], qargs...)
			if err != nil {
				return err
			}
			res := struct {
				Columns []string `json:"columns"`
				Rows    [][]any  `json:"rows"`
			}{rows.Columns, make([][]any, len(rows.Values))}
			if res.Columns == nil {
				res.Columns = []string{}
			}
			for i, r := range rows.Values {
				res.Rows[i] = make([]any, len(r))
				for j, c := range r {
					res.Rows[i][j] = state.PlainValue(c)
				}
			}
			return a.print(res, func(w io.Writer) error {
				if len(rows.Columns) == 0 {
					_, err := fmt.Fprintln(w, "(no result set; statements run on a throwaway fork, the state file is never modified)")
					return err
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, strings.Join(rows.Columns, "\t"))
				for _, r := range res.Rows {
					cells := make([]string, len(r))
					for i, c := range r {
						cells[i] = textValue(c)
					}
					fmt.Fprintln(tw, strings.Join(cells, "\t"))
				}
				return tw.Flush()
			})
		},
	}
}

// textValue renders a plain value for people: NULL, strings as they are,
// everything else (numbers, JSON documents) as JSON.
func textValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return x
	case []byte:
		return fmt.Sprintf("0x%X", x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func textList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = textValue(v)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
