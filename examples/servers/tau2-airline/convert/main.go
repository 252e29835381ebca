package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/weft-dev/weft/core/state"
)

func main() {
	db := flag.String("db", "examples/data/tau2-airline/db.json", "tau2-bench airline db.json")
	schema := flag.String("schema", "examples/servers/tau2-airline/schema.sql", "the server's schema DDL")
	out := flag.String("o", "", "output file (weft.state/v1); stdout when empty")
	flag.Parse()
	if err := run(*db, *schema, *out); err != nil {
		fmt.Fprintln(os.Stderr, "convert:", err)
		os.Exit(1)
	}
}

func run(dbPath, schemaPath, outPath string) error {
	db, err := os.ReadFile(dbPath)
	if err != nil {
		return err
	}
	ddl, err := os.ReadFile(schemaPath)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := Seed(context.Background(), db, string(ddl), &buf); err != nil {
		return err
	}
	if outPath == "" {
		_, err = os.Stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(outPath, buf.Bytes(), 0o644)
}

// Seed converts db.json (bytes) to a weft.state/v1 export over ddl and
// writes it to w.
func Seed(ctx context.Context, db []byte, ddl string, w io.Writer) error {
	rows, err := Rows(db)
	if err != nil {
		return err
	}
	doc, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	s := state.NewStore()
	defer s.Close()
	v, err := s.LoadJSON(ctx, ddl, bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("loading the converted rows: %w", err)
	}
	return v.Export(w)
}
