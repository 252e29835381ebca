package sqlhost

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

type call struct {
	exec bool
	q    string
	args []any
}

type fakeExec struct {
	calls []call
	rows  *Rows
	res   Result
	err   error
}

func (f *fakeExec) Query(_ context.Context, q string, args ...any) (*Rows, error) {
	f.calls = append(f.calls, call{false, q, args})
	return f.rows, f.err
}

func (f *fakeExec) Exec(_ context.Context, q string, args ...any) (Result, error) {
	f.calls = append(f.calls, call{true, q, args})
	return f.res, f.err
}

var errDup = errors.New("dup")

func (f *fakeExec) Classify(err error) string {
	if errors.Is(err, errDup) {
		return KindDuplicateKey
	}
	return ""
}

var pol = Policy{Owns: []string{"orders", "Users"}, Reads: []string{"products"}}

func TestHandleQueryTypes(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 123456000, time.FixedZone("x", 3600))
	f := &fakeExec{rows: &Rows{
		Columns: []string{"i", "u", "f", "d", "s", "b", "t", "j", "n", "mixed", "f32"},
		Values: [][]any{
			{int8(-1), uint64(18446744073709551615), 1.5, decimal.RequireFromString("12.30"), "a<b", []byte("hi"), ts,
				types.JSONDocument{Val: map[string]any{"k": []any{1.0, "x"}}}, nil, nil, float32(1.1)},
			{int64(9007199254740993), uint8(2), float64(2), decimal.RequireFromString("-0.5"), "", []byte{}, ts.Add(time.Second),
				nil, nil, int32(3), float32(2)},
			{nil, nil, nil, nil, nil, nil, nil, nil, nil, "4", nil},
		},
	}}
	got := string(Handle(context.Background(), f, pol, []byte(`{"sql":"SELECT * FROM orders WHERE id = ?","args":[7]}`)))
	want := `{"columns":["i","u","f","d","s","b","t","j","n","mixed","f32"],` +
		`"types":["int","uint","float","decimal","string","bytes","time","json","null","int","float"],` +
		`"rows":[[-1,18446744073709551615,1.5,"12.30","a<b","aGk=","2024-05-06T06:08:09.123456Z",{"k":[1,"x"]},null,null,1.1],` +
		`[9007199254740993,2,2,"-0.5","","","2024-05-06T06:08:10.123456Z",null,null,3,2],` +
		`[null,null,null,null,null,null,null,null,null,4,null]],` +
		`"rows_affected":0,"last_insert_id":0,"error":null}`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if len(f.calls) != 1 || f.calls[0].exec || f.calls[0].args[0] != int64(7) {
		t.Fatalf("calls %+v", f.calls)
	}
}

func TestHandleExec(t *testing.T) {
	f := &fakeExec{res: Result{RowsAffected: 2, LastInsertID: 41}}
	got := string(Handle(context.Background(), f, pol,
		[]byte(`{"sql":"INSERT INTO orders (id, b, t, d, x, big, fl, ok) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",`+
			`"args":["#W1",{"t":"bytes","v":"aGk="},{"t":"time","v":"2024-01-02T03:04:05.5+01:00"},{"t":"decimal","v":"12.30"},null,18446744073709551615,2.5,true]}`)))
	want := `{"columns":[],"types":[],"rows":[],"rows_affected":2,"last_insert_id":41,"error":null}`
	if got != want {
		t.Fatalf("got %s", got)
	}
	c := f.calls[0]
	if !c.exec {
		t.Fatal("INSERT must run through Exec")
	}
	wantArgs := []any{"#W1", []byte("hi"), time.Date(2024, 1, 2, 2, 4, 5, 5e8, time.UTC), decimal.RequireFromString("12.30"), nil, uint64(18446744073709551615), 2.5, true}
	for i, a := range wantArgs {
		switch w := a.(type) {
		case []byte:
			if string(c.args[i].([]byte)) != string(w) {
				t.Errorf("arg %d = %v", i, c.args[i])
			}
		case time.Time:
			if g := c.args[i].(time.Time); !g.Equal(w) || g.Location() != time.UTC {
				t.Errorf("arg %d = %v", i, g)
			}
		case decimal.Decimal:
			if !c.args[i].(decimal.Decimal).Equal(w) {
				t.Errorf("arg %d = %v", i, c.args[i])
			}
		default:
			if c.args[i] != a {
				t.Errorf("arg %d = %#v want %#v", i, c.args[i], a)
			}
		}
	}
}

func TestHandleErrors(t *testing.T) {
	cases := []struct {
		name, req, kind, msg string
		execErr              error
	}{
		{"malformed", `{"sql": 1}`, "other", "malformed sql request", nil},
		{"bad tag", `{"sql":"SELECT 1","args":[{"t":"uuid","v":"x"}]}`, "type_mismatch", `argument 1: unknown value tag "uuid"`, nil},
		{"bad array", `{"sql":"SELECT 1","args":[[1]]}`, "type_mismatch", "argument 1: unsupported argument value", nil},
		{"bad time", `{"sql":"SELECT 1","args":[1,{"t":"time","v":"yesterday"}]}`, "type_mismatch", "argument 2: time:", nil},
		{"syntax", `{"sql":"SELEKT 1"}`, "syntax", "sql syntax error", nil},
		{"empty", `{"sql":"  "}`, "syntax", "sql syntax error", nil},
		{"undeclared", `{"sql":"SELECT * FROM secrets"}`, "denied", `denied: table "secrets" is not declared by this module`, nil},
		{"readonly write", `{"sql":"UPDATE products SET price = 1"}`, "denied", `denied: table "products" is read-only for this module`, nil},
		{"exec error classified", `{"sql":"INSERT INTO users VALUES (1)"}`, "duplicate_key", "dup", errDup},
		{"exec error other", `{"sql":"SELECT * FROM users"}`, "other", "boom", errors.New("boom")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeExec{err: c.execErr, rows: &Rows{}}
			got := Handle(context.Background(), f, pol, []byte(c.req))
			var r struct {
				Columns []string
				Types   []string
				Rows    [][]any
				Error   *ErrorReply
			}
			if err := json.Unmarshal(got, &r); err != nil {
				t.Fatal(err)
			}
			if r.Error == nil || r.Error.Kind != c.kind || !strings.HasPrefix(r.Error.Message, c.msg) {
				t.Fatalf("got %s", got)
			}
			if r.Columns == nil || r.Types == nil || r.Rows == nil {
				t.Fatalf("arrays must be [] not null: %s", got)
			}
			if c.execErr == nil && len(f.calls) != 0 {
				t.Fatalf("executor called for a refused request: %+v", f.calls)
			}
		})
	}
	// exact JSON of an error response
	got := string(Handle(context.Background(), &fakeExec{}, pol, []byte(`{"sql":"DELETE FROM secrets"}`)))
	want := `{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"denied","message":"denied: table \"secrets\" is not declared by this module"}}`
	if got != want {
		t.Fatalf("got %s", got)
	}
}

func TestHandlerOnDeniedAndClassify(t *testing.T) {
	var denied []*DeniedError
	h := Handler{Exec: &fakeExec{err: errors.New("x")}, Policy: pol,
		Classify: func(error) string { return KindNotNull },
		OnDenied: func(d *DeniedError) { denied = append(denied, d) }}
	h.Handle(context.Background(), []byte(`{"sql":"SELECT * FROM orders JOIN secret ON 1"}`))
	if len(denied) != 1 || denied[0].Table != "secret" {
		t.Fatalf("denied %+v", denied)
	}
	got := string(h.Handle(context.Background(), []byte(`{"sql":"INSERT INTO orders VALUES (1)"}`)))
	if !strings.Contains(got, `"kind":"not_null"`) {
		t.Fatal(got)
	}
}

func TestPolicyCheck(t *testing.T) {
	ok := []struct {
		q    string
		kind StatementKind
	}{
		{"SELECT 1", KindQuery},
		{"SELECT 1 FROM dual", KindQuery},
		{"select * from ORDERS o join users u on o.uid = u.id", KindQuery},
		{"SELECT * FROM orders WHERE uid IN (SELECT id FROM users WHERE x IN (SELECT id FROM products))", KindQuery},
		{"SELECT (SELECT COUNT(*) FROM products) AS n", KindQuery},
		{"SELECT * FROM orders UNION SELECT * FROM products", KindQuery},
		{"WITH t AS (SELECT * FROM orders) SELECT * FROM t", KindQuery},
		{"SELECT * FROM (SELECT * FROM orders) AS sub", KindQuery},
		{"SELECT * FROM orders WHERE EXISTS (SELECT 1 FROM products p WHERE p.id = orders.pid)", KindQuery},
		{"SELECT o.* FROM orders o", KindQuery},
		{"SELECT * FROM orders;", KindQuery},
		{"SELECT * FROM orders FOR UPDATE", KindQuery},
		{"INSERT INTO orders (id) VALUES (?)", KindExec},
		{"INSERT INTO orders (id) SELECT id FROM products", KindExec},
		{"INSERT INTO orders (id) VALUES (1) ON DUPLICATE KEY UPDATE id = 2", KindExec},
		{"REPLACE INTO users (id) VALUES (1)", KindExec},
		{"UPDATE orders SET x = (SELECT price FROM products WHERE id = 1) WHERE id = ?", KindExec},
		{"UPDATE orders o JOIN products p ON o.pid = p.id SET o.price = p.price", KindExec},
		{"DELETE FROM orders WHERE id IN (SELECT id FROM products)", KindExec},
		{"DELETE o FROM orders o JOIN products p ON o.pid = p.id", KindExec},
	}
	for _, c := range ok {
		k, err := pol.Check(c.q)
		if err != nil || k != c.kind {
			t.Errorf("%s: kind %v err %v", c.q, k, err)
		}
	}
	denied := []struct{ q, table string }{
		{"SELECT * FROM secrets", "secrets"},
		{"SELECT * FROM orders JOIN secrets", "secrets"},
		{"SELECT * FROM orders LEFT JOIN (secrets) ON 1", "secrets"},
		{"SELECT * FROM orders WHERE id IN (SELECT id FROM secrets)", "secrets"},
		{"SELECT (SELECT x FROM secrets LIMIT 1)", "secrets"},
		{"SELECT * FROM orders UNION SELECT * FROM secrets", "secrets"},
		{"SELECT * FROM orders UNION (WITH s AS (SELECT * FROM secrets) SELECT * FROM s)", "secrets"},
		{"WITH t AS (SELECT * FROM secrets) SELECT * FROM t", "secrets"},
		{"SELECT * FROM other.orders", "other.orders"},
		{"SELECT * FROM information_schema.tables", "information_schema.tables"},
		{"INSERT INTO secrets VALUES (1)", "secrets"},
		{"INSERT INTO orders SELECT * FROM secrets", "secrets"},
		{"REPLACE INTO products VALUES (1)", "products"},
		{"UPDATE products SET price = 0", "products"},
		{"UPDATE orders o JOIN products p ON o.pid = p.id SET p.price = 0", "products"},
		{"UPDATE orders JOIN products ON 1 SET price = 0", "products"},
		{"DELETE FROM products", "products"},
		{"DELETE p FROM orders o JOIN products p ON o.pid = p.id", "products"},
		{"DELETE FROM orders WHERE id IN (SELECT id FROM secrets)", "secrets"},
	}
	for _, c := range denied {
		_, err := pol.Check(c.q)
		var de *DeniedError
		if !errors.As(err, &de) || de.Table != c.table {
			t.Errorf("%s: err %v, want denied %s", c.q, err, c.table)
		}
	}
	refused := []string{
		"CREATE TABLE orders2 (id int primary key)",
		"DROP TABLE orders",
		"ALTER TABLE orders ADD COLUMN x int",
		"TRUNCATE TABLE orders",
		"SET @x = 1",
		"SET GLOBAL max_connections = 1",
		"USE other",
		"SHOW TABLES",
		"SELECT 1; DELETE FROM orders",
		"SELECT 1; SELECT 2",
		"SELECT * FROM orders INTO OUTFILE '/tmp/x'",
		"/*!50000 DROP TABLE orders */",
		"SELECT /*! 1 */ 1",
		"BEGIN",
		"COMMIT",
		"LOCK TABLES orders READ",
		"CALL p()",
		"EXPLAIN SELECT * FROM orders",
	}
	for _, q := range refused {
		_, err := pol.Check(q)
		var de *DeniedError
		if !errors.As(err, &de) && !errors.Is(err, ErrSyntax) {
			t.Errorf("%s: err %v, want refusal", q, err)
		}
		if errors.Is(err, ErrSyntax) {
			t.Logf("%s: syntax (%v)", q, err)
		}
	}
}
