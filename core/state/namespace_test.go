package state

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const nsDDL = `CREATE TABLE users (id VARCHAR(16) PRIMARY KEY, name VARCHAR(64), INDEX users_name (name));
CREATE TABLE orders (id INT PRIMARY KEY, user_id VARCHAR(16), INDEX orders_user (user_id))`

// nsPair loads the same schema twice with different users, namespaces one
// as retail and one as airline and merges them: two "users" tables in one
// state.
func nsPair(t *testing.T) (*Store, *Version) {
	t.Helper()
	ctx := context.Background()
	st := NewStore()
	var vs []*Version
	for _, c := range []struct{ ns, user string }{{"retail", "ann"}, {"airline", "bob"}} {
		v, err := st.Load(ctx, nsDDL,
			TableRows{Table: "users", Columns: []string{"id", "name"}, Rows: [][]any{{c.user, c.user + " " + c.ns}}},
			TableRows{Table: "orders", Columns: []string{"id", "user_id"}, Rows: [][]any{{1, c.user}}})
		if err != nil {
			t.Fatal(err)
		}
		nv, err := v.Namespaced(c.ns)
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, nv)
	}
	m, err := Merge(vs...)
	if err != nil {
		t.Fatal(err)
	}
	return st, m
}

func nsSandbox(ns string) *Sandbox {
	return &Sandbox{
		Tables: NewTablePolicy([]string{"users", "orders"}, nil),
		Names:  map[string]string{"users": NamespacedTable(ns, "users"), "orders": NamespacedTable(ns, "orders")},
	}
}

// TestNamespacedTablesIsolated: two modules' "users" tables live side by
// side; each module's unqualified SQL (qualified columns, joins, writes)
// reaches only its own, and naming the other's stored table is refused.
func TestNamespacedTablesIsolated(t *testing.T) {
	st, v := nsPair(t)
	if got, want := v.Tables(), []string{"airline__orders", "airline__users", "retail__orders", "retail__users"}; !cmp.Equal(got, want) {
		t.Fatalf("tables %v, want %v", got, want)
	}
	ctx := context.Background()
	ws := st.Fork(v)
	rctx := WithSandbox(ctx, nsSandbox("retail"))
	actx := WithSandbox(ctx, nsSandbox("airline"))
	q := "SELECT users.name, o.id FROM users JOIN orders o ON o.user_id = users.id WHERE users.id = ?"
	for _, c := range []struct {
		ctx  context.Context
		id   string
		want []any
	}{{rctx, "ann", []any{"ann retail", int32(1)}}, {actx, "bob", []any{"bob airline", int32(1)}}, {rctx, "bob", nil}} {
		rows, err := ws.Query(c.ctx, q, c.id)
		if err != nil {
			t.Fatal(err)
		}
		var got []any
		if len(rows.Values) > 0 {
			got = rows.Values[0]
		}
		if !cmp.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.id, got, c.want)
		}
	}
	// The fast path's statement shape, answered per namespace.
	rows, err := ws.Query(actx, "SELECT name FROM users WHERE id = ?", "bob")
	if err != nil || len(rows.Values) != 1 || rows.Values[0][0] != "bob airline" {
		t.Fatalf("keyed read in airline: %v %v", rows, err)
	}
	if _, err := ws.Exec(rctx, "UPDATE users SET name = 'changed'"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Exec(actx, "INSERT INTO users (id, name) VALUES ('cy', 'cy')"); err != nil {
		t.Fatal(err)
	}
	got, err := ws.Query(ctx, "SELECT id, name FROM retail__users UNION ALL SELECT id, name FROM airline__users ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{"ann", "changed"}, {"bob", "bob airline"}, {"cy", "cy"}}
	if !cmp.Equal(got.Values, want) {
		t.Fatalf("after writes %v, want %v", got.Values, want)
	}
	// A module naming another namespace's stored table is refused.
	before := ws.Hash()
	for _, q := range []string{"SELECT * FROM airline__users", "UPDATE airline__users SET name = 'x'"} {
		if _, err := ws.Exec(rctx, q); !isKind(err, ErrDenied) {
			t.Errorf("%s from retail: %v, want ErrDenied", q, err)
		}
	}
	if ws.Hash() != before {
		t.Fatal("a refused statement changed the workspace")
	}
}

// TestNamespacedExportRoundTrip: the namespaced DDL (index and foreign key
// included) exports and imports to the same state.
func TestNamespacedExportRoundTrip(t *testing.T) {
	st, v := nsPair(t)
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := st.Import(context.Background(), bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("import: %v\n%s", err, buf.Bytes()[:200])
	}
	if back.Hash() != v.Hash() {
		t.Fatal("round trip changed the state")
	}
	if back.Schema() != v.Schema() {
		t.Fatalf("schema\n%s\nwant\n%s", back.Schema(), v.Schema())
	}
}

// TestNamespaceBadInput: invalid namespaces and a table already holding
// "__" are ErrBadArgument, and the version is unchanged.
func TestNamespaceBadInput(t *testing.T) {
	st := NewStore()
	v, err := st.Load(context.Background(), "CREATE TABLE a__b (id INT PRIMARY KEY); CREATE TABLE c (id INT PRIMARY KEY)")
	if err != nil {
		t.Fatal(err)
	}
	h := v.Hash()
	for _, ns := range []string{"", "a__b", "Retail", "1x", "x_", "a-b", "ünï"} {
		if _, err := v.Namespaced(ns); !isKind(err, ErrBadArgument) {
			t.Errorf("namespace %q: %v, want ErrBadArgument", ns, err)
		}
	}
	_, err = v.Namespaced("ok")
	var se *Error
	if !errors.As(err, &se) || se.Kind != ErrBadArgument || se.Table != "a__b" {
		t.Fatalf("table a__b: %v, want ErrBadArgument naming it", err)
	}
	if v.Hash() != h || !cmp.Equal(v.Tables(), []string{"a__b", "c"}) {
		t.Fatal("a refused Namespaced changed the version")
	}
}
