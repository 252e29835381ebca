// Command taskfig prints the task-generation figures of
// docs/certification.md as one JSON object: weft synth tasks' Generate on
// the synthesized tau2 airline and retail servers and on every Toucan
// server the deterministic synthesizer synthesizes and that passes
// validation (make certify).
//
//	go run ./core/synth/tasks/cmd/taskfig -toucan ../shared/data/toucan-mcp/servers.jsonl -seed 1
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/sdk/spec"
)

func main() {
	toucan := flag.String("toucan", "examples/data/toucan-mcp/servers-slice.jsonl", "Toucan servers.jsonl")
	seed := flag.Uint64("seed", 1, "generation seed")
	flag.Parse()
	if err := run(*toucan, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "taskfig:", err)
		os.Exit(1)
	}
}

func run(toucan string, seed uint64) error {
	ctx := context.Background()
	opts := tasks.GenOptions{Seed: seed}
	var out []*tasks.SetFigures
	for _, d := range []struct{ name, dir string }{{"airline", "examples/servers/tau2-airline"}, {"retail-spec", "examples/servers/tau2-retail"}} {
		s, err := spec.Load(d.dir)
		if err != nil {
			return err
		}
		start := time.Now()
		out = append(out, tasks.Figures(ctx, d.name, []*spec.Server{s}, false, opts))
		fmt.Fprintf(os.Stderr, "%s: %s\n", d.name, time.Since(start).Round(time.Millisecond))
	}
	f, err := os.Open(toucan)
	if err != nil {
		return err
	}
	docs, loadErrors, err := synth.LoadToucanFile(f, toucan)
	f.Close()
	if err != nil {
		// Refused records are counted (the loader's own figures list them).
		fmt.Fprintf(os.Stderr, "toucan: %d records refused by the loader\n", loadErrors)
	}
	start := time.Now()
	servers := tasks.SynthesizeToucan(ctx, docs)
	tf := tasks.Figures(ctx, "toucan", servers, true, opts)
	tf.Servers = len(docs) + loadErrors
	out = append(out, tf)
	fmt.Fprintf(os.Stderr, "toucan: %d docs (%d load errors), %d synthesized and spec-valid, %s\n", len(docs), loadErrors, len(servers), time.Since(start).Round(time.Millisecond))
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
