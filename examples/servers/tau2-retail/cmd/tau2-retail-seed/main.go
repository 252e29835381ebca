// Command tau2-retail-seed converts tau2-bench's retail db.json to the
// seed rows of the retail synthesized server (examples/servers/tau2-retail,
// {table: [rows]} over its schema.sql). `make tau2-retail-seed` runs it.
//
//	tau2-retail-seed [-db db.json] [-o seed.json]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"

	tau2retail "github.com/weft-dev/weft/examples/servers/tau2-retail"
)

func main() {
	db := flag.String("db", "examples/data/tau2-retail/db.json", "tau2-bench retail db.json")
	out := flag.String("o", "", "output file; stdout when empty")
	flag.Parse()
	if err := run(*db, *out); err != nil {
		fmt.Fprintln(os.Stderr, "tau2-retail-seed:", err)
		os.Exit(1)
	}
}

func run(dbPath, outPath string) error {
	in, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer in.Close()
	w := os.Stdout
	if outPath != "" {
		if w, err = os.Create(outPath); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	if err := tau2retail.Convert(bufio.NewReader(in), bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if outPath != "" {
		return w.Close()
	}
	return nil
}
