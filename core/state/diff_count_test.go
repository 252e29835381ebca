package state

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCountChangesMatchesDiff: CountChanges(a, b) == Diff(a, b).Count()
// for every ordered pair of 40 versions made by random keyed updates,
// inserts and deletes (and a no-op update), for versions loaded
// separately with equal rows (no shared trees: 0), and across schema
// changes (a changed table counts both sides' rows, an added one its rows).
func TestCountChangesMatchesDiff(t *testing.T) {
	ctx := context.Background()
	s, v0 := loadTest(t)
	ws := s.Fork(v0)
	rng := rand.New(rand.NewPCG(16, 45))
	versions := []*Version{v0}
	for i := range 39 {
		var q string
		switch rng.IntN(5) {
		case 0:
			q = fmt.Sprintf("INSERT INTO users VALUES (%d, 'u%d', NULL)", 10+i, i)
		case 1:
			q = fmt.Sprintf("DELETE FROM users WHERE id = %d", 1+rng.IntN(10+i))
		case 2:
			q = fmt.Sprintf("UPDATE users SET name = 'n%d' WHERE id = %d", rng.IntN(3), 1+rng.IntN(10+i))
		case 3:
			q = fmt.Sprintf("UPDATE orders SET total = %d WHERE user_id = %d", rng.IntN(4), 1+rng.IntN(3))
		default:
			q = "UPDATE users SET name = name WHERE id = 2"
		}
		if _, err := ws.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		v, err := ws.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v)
	}
	nonzero := 0
	for i, a := range versions {
		for j, b := range versions {
			want := Diff(a, b).Count()
			if got := CountChanges(a, b); got != want {
				t.Fatalf("versions %d -> %d: CountChanges = %d, Diff(...).Count() = %d", i, j, got, want)
			}
			if want > 0 {
				nonzero++
			}
		}
	}
	if nonzero < len(versions)*len(versions)/2 {
		t.Fatalf("only %d of %d pairs differ: the mutations did not exercise the count", nonzero, len(versions)*len(versions))
	}

	// Equal rows in unrelated trees: nothing changed.
	_, w0 := loadTest(t)
	if got, want := CountChanges(v0, w0), Diff(v0, w0).Count(); got != 0 || want != 0 {
		t.Fatalf("separately loaded equal states: CountChanges %d, Diff %d, want 0", got, want)
	}

	// Schema changes: t's column widened (1 row each side), extra added.
	a, err := s.Load(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(50))", TableRows{Table: "t", Columns: []string{"id", "v"}, Rows: [][]any{{1, "x"}}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Load(ctx, "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(100)); CREATE TABLE extra (id INT PRIMARY KEY)", TableRows{Table: "t", Columns: []string{"id", "v"}, Rows: [][]any{{1, "x"}}}, TableRows{Table: "extra", Columns: []string{"id"}, Rows: [][]any{{1}, {2}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]*Version{{a, b}, {b, a}, {a, v0}, {v0, b}} {
		got, want := CountChanges(p[0], p[1]), Diff(p[0], p[1]).Count()
		if got != want || want == 0 {
			t.Fatalf("schema change: CountChanges %d, Diff(...).Count() %d (want equal, > 0)", got, want)
		}
	}
	if got := CountChanges(a, b); got != 4 {
		t.Fatalf("CountChanges(a, b) = %d, want 4 (t: 1 removed + 1 added; extra: 2 added)", got)
	}
}
