package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/spec"
)

// moduleFlags are shared by the module commands.
type moduleFlags struct {
	registry string
	cacheDir string
}

func (f *moduleFlags) add(cmd *cobra.Command) {
	cmd.PersistentFlags().StringVar(&f.registry, "registry", "", "module registry directory (default $WEFT_REGISTRY or the user cache dir)")
	cmd.PersistentFlags().StringVar(&f.cacheDir, "cache-dir", "", "compiled-module cache directory, shared across processes (default: user cache dir; \"off\" disables)")
}

func (f *moduleFlags) openRegistry() (*module.Registry, error) {
	dir := f.registry
	if dir == "" {
		dir = module.DefaultRegistryDir()
	}
	return module.OpenRegistry(dir)
}

func (f *moduleFlags) runtime(ctx context.Context) (*module.Runtime, error) {
	return f.runtimeWith(ctx, module.Config{})
}

// runtimeWith is runtime with cfg's other settings; --cache-dir decides
// cfg.CacheDir.
func (f *moduleFlags) runtimeWith(ctx context.Context, cfg module.Config) (*module.Runtime, error) {
	dir := f.cacheDir
	switch dir {
	case "off":
		dir = ""
	case "":
		if c, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(c, "weft", "wazero")
		}
	}
	cfg.CacheDir = dir
	return module.NewRuntime(ctx, cfg)
}

// moduleLevel maps a module log level (docs/abi.md: 0 debug .. 3 error) to
// slog's.
func moduleLevel(l int) slog.Level {
	switch {
	case l <= 0:
		return slog.LevelDebug
	case l == 1:
		return slog.LevelInfo
	case l == 2:
		return slog.LevelWarn
	}
	return slog.LevelError
}

// load resolves REF: a bundle file path, a digest, or name[:tag].
func (f *moduleFlags) load(ref string) (*module.Bundle, string, error) {
	if strings.ContainsAny(ref, `/\`) || strings.HasSuffix(ref, ".tar") {
		if _, err := os.Stat(ref); err != nil {
			return nil, "", fmt.Errorf("bundle file %s: %w", ref, err)
		}
	}
	if st, err := os.Stat(ref); err == nil && st.IsDir() && module.IsServerDir(ref) {
		return f.specBundle(ref)
	}
	if st, err := os.Stat(ref); err == nil && !st.IsDir() {
		fh, err := os.Open(ref)
		if err != nil {
			return nil, "", err
		}
		defer fh.Close()
		b, err := module.ReadBundle(fh)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", ref, err)
		}
		d, err := b.Digest()
		return b, d, err
	}
	reg, err := f.openRegistry()
	if err != nil {
		return nil, "", err
	}
	b, d, err := reg.Get(ref)
	return b, d, withModuleSuggestion(err, ref, reg)
}

func newModuleCmd(a *app) *cobra.Command {
	f := &moduleFlags{}
	cmd := &cobra.Command{
		Use:   "module",
		Short: "Build, inspect, call and test tool-backend modules (WebAssembly)",
		Long: `Tool modules are MCP tool backends compiled to WebAssembly (docs/abi.md),
bundled with the schema of the tables they own and their seed rows, and
stored in a content-addressed registry. REF is a digest (sha256:<hex>), a
name[:tag] in the registry (tag defaults to latest), a bundle file path, or
a synthesized server's spec directory (holding server.json), run on the
registry's interpreter module (weft-interp, stored by make build).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	f.add(cmd)
	cmd.AddCommand(newModuleBuildCmd(a, f), newModuleInspectCmd(a, f), newModuleCallCmd(a, f), newModuleTestCmd(a, f), newModuleListCmd(a, f))
	cmd.AddCommand(newModulePushCmd(a, f), newModulePullCmd(a, f))
	return cmd
}

func newModuleBuildCmd(a *app, f *moduleFlags) *cobra.Command {
	var opts module.BuildOptions
	var wasmPath, outPath string
	cmd := &cobra.Command{
		Use:   "build DIR",
		Short: "Compile a Go tool module, validate it, bundle it and store it in the registry",
		Long: `Compile the Go package in DIR with GOOS=wasip1 GOARCH=wasm -buildmode=c-shared
(or take a module already compiled from any language with --wasm), read and
validate its manifest, bundle it with DIR/schema.sql and DIR/seed.json (or
--schema, --seed) and store the bundle in the registry under its digest and
as name:version and name:latest. The last line of stdout is the bundle's
reference, sha256:<hex>.

A DIR holding server.json is a synthesized server's spec (weft.server/v1,
docs/synthesis.md): nothing is compiled; it is validated (its program
too) and bundled as a server bundle on the registry's interpreter module
(weft-interp:latest, which make build stores), then stored the same way.`,
		Example: `  weft module build ./examples/modules/hello
  weft module build ./examples/modules/c-notes --wasm examples/modules/c-notes/notes.wasm
  weft module build ./examples/servers/tau2-airline`,
		Args: exactArgs(1, "a module directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rt, err := f.runtime(ctx)
			if err != nil {
				return err
			}
			defer rt.Close(ctx)
			opts.Log = a.env.Stderr
			if module.IsServerDir(args[0]) {
				return buildServer(a, f, args[0], outPath)
			}
			var b *module.Bundle
			if wasmPath != "" {
				wasm, err := os.ReadFile(wasmPath)
				if err != nil {
					return err
				}
				b, err = module.BundleWasmFile(ctx, rt, wasm, args[0], opts)
				if err != nil {
					return err
				}
			} else {
				a.log().Info("compiling", "dir", args[0])
				if b, err = module.Build(ctx, rt, args[0], opts); err != nil {
					return err
				}
			}
			reg, err := f.openRegistry()
			if err != nil {
				return err
			}
			d, err := reg.Put(b)
			if err != nil {
				return err
			}
			if outPath != "" {
				t, err := b.Tar()
				if err != nil {
					return err
				}
				if err := os.WriteFile(outPath, t, 0o644); err != nil {
					return err
				}
			}
			res := struct {
				Digest    string `json:"digest"`
				Name      string `json:"name"`
				Version   string `json:"version"`
				Tools     int    `json:"tools"`
				WasmBytes int    `json:"wasm_bytes"`
				Registry  string `json:"registry"`
			}{d, b.Manifest.Name, b.Manifest.Version, len(b.Manifest.Tools), len(b.Wasm), reg.Dir()}
			return a.print(res, func(w io.Writer) error {
				fmt.Fprintf(w, "built %s %s: %d tools, %d bytes of wasm, stored in %s\n", res.Name, res.Version, res.Tools, res.WasmBytes, res.Registry)
				_, err := fmt.Fprintln(w, d)
				return err
			})
		},
	}
	cmd.Flags().StringVar(&opts.Schema, "schema", "", "DDL of the tables the module owns (default DIR/schema.sql)")
	cmd.Flags().StringVar(&opts.Seed, "seed", "", "seed rows: a weft.state/v1 file or {table: [rows]} JSON (default DIR/seed.json if present)")
	cmd.Flags().StringVar(&wasmPath, "wasm", "", "bundle this already compiled module instead of compiling DIR")
	cmd.Flags().StringVarP(&outPath, "out", "o", "", "also write the bundle tar to this file")
	return cmd
}

func newModuleInspectCmd(a *app, f *moduleFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "inspect REF",
		Short: "Show a module's manifest: tools and their parameters, tables, host libraries",
		Args:  exactArgs(1, "a module reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, d, err := f.load(args[0])
			if err != nil {
				return err
			}
			res := struct {
				Digest    string          `json:"digest"`
				WasmBytes int             `json:"wasm_bytes"`
				SeedBytes int             `json:"seed_bytes"`
				Manifest  module.Manifest `json:"manifest"`
			}{d, len(b.Wasm), len(b.Seed), b.Manifest}
			return a.print(res, func(w io.Writer) error {
				m := b.Manifest
				fmt.Fprintf(w, "%s %s  %s\n", m.Name, m.Version, d)
				if m.Description != "" {
					fmt.Fprintf(w, "%s\n", m.Description)
				}
				if b.IsServer() {
					fmt.Fprintf(w, "synthesized server on interpreter %s, seed %d bytes, abi %s, export hook %v\n", m.Interpreter, len(b.Seed), m.ABI, m.Export)
				} else {
					fmt.Fprintf(w, "wasm %d bytes, seed %d bytes, abi %s, export hook %v\n", len(b.Wasm), len(b.Seed), m.ABI, m.Export)
				}
				fmt.Fprintf(w, "tables owned: %s\n", strings.Join(m.Tables.Owns, ", "))
				if len(m.Tables.Reads) > 0 {
					fmt.Fprintf(w, "tables read: %s\n", strings.Join(m.Tables.Reads, ", "))
				}
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TOOL\tPARAMETERS\tDESCRIPTION")
				for _, t := range m.Tools {
					desc := t.Description
					if len(desc) > 70 {
						desc = desc[:67] + "..."
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, params(t.InputSchema), desc)
				}
				return tw.Flush()
			})
		},
	}
}

// params lists an input schema's properties, required ones unmarked and
// optional ones with a trailing "?".
func params(schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return ""
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	var names []string
	for n := range s.Properties {
		if !req[n] {
			n += "?"
		}
		names = append(names, n)
	}
	sortStrings(names)
	return strings.Join(names, ", ")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// specBundle bundles the spec directory dir (server.json) as a
// synthesized server on the registry's interpreter module, without storing
// it.
func (f *moduleFlags) specBundle(dir string) (*module.Bundle, string, error) {
	s, err := spec.Load(dir)
	if err != nil {
		return nil, "", err
	}
	reg, err := f.openRegistry()
	if err != nil {
		return nil, "", err
	}
	interp, err := module.ResolveInterpreter(reg)
	if err != nil {
		return nil, "", err
	}
	b, err := module.ServerBundle(s, interp)
	if err != nil {
		return nil, "", err
	}
	d, err := b.Digest()
	return b, d, err
}

// seeded loads a bundle's module (a server bundle on its interpreter,
// from the registry) and its seed state.
func (f *moduleFlags) seeded(ctx context.Context, rt *module.Runtime, b *module.Bundle) (*module.Module, *state.Version, error) {
	var reg *module.Registry
	if b.IsServer() {
		var err error
		if reg, err = f.openRegistry(); err != nil {
			return nil, nil, err
		}
	}
	m, err := rt.Load(ctx, reg, b)
	if err != nil {
		return nil, nil, err
	}
	s := state.NewStore()
	v, err := b.SeedVersion(ctx, s)
	if err != nil {
		return nil, nil, err
	}
	return m, v, nil
}

func newModuleCallCmd(a *app, f *moduleFlags) *cobra.Command {
	var seed uint64
	cmd := &cobra.Command{
		Use:   "call REF TOOL [ARGS_JSON]",
		Short: "Call one tool on a fresh copy of the module's seed state and print the result",
		Long: `Call one tool on a fresh copy of the module's seed state and print the MCP
CallToolResult as JSON. Arguments are validated against the tool's input
schema first. A tool error (isError) is printed like any result and exits
0. Arguments that fail the schema or an unknown tool exit 1 with the reason
(the caller's mistake, refused before the module runs); so does an
infrastructure failure (trap, deadline, memory cap).`,
		Example: `  weft module call retail get_order_details '{"order_id": "#W2417020"}'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 || len(args) > 3 {
				return usageErrorf("%q needs REF TOOL [ARGS_JSON]", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			argJSON := "{}"
			if len(args) == 3 {
				argJSON = args[2]
			}
			if !json.Valid([]byte(argJSON)) {
				return usageErrorf("ARGS_JSON is not valid JSON: %s", argJSON)
			}
			b, _, err := f.load(args[0])
			if err != nil {
				return err
			}
			rt, err := f.runtime(ctx)
			if err != nil {
				return err
			}
			defer rt.Close(ctx)
			m, v, err := f.seeded(ctx, rt, b)
			if err != nil {
				return err
			}
			sess := &module.Session{Workspace: v.Store().Fork(v), Seed: seed, Log: func(level int, msg string) {
				a.log().Log(ctx, moduleLevel(level), "module: "+strings.TrimRight(msg, "\n"), "module", b.Manifest.Name)
			}}
			res, err := m.Call(ctx, sess, args[1], json.RawMessage(argJSON))
			if err != nil {
				return withToolSuggestion(err, args[1], b.Manifest)
			}
			enc := json.NewEncoder(a.env.Stdout)
			enc.SetEscapeHTML(false)
			if !a.json {
				enc.SetIndent("", "  ")
			}
			return enc.Encode(res)
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "session seed for the module's randomness")
	return cmd
}

func newModuleTestCmd(a *app, f *moduleFlags) *cobra.Command {
	var casesPath string
	cmd := &cobra.Command{
		Use:   "test REF --cases FILE",
		Short: "Replay recorded call sequences and compare with a reference implementation",
		Long: `Replay every case of FILE from a fresh copy of the module's seed state and
compare, call by call, the error classification and the JSON-equal output,
then the final state through the module's export hook (format and rules:
docs/module-test.md). A file with no cases, a case with neither "calls" nor
"final_changes", or an unknown key (with a did-you-mean) is refused before
anything runs. Prints every mismatch
and then the summary line "N passed, M failed"; exits 1 on any mismatch.`,
		Example: `  weft module test retail --cases examples/data/tau2-retail/oracle/tasks-train.json`,
		Args:    exactArgs(1, "a module reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if casesPath == "" {
				return usageErrorf("--cases is required")
			}
			fh, err := os.Open(casesPath)
			if err != nil {
				return err
			}
			cases, err := moduletest.Read(fh)
			fh.Close()
			if err != nil {
				return err
			}
			b, _, err := f.load(args[0])
			if err != nil {
				return err
			}
			rt, err := f.runtime(ctx)
			if err != nil {
				return err
			}
			defer rt.Close(ctx)
			m, v, err := f.seeded(ctx, rt, b)
			if err != nil {
				return err
			}
			step := max(1, len(cases.Cases)/10)
			rep, err := moduletest.Run(ctx, m, v, cases.Cases, func(done, total int) {
				if done%step == 0 || done == total {
					a.log().Info("module test progress", "cases_done", done, "cases", total)
				}
			})
			if err != nil {
				return err
			}
			if err := a.print(rep, func(w io.Writer) error {
				for _, mm := range rep.Mismatches {
					fmt.Fprintln(w, mm.String())
				}
				_, err := fmt.Fprintln(w, rep.Summary())
				return err
			}); err != nil {
				return err
			}
			if rep.Failed > 0 {
				return errSilentFailure
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&casesPath, "cases", "", "cases file (JSON)")
	return cmd
}

func newModuleListCmd(a *app, f *moduleFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the modules in the registry",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reg, err := f.openRegistry()
			if err != nil {
				return err
			}
			if err := reg.Check(); err != nil {
				return err
			}
			refs, err := reg.List()
			if err != nil {
				return err
			}
			res := struct {
				Registry string       `json:"registry"`
				Modules  []module.Ref `json:"modules"`
			}{reg.Dir(), refs}
			return a.print(res, func(w io.Writer) error {
				tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tTAG\tDIGEST")
				for _, r := range refs {
					fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.Tag, r.Digest)
				}
				return tw.Flush()
			})
		},
	}
}

// errSilentFailure makes Run exit 1 without printing another message: the
// command already reported what failed on stdout.
var errSilentFailure = errors.New("")

// buildServer bundles the spec directory dir as a server bundle, stores it
// and prints its reference as module build does.
func buildServer(a *app, f *moduleFlags, dir, outPath string) error {
	b, _, err := f.specBundle(dir)
	if err != nil {
		return err
	}
	reg, err := f.openRegistry()
	if err != nil {
		return err
	}
	d, err := reg.Put(b)
	if err != nil {
		return err
	}
	if outPath != "" {
		t, err := b.Tar()
		if err != nil {
			return err
		}
		if err := os.WriteFile(outPath, t, 0o644); err != nil {
			return err
		}
	}
	res := struct {
		Digest      string `json:"digest"`
		Name        string `json:"name"`
		Version     string `json:"version"`
		Tools       int    `json:"tools"`
		Interpreter string `json:"interpreter"`
		Registry    string `json:"registry"`
	}{d, b.Manifest.Name, b.Manifest.Version, len(b.Manifest.Tools), b.Manifest.Interpreter, reg.Dir()}
	return a.print(res, func(w io.Writer) error {
		fmt.Fprintf(w, "built server %s %s: %d tools on interpreter %s, stored in %s\n", res.Name, res.Version, res.Tools, res.Interpreter, res.Registry)
		_, err := fmt.Fprintln(w, d)
		return err
	})
}
