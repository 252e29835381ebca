package state

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// scopeGen generates nested CTE / derived table / alias / UNION / JOIN /
// subquery statements over a module-owned table (notes) and a
// verifier-only one (secret), knowing by scope (as the engine resolves
// names) whether each statement reads the physical secret table.
type scopeGen struct {
	r *rand.Rand
	n int // alias counter
}

// cte is a CTE in scope: the name and whether its body reads secret.
type cte struct {
	name  string
	reads bool
}

// genQuery is a generated query expression with one column c.
type genQuery struct {
	sql string
	// reads: the statement reads the physical secret table in a position
	// the engine resolves (a referenced CTE's body counts, an unreferenced
	// one's may or may not).
	reads, maybe bool
}

var cteNames = []string{"secret", "notes", "w1", "w2", "d"}

func (g *scopeGen) alias() string {
	g.n++
	if g.r.IntN(4) == 0 {
		return "secret" // an alias named like the table
	}
	return fmt.Sprintf("a%d", g.n)
}

func lookup(scope []cte, name string) (cte, bool) {
	for i := len(scope) - 1; i >= 0; i-- {
		if scope[i].name == name {
			return scope[i], true
		}
	}
	return cte{}, false
}

// pick chooses a table name: a CTE in scope, notes, or (one time in
// eight) secret, which then means a CTE of that name if one is in scope.
func (g *scopeGen) pick(scope []cte) string {
	if g.r.IntN(8) == 0 {
		return "secret"
	}
	names := []string{"notes"}
	for _, c := range scope {
		names = append(names, c.name)
	}
	return names[g.r.IntN(len(names))]
}

// ref is a table reference: a CTE in scope or a physical table, with its
// column as c.
func (g *scopeGen) ref(scope []cte) genQuery {
	name := g.pick(scope)
	a := g.alias()
	if c, ok := lookup(scope, name); ok {
		return genQuery{sql: fmt.Sprintf("SELECT %s.c AS c FROM %s AS %s", a, name, a), reads: c.reads}
	}
	col := "text"
	if name == "secret" {
		col = "answer"
	}
	return genQuery{sql: fmt.Sprintf("SELECT %s.%s AS c FROM %s AS %s", a, col, name, a), reads: name == "secret"}
}

// tableRef is a bare table name for a FROM list (CTE or physical).
func (g *scopeGen) tableRef(scope []cte) (string, bool) {
	name := g.pick(scope)
	if c, ok := lookup(scope, name); ok {
		return name, c.reads
	}
	return name, name == "secret"
}

func (g *scopeGen) gen(depth int, scope []cte) genQuery {
	if depth <= 0 {
		return g.ref(scope)
	}
	or := func(a, b genQuery) genQuery { return genQuery{reads: a.reads || b.reads, maybe: a.maybe || b.maybe} }
	switch g.r.IntN(7) {
	case 0: // derived table
		in := g.gen(depth-1, scope)
		a := g.alias()
		return genQuery{sql: fmt.Sprintf("SELECT %s.c AS c FROM (%s) AS %s", a, in.sql, a), reads: in.reads, maybe: in.maybe}
	case 1: // WITH: the body sees the outer scope, not the name itself
		name := cteNames[g.r.IntN(len(cteNames))]
		body := g.gen(depth-1, scope)
		inner := append(append([]cte(nil), scope...), cte{name, body.reads || body.maybe})
		rest := g.gen(depth-1, inner)
		used := strings.Contains(rest.sql, "FROM "+name+" ") || strings.Contains(rest.sql, ", "+name+" ") ||
			strings.Contains(rest.sql, "JOIN "+name+" ")
		q := genQuery{reads: rest.reads, maybe: rest.maybe || body.maybe || (!used && body.reads)}
		a := g.alias()
		q.sql = fmt.Sprintf("SELECT %s.c AS c FROM (WITH %s AS (%s) %s) AS %s", a, name, body.sql, rest.sql, a)
		return q
	case 2: // UNION ALL
		l, r := g.gen(depth-1, scope), g.gen(depth-1, scope)
		a, b, u := g.alias(), g.alias(), g.alias()
		q := or(l, r)
		q.sql = fmt.Sprintf("SELECT %s.c AS c FROM (SELECT %s.c AS c FROM (%s) AS %s UNION ALL SELECT %s.c AS c FROM (%s) AS %s) AS %s",
			u, a, l.sql, a, b, r.sql, b, u)
		return q
	case 3: // JOIN with a bare table reference
		l := g.gen(depth-1, scope)
		name, reads := g.tableRef(scope)
		a, b := g.alias(), g.alias()
		for b == a {
			b = g.alias()
		}
		q := genQuery{reads: l.reads || reads, maybe: l.maybe}
		q.sql = fmt.Sprintf("SELECT %s.c AS c FROM (%s) AS %s JOIN %s AS %s ON 1 = 1", a, l.sql, a, name, b)
		return q
	case 4: // comma join of two derived tables
		l, r := g.gen(depth-1, scope), g.gen(depth-1, scope)
		a, b := g.alias(), g.alias()
		for b == a {
			b = g.alias()
		}
		q := or(l, r)
		q.sql = fmt.Sprintf("SELECT %s.c AS c FROM (%s) AS %s, (%s) AS %s", b, l.sql, a, r.sql, b)
		return q
	case 5: // scalar subquery in the select list
		l, r := g.gen(depth-1, scope), g.gen(depth-1, scope)
		a, b := g.alias(), g.alias()
		q := or(l, r)
		q.sql = fmt.Sprintf("SELECT (SELECT %s.c FROM (%s) AS %s LIMIT 1) AS c FROM (%s) AS %s", a, l.sql, a, r.sql, b)
		return q
	default: // IN subquery in WHERE
		l, r := g.gen(depth-1, scope), g.gen(depth-1, scope)
		a, b := g.alias(), g.alias()
		q := or(l, r)
		q.sql = fmt.Sprintf("SELECT %s.c AS c FROM (%s) AS %s WHERE %s.c IN (SELECT %s.c FROM (%s) AS %s) OR 1 = 1", a, l.sql, a, a, b, r.sql, b)
		return q
	}
}

// TestSandboxRandomScopesNeverReadUndeclared runs generated nestings of
// CTEs (some named like the verifier-only table), derived tables, aliases,
// UNIONs, JOINs and subqueries under a policy that does not declare
// secret: every statement that reads secret is denied naming it, none that
// does not is denied, no result or write ever carries secret's value, and
// the workspace changes only by allowed writes.
func TestSandboxRandomScopesNeverReadUndeclared(t *testing.T) {
	ctx := context.Background()
	st := NewStore()
	v, err := st.Load(ctx, `CREATE TABLE notes (id INT PRIMARY KEY, text VARCHAR(100)); CREATE TABLE secret (id INT PRIMARY KEY, answer VARCHAR(100))`,
		TableRows{Table: "notes", Columns: []string{"id", "text"}, Rows: [][]any{{1, "hello"}}},
		TableRows{Table: "secret", Columns: []string{"id", "answer"}, Rows: [][]any{{1, "TOPSECRET"}}})
	if err != nil {
		t.Fatal(err)
	}
	sb := &Sandbox{Tables: NewTablePolicy([]string{"notes"}, nil)}
	sctx := WithSandbox(ctx, sb)
	const n = 600
	var denials, allowed, other int
	for i := 0; i < n; i++ {
		g := &scopeGen{r: rand.New(rand.NewPCG(uint64(i), 15))}
		q := g.gen(1+g.r.IntN(4), nil)
		stmt := q.sql
		insert := g.r.IntN(3) == 0
		var args []any
		if !insert && g.r.IntN(5) == 0 {
			// A keyed read, the fast path's shape (fast.go): the policy
			// must hold there too.
			name := []string{"notes", "secret"}[g.r.IntN(2)]
			q = genQuery{reads: name == "secret"}
			stmt = []string{"SELECT * FROM " + name + " WHERE id = ?", "SELECT id FROM " + name + " ORDER BY id"}[g.r.IntN(2)]
			if strings.Contains(stmt, "?") {
				args = []any{int64(1)}
			}
		}
		if insert {
			stmt = fmt.Sprintf("INSERT INTO notes (id, text) SELECT %d, q.c FROM (%s) AS q LIMIT 1", 100+i, q.sql)
		}
		ws := st.Fork(v)
		var rows *Rows
		if insert {
			_, err = ws.Exec(sctx, stmt)
		} else {
			rows, err = ws.Query(sctx, stmt, args...)
		}
		var se *Error
		isDenied := errors.As(err, &se) && se.Kind == ErrDenied
		switch {
		case q.reads && !isDenied:
			t.Errorf("reads secret but not denied (%v):\n%s", err, stmt)
		case isDenied && se.Table != "secret":
			t.Errorf("denied naming %q, want secret:\n%s", se.Table, stmt)
		case !q.reads && !q.maybe && isDenied:
			t.Errorf("reads no secret but denied:\n%s", stmt)
		}
		switch {
		case isDenied:
			denials++
		case err == nil:
			allowed++
		default:
			other++
			t.Logf("engine error (not a policy verdict): %v\n%s", err, stmt)
		}
		if rows != nil {
			for _, r := range rows.Values {
				for _, c := range r {
					if s, ok := c.(string); ok && strings.Contains(s, "TOPSECRET") {
						t.Errorf("result carries secret's value:\n%s", stmt)
					}
				}
			}
		}
		all, err := ws.Query(ctx, "SELECT COUNT(*) FROM notes WHERE text LIKE '%TOPSECRET%'")
		if err != nil || fmt.Sprint(all.Values) != "[[0]]" {
			t.Errorf("secret's value copied into notes (%v %v):\n%s", all, err, stmt)
		}
	}
	hits, _ := st.FastPathStats()
	t.Logf("%d statements: %d denied, %d allowed, %d other engine errors; %d on the fast path", n, denials, allowed, other, hits)
	if hits == 0 {
		t.Fatalf("no keyed read took the fast path")
	}
	if denials < n/5 || allowed < n/5 || other > n/10 {
		t.Fatalf("generator coverage too thin: %d denied, %d allowed, %d other", denials, allowed, other)
	}
}
