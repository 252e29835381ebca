// Command synthfig measures the deterministic synthesizer's figures
// (docs/synthesis-figures.md): the share of oracle calls a server
// synthesized from tau2 airline's tools.json and from BFCL's func_docs
// gets right, read/write classification accuracy on Toucan's annotated
// tools, and every Toucan server synthesized, served and validated.
//
//	go run ./core/synth/cmd/synthfig [-data DIR] [-json] [oracle|classify|toucan|all]
//
// DIR is the shared data folder (default ../shared/data) holding
// tau2-airline/, bfcl-multiturn/ and toucan-mcp/. Output is Markdown, or
// one JSON object per figure with -json. `make synth-figures` runs all.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/synth"
)

func main() {
	data := flag.String("data", "../shared/data", "the shared data folder (tau2-airline, bfcl-multiturn, toucan-mcp)")
	asJSON := flag.Bool("json", false, "print JSON instead of Markdown")
	noValidate := flag.Bool("no-validate", false, "toucan: skip the five validation stages")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: synthfig [-data DIR] [-json] [-no-validate] [oracle|classify|toucan|all]")
		flag.PrintDefaults()
	}
	flag.Parse()
	what := "all"
	if flag.NArg() > 1 {
		flag.Usage()
		os.Exit(2)
	}
	if flag.NArg() == 1 {
		what = flag.Arg(0)
	}
	run := map[string]func(context.Context, string, bool, bool) error{"oracle": oracle, "classify": classify, "toucan": toucan}
	names := []string{"oracle", "classify", "toucan"}
	if what != "all" {
		if _, ok := run[what]; !ok {
			fmt.Fprintf(os.Stderr, "synthfig: unknown figure %q (oracle, classify, toucan, all)\n", what)
			os.Exit(2)
		}
		names = []string{what}
	}
	ctx := context.Background()
	for _, n := range names {
		if err := run[n](ctx, *data, *asJSON, !*noValidate); err != nil {
			fmt.Fprintln(os.Stderr, "synthfig:", err)
			os.Exit(1)
		}
	}
}

func emit(asJSON bool, v any, text string) {
	if asJSON {
		b, _ := json.Marshal(v)
		fmt.Println(string(b))
		return
	}
	fmt.Println(text)
}

func oracle(ctx context.Context, data string, asJSON, _ bool) error {
	air := filepath.Join(data, "tau2-airline")
	bfcl := filepath.Join(data, "bfcl-multiturn")
	type src struct {
		name   string
		groups func() ([]synth.OracleGroup, error)
	}
	var srcs []src
	for _, f := range []string{"tasks-train.json", "fuzz-public.json"} {
		srcs = append(srcs, src{"tau2 airline " + f, func() ([]synth.OracleGroup, error) {
			return synth.Tau2OracleGroups(filepath.Join(air, "tools.json"), filepath.Join(air, "db.json"), filepath.Join(air, "oracle", f), 0)
		}})
	}
	for _, f := range []string{"tasks-public.json", "fuzz-public.json"} {
		srcs = append(srcs, src{"BFCL " + f, func() ([]synth.OracleGroup, error) {
			return synth.BFCLOracleGroups(filepath.Join(bfcl, "func_docs"), filepath.Join(bfcl, "oracle", f), 0)
		}})
	}
	for _, s := range srcs {
		gs, err := s.groups()
		if err != nil {
			return err
		}
		rep, err := synth.MeasureOracle(ctx, &synth.Deterministic{}, s.name, gs)
		if err != nil {
			return err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "### %s (%d servers, read/write labels: %s)\n\n%s\n", s.name, rep.Groups, rep.LabelSource, rep.Table())
		fmt.Fprintf(&b, "rows loaded from the reference state: %v; values dropped (type mismatch): %d\n\n", sortedCounts(rep.Loaded), rep.Dropped)
		fmt.Fprintf(&b, "most frequent misses: %s\n", strings.Join(rep.TopMisses(12), ", "))
		emit(asJSON, rep, b.String())
	}
	return nil
}

func sortedCounts(m map[string]int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func classify(_ context.Context, data string, asJSON, _ bool) error {
	path := filepath.Join(data, "toucan-mcp", "readonly_eval.jsonl")
	for _, hide := range []bool{true, false} {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		rep, err := synth.EvalClassify(f, hide)
		f.Close()
		if err != nil {
			return err
		}
		emit(asJSON, rep, classifyText(rep))
	}
	return nil
}

func classifyText(r *synth.ClassifyReport) string {
	var b strings.Builder
	mode := "annotation shown"
	if r.Hidden {
		mode = "annotation hidden (name, description, schema)"
	}
	c := r.Confusion
	fmt.Fprintf(&b, "### read/write classification, %s: %d / %d = %.1f %%\n\n", mode, r.Correct, r.Tools, 100*r.Accuracy())
	fmt.Fprintf(&b, "| label \\ predicted | read-only | write |\n|---|---|---|\n| read-only (readOnlyHint true) | %d | %d |\n| write (readOnlyHint false) | %d | %d |\n\n", c.ReadRead, c.ReadWrite, c.WriteRead, c.WriteWrite)
	b.WriteString("| server | tools | right |\n|---|---|---|\n")
	servers := make([]string, 0, len(r.ByServer))
	for s := range r.ByServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	for _, s := range servers {
		fmt.Fprintf(&b, "| %s (%s) | %d | %d |\n", r.ByServer[s].Name, s, r.ByServer[s].Tools, r.ByServer[s].Correct)
	}
	if len(r.Misses) > 0 {
		b.WriteString("\nmisses (tool, label, deciding verb and rule, first sentence):\n\n")
		for _, m := range r.Misses {
			label := "write"
			if m.Label {
				label = "read-only"
			}
			fmt.Fprintf(&b, "- %s / `%s`: labelled %s; verb %q by %s; %q\n", m.Server, m.Tool, label, m.Verb, m.Reason, m.Sentence)
		}
	}
	return b.String()
}

func toucan(ctx context.Context, data string, asJSON, validate bool) error {
	path := filepath.Join(data, "toucan-mcp", "servers.jsonl")
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	docs, bad, loadErr := synth.LoadToucanFile(f, path)
	rep := synth.SynthesizeAll(ctx, &synth.Deterministic{}, docs, bad, validate)
	text := "### every Toucan server synthesized deterministically\n\n" + rep.String()
	if loadErr != nil {
		text += "\nrefused by the loader:\n" + loadErr.Error() + "\n"
	}
	emit(asJSON, rep, text)
	return nil
}
