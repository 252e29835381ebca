package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/spec"
)

func newSynthCmd(a *app) *cobra.Command {
	f := &moduleFlags{}
	cmd := &cobra.Command{
		Use:   "synth",
		Short: "Synthesize tool servers from documentation, validate and revise them",
		Long: `Synthesized servers (weft.server/v1, docs/synthesis.md) are tool servers
written as data: tool definitions, schema DDL, seed rows, a closed set of
error codes and one Starlark program that the shared interpreter module runs.
'weft synth env' synthesizes one from tool documentation, validates it
(interface, normal, boundary, diff, readback), revises it with the findings
(at most 3 rounds) and registers it; 'weft synth validate' validates one.
'weft synth tasks' generates certified atomic tasks for servers, 'weft synth
certify' certifies a tasks file by execution, and 'weft synth compose'
composes certified atomic tasks of several servers into cross-server tasks
(docs/certification.md).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	// --registry and --cache-dir on the subcommands that open modules;
	// compose reads specs only, so its help does not offer them.
	for _, sub := range []*cobra.Command{newSynthEnvCmd(a, f), newSynthValidateCmd(a, f), newSynthTasksCmd(a, f), newSynthCertifyCmd(a, f)} {
		f.add(sub)
		cmd.AddCommand(sub)
	}
	cmd.AddCommand(newSynthComposeCmd(a))
	return cmd
}

// synthEnvFlags are the flags of weft synth env.
type synthEnvFlags struct {
	docs, name, kind, script, out string
	baseURL, modelName, apiKeyEnv string
	rounds                        int
	noRegister                    bool
	seed                          uint64
	timeout                       time.Duration
}

// synthesizer builds the --synthesizer's Synthesizer.
func (s *synthEnvFlags) build() (synth.Synthesizer, error) {
	switch s.kind {
	case "deterministic":
		return &synth.Deterministic{Seed: s.seed}, nil
	case "scripted":
		if s.script == "" {
			return nil, usageErrorf("--synthesizer scripted needs --script FILE (a %s file)", synth.ScriptFormat)
		}
		return synth.LoadScript(s.script)
	case "endpoint":
		if s.baseURL == "" || s.modelName == "" {
			return nil, usageErrorf("--synthesizer endpoint needs --base-url and --model")
		}
		cfg := model.ClientConfig{BaseURL: s.baseURL, Model: s.modelName, RequestTimeout: s.timeout}
		if s.apiKeyEnv != "" {
			if cfg.APIKey = os.Getenv(s.apiKeyEnv); cfg.APIKey == "" {
				return nil, fmt.Errorf("--api-key-env %s: the variable is empty or unset", s.apiKeyEnv)
			}
		}
		c, err := model.NewClient(cfg)
		if err != nil {
			return nil, err
		}
		det := &synth.Deterministic{Seed: s.seed}
		return &synth.Endpoint{Model: c, Infer: func(d synth.Docs) string {
			p, err := det.Plan(&d)
			if err != nil {
				return ""
			}
			srv, err := p.Server()
			if err != nil {
				return ""
			}
			return srv.Schema
		}}, nil
	}
	return nil, usageErrorf("--synthesizer %q: want deterministic, scripted or endpoint", s.kind)
}

// pickDocs returns the docs of path named name (the only docs when name is
// empty and the file holds one).
func pickDocs(path, name string) (synth.Docs, error) {
	all, err := synth.LoadDocs(path)
	if err != nil {
		return synth.Docs{}, err
	}
	var names []string
	for _, d := range all {
		if name == "" && len(all) == 1 || d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	if name == "" {
		return synth.Docs{}, usageErrorf("%s holds the docs of %d servers: choose one with --name (%s)", path, len(all), strings.Join(first(names, 10), ", "))
	}
	return synth.Docs{}, fmt.Errorf("%s: no docs named %q (have %s)", path, name, strings.Join(first(names, 10), ", "))
}

func first(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], "...")
	}
	return s
}

// synthResult is what weft synth env prints.
type synthResult struct {
	Server      string         `json:"server"`
	Version     string         `json:"version"`
	Synthesizer string         `json:"synthesizer"`
	Passed      bool           `json:"passed"`
	Rounds      int            `json:"rounds"`
	Findings    int            `json:"findings"`
	Codes       map[string]int `json:"codes"`
	Dir         string         `json:"dir,omitempty"`
	Digest      string         `json:"digest,omitempty"`
	Registry    string         `json:"registry,omitempty"`
	Error       string         `json:"error,omitempty"`
}

func newSynthEnvCmd(a *app, f *moduleFlags) *cobra.Command {
	s := &synthEnvFlags{}
	cmd := &cobra.Command{
		Use:   "env --docs FILE",
		Short: "Synthesize a server from documentation, validate, revise, write and register it",
		Long: `Read the tool documentation in --docs (a Docs JSON object, tau2 tools.json,
BFCL func docs, or Toucan servers.jsonl with --name), synthesize a server with
--synthesizer, validate it and revise it with the findings (round 0 and at
most 3 revision rounds, stopping at the first round that brings no
improvement), and write the best server as a spec directory (server.json,
program.star, schema.sql, seed.json and the validation report
validation.json) to --out. A server that passed validation is bundled on
the registry's interpreter module and stored like 'weft module build' does:
the last line of stdout is its reference, sha256:<hex>. A server with
findings is written but not registered, and the command exits 1. Progress
goes to stderr.`,
		Example: `  weft synth env --docs examples/data/tau2-airline/tools.json --out /tmp/airline
  weft synth env --docs core/synth/testdata/library.docs.json --synthesizer scripted \
      --script core/synth/testdata/library.script.json --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if s.docs == "" {
				return usageErrorf("%q needs --docs FILE", cmd.CommandPath())
			}
			if s.rounds < 0 || s.rounds > synth.MaxRevisions {
				return usageErrorf("--rounds %d: want 0 to %d", s.rounds, synth.MaxRevisions)
			}
			syn, err := s.build()
			if err != nil {
				return err
			}
			docs, err := pickDocs(s.docs, s.name)
			if err != nil {
				return err
			}
			return synthEnv(cmd.Context(), a, f, s, syn, docs)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&s.docs, "docs", "", "tool documentation file")
	fl.StringVar(&s.name, "name", "", "the docs to use from a file of several (Toucan servers.jsonl)")
	fl.StringVar(&s.kind, "synthesizer", "deterministic", "deterministic|scripted|endpoint")
	fl.StringVar(&s.script, "script", "", "recorded answers of the scripted synthesizer ("+synth.ScriptFormat+")")
	fl.StringVar(&s.baseURL, "base-url", "", "endpoint synthesizer: OpenAI-compatible API root, e.g. http://127.0.0.1:8000/v1")
	fl.StringVar(&s.modelName, "model", "", "endpoint synthesizer: model name")
	fl.StringVar(&s.apiKeyEnv, "api-key-env", "", "endpoint synthesizer: environment variable holding the API key")
	fl.DurationVar(&s.timeout, "request-timeout", 0, "endpoint synthesizer: per-request timeout (default 10m)")
	fl.StringVarP(&s.out, "out", "o", "", "spec directory to write (default ./NAME, NAME the docs' name)")
	fl.IntVar(&s.rounds, "rounds", synth.MaxRevisions, fmt.Sprintf("revision rounds after the first answer (0 to %d)", synth.MaxRevisions))
	fl.BoolVar(&s.noRegister, "no-register", false, "write the spec directory only; do not bundle and store the server")
	fl.Uint64Var(&s.seed, "seed", 0, "deterministic synthesizer: seed of the generated rows")
	return cmd
}

func synthEnv(ctx context.Context, a *app, f *moduleFlags, s *synthEnvFlags, syn synth.Synthesizer, docs synth.Docs) error {
	rounds := s.rounds
	if rounds == 0 {
		rounds = -1 // ReviseOptions: negative = no revision round
	}
	log := a.log()
	log.Info("synthesizing", "docs", docs.Name, "tools", len(docs.Tools), "synthesizer", syn.Name())
	srv, rep, err := synth.Revise(ctx, syn, docs, synth.ReviseOptions{Rounds: rounds, Progress: func(r synth.Round) {
		switch {
		case r.Error != "":
			log.Warn("round", "round", r.Round, "answer", r.Error)
		case r.Passed:
			log.Info("round", "round", r.Round, "passed", true)
		default:
			log.Info("round", "round", r.Round, "passed", false, "first_failed", string(r.FirstFailed), "findings", len(r.Findings), "improved", r.Improved)
		}
	}})
	if err != nil {
		return err
	}
	res := synthResult{Server: srv.Name, Version: srv.Version, Synthesizer: syn.Name(), Passed: rep.Passed,
		Rounds: len(rep.Rounds) - 1, Findings: len(rep.Findings), Codes: map[string]int{}}
	for c, n := range rep.Histogram() {
		res.Codes[string(c)] = n
	}
	res.Dir = s.out
	if res.Dir == "" {
		res.Dir = docs.Name
	}
	if err := synth.WriteDir(res.Dir, srv, rep); err != nil {
		return err
	}
	log.Info("wrote", "dir", res.Dir)
	if rep.Passed && !s.noRegister {
		b, reg, err := serverBundle(f, srv)
		if err != nil {
			return err
		}
		if res.Digest, err = reg.Put(b); err != nil {
			return err
		}
		res.Registry = reg.Dir()
	}
	if !rep.Passed {
		res.Error = fmt.Sprintf("server %q did not pass validation after %d round(s): %d finding(s) (%s); nothing registered; the report is %s/%s",
			srv.Name, len(rep.Rounds), len(rep.Findings), codeSummary(rep), res.Dir, synth.ReportFile)
	}
	perr := a.print(res, func(w io.Writer) error {
		fmt.Fprintf(w, "synthesized %s %s with the %s synthesizer in %d round(s): %s\n", res.Server, res.Version, res.Synthesizer, len(rep.Rounds), passWord(rep.Passed))
		printFindings(w, rep.Findings, 10)
		fmt.Fprintf(w, "wrote %s\n", res.Dir)
		if res.Digest != "" {
			fmt.Fprintf(w, "stored in %s\n%s\n", res.Registry, res.Digest)
		}
		return nil
	})
	if perr != nil {
		return perr
	}
	if !rep.Passed {
		return errors.New(res.Error)
	}
	return nil
}

// serverBundle bundles srv on the registry's interpreter.
func serverBundle(f *moduleFlags, srv *spec.Server) (*module.Bundle, *module.Registry, error) {
	reg, err := f.openRegistry()
	if err != nil {
		return nil, nil, err
	}
	interp, err := module.ResolveInterpreter(reg)
	if err != nil {
		return nil, nil, err
	}
	b, err := module.ServerBundle(srv, interp)
	return b, reg, err
}

func passWord(ok bool) string {
	if ok {
		return "passed"
	}
	return "FAILED"
}

func codeSummary(r *synth.Report) string {
	h := r.Histogram()
	var parts []string
	for _, c := range r.Codes() {
		parts = append(parts, fmt.Sprintf("%s %d", c, h[c]))
	}
	return strings.Join(parts, ", ")
}

func printFindings(w io.Writer, fs []synth.Finding, limit int) {
	for i, f := range fs {
		if i == limit {
			fmt.Fprintf(w, "  ... and %d more\n", len(fs)-limit)
			return
		}
		fmt.Fprintf(w, "  %s/%s: %s\n", f.Stage, f.Code, f.Message)
	}
}

func newSynthValidateCmd(a *app, f *moduleFlags) *cobra.Command {
	var memory int64
	cmd := &cobra.Command{
		Use:   "validate REF|DIR",
		Short: "Validate a synthesized server and print its report",
		Long: `Validate a synthesized server: a spec directory (server.json) or spec file,
or a server bundle by reference (a digest, name[:tag] in the registry, or a
bundle file). Every stage runs (interface, normal, boundary, diff, readback)
natively on a fresh copy of the server's seed state; the report is printed
(with --json, the validation.json object). Exits 1 when the server has
findings.`,
		Example: `  weft synth validate ./library
  weft synth validate library:latest --json`,
		Args: exactArgs(1, "a server reference or spec directory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := flagNotNegative("--memory-budget", memory, fmt.Sprintf("0 means the default, %d bytes", synth.DefaultMemoryBudget)); err != nil {
				return err
			}
			srv, err := loadServer(f, args[0])
			if err != nil {
				return err
			}
			rep, err := synth.Validate(cmd.Context(), srv, synth.ValidateOptions{MemoryBudget: memory})
			if err != nil {
				return err
			}
			if err := a.print(rep, func(w io.Writer) error { return printReport(w, rep) }); err != nil {
				return err
			}
			if !rep.Passed {
				return errSilentFailure
			}
			return nil
		},
	}
	cmd.Flags().Int64Var(&memory, "memory-budget", 0, fmt.Sprintf("bytes a validation call may allocate (default %d)", synth.DefaultMemoryBudget))
	return cmd
}

// loadServer reads the server of ref: a spec directory or JSON file, else
// a server bundle (file or registry reference).
func loadServer(f *moduleFlags, ref string) (*spec.Server, error) {
	if st, err := os.Stat(ref); err == nil && (st.IsDir() || strings.HasSuffix(ref, ".json")) {
		return spec.Load(ref)
	}
	b, _, err := f.load(ref)
	if err != nil {
		return nil, err
	}
	if !b.IsServer() {
		return nil, fmt.Errorf("%s is a wasm module (%s), not a synthesized server: validation runs on servers", ref, b.Manifest.Name)
	}
	return b.Spec()
}

func printReport(w io.Writer, r *synth.Report) error {
	fmt.Fprintf(w, "server %s %s: %s (%d calls)\n", r.Server, r.Version, passWord(r.Passed), r.Calls)
	for _, st := range r.Stages {
		fmt.Fprintf(w, "  %-9s %-7s %3d calls %3d findings\n", st.Stage, st.Status, st.Calls, st.Findings)
	}
	if len(r.Findings) > 0 {
		fmt.Fprintf(w, "findings (%s):\n", codeSummary(r))
		printFindings(w, r.Findings, len(r.Findings))
	}
	return nil
}
