package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

const deltaDDL = `CREATE TABLE acct (id INT AUTO_INCREMENT PRIMARY KEY, email VARCHAR(64) NOT NULL, bal DECIMAL(10,2), meta JSON, UNIQUE INDEX by_email (email));
CREATE TABLE note (a INT, b VARCHAR(8), body TEXT, PRIMARY KEY (a, b))`

// TestDeltaRoundTrip: for random statement sequences on a fork,
// ImportDelta(base, ExportDelta(v, base)) has v's hash, and the delta holds
// only the changed rows.
func TestDeltaRoundTrip(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	base, err := s.Load(ctx, deltaDDL,
		TableRows{Table: "acct", Columns: []string{"email", "bal", "meta"}, Rows: [][]any{{"a@x", "1.50", map[string]any{"k": 1}}, {"b@x", "2.00", nil}, {"c@x", nil, []any{1, "two"}}}},
		TableRows{Table: "note", Columns: []string{"a", "b", "body"}, Rows: [][]any{{1, "p", "hello"}, {2, "q", "world"}}})
	if err != nil {
		t.Fatal(err)
	}
	rapid.Check(t, func(rt *rapid.T) {
		ws := s.Fork(base)
		n := rapid.IntRange(0, 12).Draw(rt, "n")
		for i := 0; i < n; i++ {
			var q string
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0:
				q = fmt.Sprintf("INSERT INTO acct (email, bal, meta) VALUES ('%s', %d.25, '{\"i\": %d}')", rapid.StringMatching(`[a-e]{1,3}@y`).Draw(rt, "email"), i, i)
			case 1:
				q = fmt.Sprintf("UPDATE acct SET bal = bal + 1 WHERE id = %d", rapid.IntRange(1, 6).Draw(rt, "id"))
			case 2:
				q = fmt.Sprintf("DELETE FROM acct WHERE id = %d", rapid.IntRange(1, 6).Draw(rt, "id"))
			case 3:
				// Swap two unique values through a third: exercises the
				// delete-before-insert order of ImportDelta.
				q = "UPDATE acct SET email = CONCAT('z', email) WHERE id = 1"
			case 4:
				q = fmt.Sprintf("INSERT INTO note VALUES (%d, '%s', 'n')", rapid.IntRange(1, 4).Draw(rt, "a"), rapid.SampledFrom([]string{"p", "q", "r"}).Draw(rt, "b"))
			case 5:
				q = "DELETE FROM note WHERE a = 2"
			}
			_, _ = ws.Exec(ctx, q) // duplicate keys are fine: the statement is atomic
		}
		v, err := ws.Snapshot()
		if err != nil {
			rt.Fatal(err)
		}
		var buf bytes.Buffer
		if err := v.ExportDelta(&buf, base); err != nil {
			rt.Fatal(err)
		}
		got, err := s.ImportDelta(ctx, base, bytes.NewReader(buf.Bytes()))
		if err != nil {
			rt.Fatalf("import: %v\n%s", err, buf.String())
		}
		if got.Hash() != v.Hash() {
			rt.Fatalf("hash after round trip differs\ndelta: %s\ndiff: %+v", buf.String(), Diff(v, got))
		}
		// Changed rows always make a non-empty delta (an empty Diff may
		// still carry a moved AUTO_INCREMENT counter).
		if c := Diff(base, v); !c.Empty() && strings.Contains(buf.String(), `"tables":[]`) {
			rt.Fatalf("empty delta %s for changes %+v", buf.String(), c)
		}
		// The AUTO_INCREMENT counters came across: the next insert gets the
		// same id on both sides.
		w1, w2 := s.Fork(v), s.Fork(got)
		for _, w := range []*Workspace{w1, w2} {
			if _, err := w.Exec(ctx, "INSERT INTO acct (email) VALUES ('next@z')"); err != nil {
				rt.Fatal(err)
			}
		}
		if w1.Hash() != w2.Hash() {
			rt.Fatalf("AUTO_INCREMENT differs after the round trip of %s", buf.String())
		}
	})
}

func TestDeltaErrors(t *testing.T) {
	ctx := context.Background()
	s := NewStore()
	base, err := s.Load(ctx, deltaDDL)
	if err != nil {
		t.Fatal(err)
	}
	ws := s.Fork(base)
	if _, err := ws.Exec(ctx, "INSERT INTO note VALUES (1, 'a', 'x')"); err != nil {
		t.Fatal(err)
	}
	v, _ := ws.Snapshot()
	var buf bytes.Buffer
	if err := v.ExportDelta(&buf, base); err != nil {
		t.Fatal(err)
	}
	// Applying to another base is refused.
	if _, err := s.ImportDelta(ctx, v, bytes.NewReader(buf.Bytes())); !errors.Is(err, ErrBadImport) {
		t.Fatalf("wrong base: err = %v", err)
	}
	if _, err := s.ImportDelta(ctx, base, strings.NewReader(`{"format":"nope"}`)); !errors.Is(err, ErrBadImport) {
		t.Fatalf("bad format: err = %v", err)
	}
	if _, err := s.ImportDelta(ctx, base, strings.NewReader(`{`)); !errors.Is(err, ErrBadImport) {
		t.Fatalf("truncated: err = %v", err)
	}
	// A schema change cannot be a delta.
	other, _ := s.Load(ctx, "CREATE TABLE acct (id INT PRIMARY KEY)")
	if err := other.ExportDelta(&buf, base); !errors.Is(err, ErrBadArgument) {
		t.Fatalf("schema change: err = %v", err)
	}
}

func TestImportRefusesNonSchemaDDL(t *testing.T) {
	s := NewStore()
	for _, ddl := range []string{
		`"CREATE TABLE t (a INT PRIMARY KEY)","INSERT INTO t VALUES (5)"`,
		`"SELECT SLEEP(3)"`,
		`"-- CREATE TABLE t (a INT PRIMARY KEY)\nINSERT INTO t VALUES (1)"`,
		`"CREATE TABLE t (a INT PRIMARY KEY); DROP TABLE t"`,
	} {
		doc := `{"format":"weft.state/v1","ddl":[` + ddl + `],"tables":[]}`
		if _, err := s.Import(context.Background(), strings.NewReader(doc)); !errors.Is(err, ErrBadImport) {
			t.Errorf("ddl %s: err = %v", ddl, err)
		}
	}
	ok := `{"format":"weft.state/v1","ddl":["-- a comment\nCREATE TABLE t (a INT PRIMARY KEY, b INT)","/* c */ CREATE UNIQUE INDEX ub ON t (b)"],"tables":[]}`
	if _, err := s.Import(context.Background(), strings.NewReader(ok)); err != nil {
		t.Fatal(err)
	}
}
