// Command tally is a small tool module of megamcp's benchmarks: named
// counters in one table, the third module of a three-module lifecycle group
// (with examples/modules/hello and examples/modules/retail).
package main

import (
	"context"
	"database/sql"
	"errors"

	"github.com/weft-dev/weft/sdk/tool"
)

func init() {
	tool.Module(tool.Info{
		Name:        "tally",
		Version:     "0.1.0",
		Description: "Named counters.",
		Owns:        []string{"tallies"},
	})
	tool.Register("incr", "Adds one to a counter (created at zero) and returns it.", incr)
	tool.Register("tally", "Returns a counter (zero when it does not exist).", get, tool.ReadOnly())
}

func main() {}

type nameIn struct {
	Name string `json:"name" description:"the counter"`
}

type countOut struct {
	Name string `json:"name"`
	N    int64  `json:"n"`
}

func incr(ctx context.Context, in nameIn) (countOut, error) {
	if in.Name == "" {
		return countOut{}, tool.Errorf("the name is empty")
	}
	db := tool.DB()
	if _, err := db.ExecContext(ctx, "INSERT INTO tallies (name, n) VALUES (?, 1) ON DUPLICATE KEY UPDATE n = n + 1", in.Name); err != nil {
		return countOut{}, err
	}
	return get(ctx, in)
}

func get(ctx context.Context, in nameIn) (countOut, error) {
	out := countOut{Name: in.Name}
	err := tool.DB().QueryRowContext(ctx, "SELECT n FROM tallies WHERE name = ?", in.Name).Scan(&out.N)
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return out, err
}
