package state

import (
	"context"
	"errors"
	"testing"
)

func TestMerge(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	a, err := s.Load(ctx, "CREATE TABLE a (id INT PRIMARY KEY, v TEXT)", TableRows{Table: "a", Columns: []string{"id", "v"}, Rows: [][]any{{1, "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Load(ctx, "CREATE TABLE b (id INT PRIMARY KEY, n INT)", TableRows{Table: "b", Columns: []string{"id", "n"}, Rows: [][]any{{7, 70}, {8, 80}}})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(a, b, a)
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Tables(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("tables = %v", got)
	}
	ws := s.Fork(m)
	rows, err := ws.Query(ctx, "SELECT a.v, b.n FROM a JOIN b ON b.id = 8")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Values) != 1 || rows.Values[0][0] != "x" || PlainValue(rows.Values[0][1]) != int64(80) {
		t.Fatalf("rows = %v", rows.Values)
	}
	if _, err := ws.Exec(ctx, "INSERT INTO b VALUES (9, 90)"); err != nil {
		t.Fatal(err)
	}
	if n, _ := b.RowCount("b"); n != 2 {
		t.Fatalf("merge source changed: %d rows", n)
	}
	// The merged DDL recreates the schema.
	if m.Schema() == "" {
		t.Fatal("empty schema")
	}

	a2, err := s.Load(ctx, "CREATE TABLE a (id INT PRIMARY KEY, v TEXT)", TableRows{Table: "a", Columns: []string{"id", "v"}, Rows: [][]any{{1, "y"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(a, a2); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("conflicting tables: err = %v", err)
	}
	other, _ := NewStore().Load(ctx, "CREATE TABLE c (id INT PRIMARY KEY)")
	if _, err := Merge(a, other); !errors.Is(err, ErrForeignStore) {
		t.Fatalf("foreign store: err = %v", err)
	}
}
