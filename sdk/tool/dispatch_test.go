package tool

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func call(t *testing.T, h Host, tool, args string) string {
	t.Helper()
	req := fmt.Sprintf(`{"tool":%q,"arguments":%s}`, tool, args)
	resp := Dispatch(context.Background(), h, []byte(req))
	if !json.Valid(resp) {
		t.Fatalf("%s: invalid response JSON %s", req, resp)
	}
	return string(resp)
}

type greetIn struct {
	Name  string `json:"name"`
	Times int    `json:"times,omitempty"`
}

type greetOut struct {
	Greeting string   `json:"greeting"`
	Tags     []string `json:"tags"`
}

func TestManifestJSON(t *testing.T) {
	useRegistry(t)
	if got, want := string(ManifestJSON()), `{"abi":"weft/v1","name":"","version":"","tools":[],"tables":{"owns":[]},"hosts":{"clock":"v1","log":"v1","rand":"v1","sql":"v2"},"export":false}`; got != want {
		t.Errorf("empty manifest:\n got %s\nwant %s", got, want)
	}
	Module(Info{Name: "demo", Version: "1.2.3", Description: "A <demo> & test.", Owns: []string{"users", "orders"}, Reads: []string{"products"}})
	Register("greet", "Greets someone.", func(_ context.Context, in greetIn) (greetOut, error) { return greetOut{}, nil })
	Register("echo", "Echoes.", func(_ context.Context, in map[string]any) (string, error) { return "", nil }, ReadOnly())
	Export(func(context.Context) (any, error) { return nil, nil })
	want := `{"abi":"weft/v1","name":"demo","version":"1.2.3","description":"A <demo> & test.",` +
		`"tools":[` +
		`{"name":"greet","description":"Greets someone.",` +
		`"inputSchema":{"type":"object","properties":{"name":{"type":"string"},"times":{"type":"integer"}},"required":["name"],"additionalProperties":false},` +
		`"outputSchema":{"type":"object","properties":{"greeting":{"type":"string"},"tags":{"type":["array","null"],"items":{"type":"string"}}},"required":["greeting","tags"],"additionalProperties":false}},` +
		`{"name":"echo","description":"Echoes.","inputSchema":{"type":"object","additionalProperties":{}},"annotations":{"readOnlyHint":true}}` +
		`],` +
		`"tables":{"owns":["users","orders"],"reads":["products"]},` +
		`"hosts":{"clock":"v1","log":"v1","rand":"v1","sql":"v2"},"export":true}`
	if got := string(ManifestJSON()); got != want {
		t.Errorf("manifest:\n got %s\nwant %s", got, want)
	}
}

func TestRegisterPanics(t *testing.T) {
	useRegistry(t)
	ok := func(context.Context, struct{}) (string, error) { return "", nil }
	Register("dup", "", ok)
	for name, f := range map[string]func(){
		"duplicate":    func() { Register("dup", "", ok) },
		"reserved":     func() { Register("weft.export", "", ok) },
		"bad name":     func() { Register("a b", "", ok) },
		"empty name":   func() { Register("", "", ok) },
		"nil fn":       func() { Register[struct{}, string]("x", "", nil) },
		"scalar input": func() { Register("x", "", func(context.Context, int) (string, error) { return "", nil }) },
		"chan output":  func() { Register("x", "", func(context.Context, struct{}) (chan int, error) { return nil, nil }) },
		"module twice": func() { Module(Info{}); Module(Info{}) },
		"export twice": func() { Export(func(context.Context) (any, error) { return nil, nil }); Export(nil) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}

func TestDispatchResults(t *testing.T) {
	useRegistry(t)
	Register("greet", "", func(_ context.Context, in greetIn) (greetOut, error) {
		if in.Name == "" {
			return greetOut{}, Errorf("no name given (times=%d)", in.Times)
		}
		return greetOut{Greeting: "hello <" + in.Name + ">"}, nil
	})
	Register("text", "", func(_ context.Context, in struct {
		S string `json:"s"`
	}) (string, error) {
		return in.S, nil
	})
	Register("list", "", func(context.Context, struct{}) ([]int, error) { return []int{1, 2}, nil })
	Register("nilmap", "", func(context.Context, struct{}) (map[string]int, error) { return nil, nil })
	Register("anystr", "", func(context.Context, struct{}) (any, error) { return "plain", nil })
	Register("plainerr", "", func(context.Context, struct{}) (any, error) { return nil, errors.New("order #W1 is delivered") })
	Register("boom", "", func(context.Context, struct{}) (any, error) { panic("kaboom") })
	Register("nan", "", func(context.Context, struct{}) (float64, error) { return nanValue(), nil })
	Register("ptr", "", func(_ context.Context, in *greetIn) (*greetIn, error) { return in, nil })
	Export(func(context.Context) (any, error) { return map[string]any{"users": []string{}}, nil })

	h := &fakeHost{}
	tests := []struct{ tool, args, want string }{
		{"greet", `{"name":"Ada"}`, `{"content":[{"type":"text","text":"{\"greeting\":\"hello <Ada>\",\"tags\":null}"}],"structuredContent":{"greeting":"hello <Ada>","tags":null}}`},
		{"greet", `{"name":""}`, `{"content":[{"type":"text","text":"no name given (times=0)"}],"isError":true}`},
		{"greet", `{"name":"x","nme":"y"}`, `{"content":[{"type":"text","text":"invalid arguments: json: unknown field \"nme\""}],"isError":true}`},
		{"greet", `{"name":5}`, `{"content":[{"type":"text","text":"invalid arguments: json: cannot unmarshal number into Go struct field greetIn.name of type string"}],"isError":true}`},
		{"greet", `null`, `{"content":[{"type":"text","text":"no name given (times=0)"}],"isError":true}`},
		{"text", `{"s":"a \"quoted\" <text>"}`, `{"content":[{"type":"text","text":"a \"quoted\" <text>"}]}`},
		{"list", `{}`, `{"content":[{"type":"text","text":"[1,2]"}]}`},
		{"nilmap", `{}`, `{"content":[{"type":"text","text":"{}"}],"structuredContent":{}}`},
		{"anystr", `{}`, `{"content":[{"type":"text","text":"plain"}]}`},
		{"plainerr", `{}`, `{"content":[{"type":"text","text":"order #W1 is delivered"}],"isError":true}`},
		{"boom", `{}`, `{"internalError":"panic: kaboom"}`},
		{"nan", `{}`, `{"internalError":"encoding the result: json: unsupported value: NaN"}`},
		{"ptr", `{"name":"p","times":2}`, `{"content":[{"type":"text","text":"{\"name\":\"p\",\"times\":2}"}],"structuredContent":{"name":"p","times":2}}`},
		{"nope", `{}`, `{"content":[{"type":"text","text":"unknown tool \"nope\""}],"isError":true}`},
		{"weft.export", `{}`, `{"content":[{"type":"text","text":"{\"users\":[]}"}],"structuredContent":{"users":[]}}`},
	}
	for _, tc := range tests {
		if got := call(t, h, tc.tool, tc.args); got != tc.want {
			t.Errorf("%s %s:\n got %s\nwant %s", tc.tool, tc.args, got, tc.want)
		}
	}
	if len(h.logs) != 1 || !strings.HasPrefix(h.logs[0], "3:panic: kaboom\n") {
		t.Errorf("panic log: %q", h.logs)
	}
	for _, bad := range []string{``, `[]`, `{"tool":1}`} {
		if got := string(Dispatch(context.Background(), h, []byte(bad))); !strings.HasPrefix(got, `{"internalError":"malformed call request: `) {
			t.Errorf("request %q: %s", bad, got)
		}
	}
}

func nanValue() float64 { var z float64; return z / z }

func TestLogProgress(t *testing.T) {
	useRegistry(t)
	Log(1, "dropped outside a call")
	Progress(1, 2, "dropped")
	Register("work", "", func(context.Context, struct{}) (string, error) {
		Log(7, "clamped")
		Log(0, "debug")
		Progress(1, 3, "one of three")
		return "done", nil
	})
	h := &fakeHost{}
	call(t, h, "work", `{}`)
	if fmt.Sprint(h.logs) != "[3:clamped 0:debug]" || fmt.Sprint(h.progress) != "[one of three]" {
		t.Errorf("logs %q progress %q", h.logs, h.progress)
	}
}

// TestSQL runs the driver against the fake host: the exact requests and the
// decoding of every column type.
func TestSQL(t *testing.T) {
	useRegistry(t)
	h := &fakeHost{answers: map[string]string{
		"INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)": `{"columns":[],"types":[],"rows":[],"rows_affected":1,"last_insert_id":42,"error":null}`,
		"SELECT *": `{"columns":["i","u","f","d","s","b","t","j","n","x"],` +
			`"types":["int","uint","float","decimal","string","bytes","time","json","null","int"],` +
			`"rows":[[-7,18446744073709551615,2.5,"12.30","héllo","AAEC","2024-05-06T07:08:09.123456789Z",{"a":[1,2]},null,null],` +
			`["9223372036854775807","3",1e300,12.3,"","","2024-01-01T00:00:00Z","str",null,1]],` +
			`"rows_affected":0,"last_insert_id":0,"error":null}`,
		"SELECT dup": `{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"duplicate_key","message":"duplicate entry 'a' for key 'PRIMARY'"}}`,
		"SELECT bad": `{"columns":["a"],"types":["int"],"rows":[["x"]]}`,
		"SELECT big": `not json`,
	}}
	type row struct {
		I int64
		U uint64
		F float64
		D string
		S string
		B []byte
		T time.Time
		J json.RawMessage
		N any
		X sql.NullInt64
	}
	var got []row
	var execRes [2]int64
	var errs []error
	Register("sqltest", "", func(ctx context.Context, _ struct{}) (string, error) {
		db := DB()
		when := time.Date(2024, 5, 6, 9, 8, 9, 123456789, time.FixedZone("CEST", 2*3600))
		res, err := db.ExecContext(ctx, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
			int64(-1), uint64(1<<63+5), 1.5, true, "a'b<c>", []byte{0, 1, 2}, when, nil, uint(3))
		if err != nil {
			return "", err
		}
		execRes[0], _ = res.LastInsertId()
		execRes[1], _ = res.RowsAffected()

		rows, err := db.QueryContext(ctx, "SELECT *")
		if err != nil {
			return "", err
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		if fmt.Sprint(cols) != "[i u f d s b t j n x]" {
			return "", fmt.Errorf("columns %v", cols)
		}
		cts, _ := rows.ColumnTypes()
		if cts[7].DatabaseTypeName() != "JSON" {
			return "", fmt.Errorf("type name %q", cts[7].DatabaseTypeName())
		}
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.I, &r.U, &r.F, &r.D, &r.S, &r.B, &r.T, &r.J, &r.N, &r.X); err != nil {
				return "", err
			}
			got = append(got, r)
		}
		if err := rows.Err(); err != nil {
			return "", err
		}
		// Raw driver values, through any.
		vals := make([]any, 10)
		ptrs := make([]any, 10)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := db.QueryRowContext(ctx, "SELECT *").Scan(ptrs...); err != nil {
			return "", err
		}
		typeNames := make([]string, len(vals))
		for i, v := range vals {
			typeNames[i] = fmt.Sprintf("%T", v)
		}
		if got, want := strings.Join(typeNames, " "), "int64 uint64 float64 string string []uint8 time.Time []uint8 <nil> <nil>"; got != want {
			return "", fmt.Errorf("driver types %s, want %s", got, want)
		}

		_, err = db.ExecContext(ctx, "SELECT dup")
		errs = append(errs, err)
		_, err = db.QueryContext(ctx, "SELECT bad")
		errs = append(errs, err)
		_, err = db.QueryContext(ctx, "SELECT big")
		errs = append(errs, err)
		_, err = db.BeginTx(ctx, nil)
		errs = append(errs, err)
		_, err = db.ExecContext(ctx, "SELECT named", sql.Named("a", 1))
		errs = append(errs, err)
		_, err = db.ExecContext(ctx, "SELECT nan", nanValue())
		errs = append(errs, err)
		return "ok", nil
	})
	if resp := call(t, h, "sqltest", `{}`); resp != `{"content":[{"type":"text","text":"ok"}]}` {
		t.Fatalf("response %s", resp)
	}
	wantReqs := []string{
		`{"sql":"INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)","args":[-1,9223372036854775813,1.5,true,"a'b<c>",{"t":"bytes","v":"AAEC"},{"t":"time","v":"2024-05-06T07:08:09.123456789Z"},null,3]}`,
		`{"sql":"SELECT *","args":[]}`,
		`{"sql":"SELECT *","args":[]}`,
		`{"sql":"SELECT dup","args":[]}`,
		`{"sql":"SELECT bad","args":[]}`,
		`{"sql":"SELECT big","args":[]}`,
	}
	if strings.Join(h.requests, "\n") != strings.Join(wantReqs, "\n") {
		t.Errorf("requests:\n%s\nwant\n%s", strings.Join(h.requests, "\n"), strings.Join(wantReqs, "\n"))
	}
	if execRes != [2]int64{42, 1} {
		t.Errorf("last insert id, rows affected = %v", execRes)
	}
	want := []row{
		{I: -7, U: 18446744073709551615, F: 2.5, D: "12.30", S: "héllo", B: []byte{0, 1, 2},
			T: time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC), J: json.RawMessage(`{"a":[1,2]}`), N: nil, X: sql.NullInt64{}},
		{I: 9223372036854775807, U: 3, F: 1e300, D: "12.3", S: "", B: []byte{},
			T: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), J: json.RawMessage(`"str"`), N: nil, X: sql.NullInt64{Int64: 1, Valid: true}},
	}
	if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
		t.Errorf("rows:\n got %#v\nwant %#v", got, want)
	}
	var se *SQLError
	if len(errs) != 6 || !errors.As(errs[0], &se) || se.Kind != KindDuplicateKey || se.Message != "duplicate entry 'a' for key 'PRIMARY'" {
		t.Fatalf("dup error: %v", errs)
	}
	for i, want := range []string{
		`sql duplicate_key: duplicate entry 'a' for key 'PRIMARY'`,
		`weft sql: row 0 column "a" (int): strconv.ParseInt: parsing "x": invalid syntax`,
		`weft sql: malformed response: invalid character 'o' in literal null (expecting 'u')`,
		`weft sql: transactions are not supported: each tool call is already one unit of work`,
		`weft sql: named argument "a": only ? placeholders are supported`,
		`weft sql: argument 1: NaN is not a SQL value`,
	} {
		if errs[i] == nil || !strings.Contains(errs[i].Error(), want) {
			t.Errorf("error %d: %v, want %q", i, errs[i], want)
		}
	}
}

// TestSQLErrorIsToolError: an SQL error the agent's arguments can cause
// (a duplicate key, a NOT NULL column, a type mismatch, a refusal of the
// table policy) is a tool error the agent reads; one that only the
// module's own SQL can cause (syntax, a table or column that does not
// exist) is an internal error, attributed to the environment.
func TestSQLErrorIsToolError(t *testing.T) {
	useRegistry(t)
	for _, tc := range []struct{ kind, want string }{
		{"duplicate_key", `{"content":[{"type":"text","text":"sql duplicate_key: m"}],"isError":true}`},
		{"not_null", `{"content":[{"type":"text","text":"sql not_null: m"}],"isError":true}`},
		{"type_mismatch", `{"content":[{"type":"text","text":"sql type_mismatch: m"}],"isError":true}`},
		{"denied", `{"content":[{"type":"text","text":"sql denied: m"}],"isError":true}`},
		{"other", `{"content":[{"type":"text","text":"sql other: m"}],"isError":true}`},
		{"syntax", `{"internalError":"tool q_syntax: module bug: sql syntax: m"}`},
		{"no_such_table", `{"internalError":"tool q_no_such_table: module bug: sql no_such_table: m"}`},
		{"no_such_column", `{"internalError":"tool q_no_such_column: module bug: sql no_such_column: m"}`},
	} {
		stmt := "DELETE FROM t_" + tc.kind
		h := &fakeHost{answers: map[string]string{stmt: `{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"` + tc.kind + `","message":"m"}}`}}
		Register("q_"+tc.kind, "", func(ctx context.Context, _ struct{}) (any, error) {
			if _, err := DB().ExecContext(ctx, stmt); err != nil {
				return nil, fmt.Errorf("%w", err)
			}
			return "ok", nil
		})
		if got := call(t, h, "q_"+tc.kind, `{}`); got != tc.want {
			t.Errorf("%s: got %s\nwant %s", tc.kind, got, tc.want)
		}
	}
	if ModuleBug(errors.New("sql syntax: not an *SQLError")) || ModuleBug(nil) {
		t.Error("ModuleBug true for an error that wraps no *SQLError")
	}
}

func TestSQLOutsideCall(t *testing.T) {
	if _, err := DB().Exec("SELECT 1"); err == nil || !strings.Contains(err.Error(), "no tool call in progress") {
		t.Errorf("err %v", err)
	}
}

// TestDispatchConcurrent: concurrent Dispatch calls each reach their own
// host (run with -race).
func TestDispatchConcurrent(t *testing.T) {
	useRegistry(t)
	Register("who", "", func(ctx context.Context, _ struct{}) (string, error) {
		var s string
		err := DB().QueryRowContext(ctx, "SELECT who").Scan(&s)
		return s, err
	})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("host", i)
			h := &fakeHost{answers: map[string]string{"SELECT who": `{"columns":["w"],"types":["string"],"rows":[["` + name + `"]]}`}}
			for range 50 {
				if got, want := call(t, h, "who", `{}`), `{"content":[{"type":"text","text":"`+name+`"}]}`; got != want {
					t.Errorf("got %s want %s", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestSQLPreparedAndUnknownType(t *testing.T) {
	useRegistry(t)
	h := &fakeHost{answers: map[string]string{
		"UPDATE t SET a = ?": `{"rows_affected":3}`,
		"SELECT v":           `{"columns":["a","b","c","d"],"types":["geometry","geometry","geometry","geometry"],"rows":[[5,1.5,"s",[1]]]}`,
	}}
	Register("p", "", func(ctx context.Context, _ struct{}) (string, error) {
		st, err := DB().PrepareContext(ctx, "UPDATE t SET a = ?")
		if err != nil {
			return "", err
		}
		defer st.Close()
		res, err := st.ExecContext(ctx, int32(7))
		if err != nil {
			return "", err
		}
		n, _ := res.RowsAffected()
		var a, b, c, d any
		if err := DB().QueryRowContext(ctx, "SELECT v").Scan(&a, &b, &c, &d); err != nil {
			return "", err
		}
		return fmt.Sprintf("%d %T %v %T %v %v %s", n, a, a, b, b, c, d), nil
	})
	if got, want := call(t, h, "p", `{}`), `{"content":[{"type":"text","text":"3 int64 5 float64 1.5 s [1]"}]}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if got, want := h.requests[0], `{"sql":"UPDATE t SET a = ?","args":[7]}`; got != want {
		t.Errorf("request %s", got)
	}
}
