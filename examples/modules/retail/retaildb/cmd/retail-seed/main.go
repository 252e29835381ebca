package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

func main() {
	db := flag.String("db", "examples/data/tau2-retail/db.json", "tau2-bench retail db.json")
	out := flag.String("o", "", "output file (weft.state/v1); stdout when empty")
	flag.Parse()
	if err := run(*db, *out); err != nil {
		fmt.Fprintln(os.Stderr, "retail-seed:", err)
		os.Exit(1)
	}
}

func run(dbPath, outPath string) error {
	f, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer f.Close()
	s := state.NewStore()
	defer s.Close()
	v, err := retaildb.Load(context.Background(), s, f)
	if err != nil {
		return err
	}
	w := os.Stdout
	if outPath != "" {
		if w, err = os.Create(outPath); err != nil {
			return err
		}
	}
	if err := v.Export(w); err != nil {
		return err
	}
	if outPath != "" {
		return w.Close()
	}
	return nil
}
