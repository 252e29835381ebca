// Command composecheck checks the two run folders of `make compose-run`
// (configs/synth-compose.hcl run as the gold replay and with planted
// faults; pipeline.CheckComposeRuns): it prints the figures as one JSON
// object and, on stderr, up to -show problems; the exit status is 1 when a
// check fails, 2 on bad usage or a folder that does not read.
//
//	go run ./internal/pipeline/cmd/composecheck GOLD_DIR FAULTS_DIR
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	"github.com/weft-dev/weft/internal/pipeline"
)

func main() {
	show := flag.Int("show", 20, "problems to print on stderr")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: composecheck [-show N] GOLD_DIR FAULTS_DIR")
		os.Exit(2)
	}
	c, err := pipeline.CheckComposeRuns(flag.Arg(0), flag.Arg(1))
	if err != nil {
		fmt.Fprintln(os.Stderr, "composecheck:", err)
		os.Exit(2)
	}
	n := len(c.Problems)
	for i, p := range c.Problems {
		if i == *show {
			fmt.Fprintf(os.Stderr, "... %d more\n", n-i)
			break
		}
		fmt.Fprintln(os.Stderr, p)
	}
	// The figures only: the problems went to stderr.
	c.Problems, c.Gold.Problems, c.Faults.Problems = nil, nil, nil
	b, _ := json.MarshalIndent(struct {
		*pipeline.ComposeCheck
		ProblemCount int `json:"problem_count"`
	}{c, n}, "", "  ")
	fmt.Println(string(b))
	if n > 0 {
		os.Exit(1)
	}
}
