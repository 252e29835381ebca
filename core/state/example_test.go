package state_test

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/core/state"
)

// Load a state, fork it, change a row inside a unit of work, and read the
// row-level diff a verifier would get.
func Example() {
	ctx := context.Background()
	s := state.NewStore()
	v0, err := s.Load(ctx, `CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR(20) NOT NULL, balance DECIMAL(10,2) NOT NULL)`,
		state.TableRows{Table: "accounts", Columns: []string{"id", "owner", "balance"}, Rows: [][]any{{1, "ann", "100.00"}, {2, "bob", "5.50"}}})
	if err != nil {
		panic(err)
	}

	ws := s.Fork(v0)
	err = ws.Do(func(u *state.Unit) error {
		if _, err := u.Exec(ctx, "UPDATE accounts SET balance = balance - ? WHERE id = ?", "30", 1); err != nil {
			return err
		}
		_, err := u.Exec(ctx, "UPDATE accounts SET balance = balance + ? WHERE id = ?", "30", 2)
		return err
	})
	if err != nil {
		panic(err)
	}
	v1, _ := ws.Snapshot()

	for _, t := range state.Diff(v0, v1).Tables {
		for _, c := range t.Changed {
			fmt.Println(t.Table, c.Key, c.Columns[0].Column, c.Columns[0].Old, "->", c.Columns[0].New)
		}
	}
	fmt.Println("v0 unchanged:", s.Fork(v0).Hash() == v0.Hash())
	// Output:
	// accounts [1] balance 100.00 -> 70.00
	// accounts [2] balance 5.50 -> 35.50
	// v0 unchanged: true
}
