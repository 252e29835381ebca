package tool

import (
	"bytes"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/sdk/abi"
)

// SQL error kinds of weft_sql_v1 (docs/abi.md), the values of SQLError.Kind
// (the abi package's).
const (
	KindDuplicateKey = abi.KindDuplicateKey
	KindNoSuchTable  = abi.KindNoSuchTable
	KindNoSuchColumn = abi.KindNoSuchColumn
	KindSyntax       = abi.KindSyntax
	KindTypeMismatch = abi.KindTypeMismatch
	KindNotNull      = abi.KindNotNull
	KindDenied       = abi.KindDenied // a table the manifest does not declare
	KindOther        = abi.KindOther
)

// SQLError is a statement the host refused or that failed (the response's
// "error", abi.SQLError); the statement had no effect. Its Error is "sql
// <kind>: <message>". Check for it with errors.As:
//
//	var se *tool.SQLError
//	if errors.As(err, &se) && se.Kind == tool.KindDuplicateKey { ... }
type SQLError = abi.SQLError

// DriverName is the database/sql driver name the package registers.
const DriverName = "weft"

func init() { sql.Register(DriverName, sqlDriver{}) }

var (
	dbOnce sync.Once
	db     *sql.DB
)

// DB returns the module's database: a *sql.DB (driver "weft") over the
// weft_sql_v1 host library, running statements on the calling session's
// workspace inside the current call's unit of work. Use it only during a
// tool call (natively: inside Dispatch, where it reaches the Host passed to
// Dispatch); outside one, statements fail.
//
// Placeholders are ?, bound in order (named arguments are rejected).
// Arguments may be nil, int64 (and the other integer types), uint64,
// float64, bool, string, []byte and time.Time (sent as UTC), or
// driver.Valuer. Column values come back by the column's weft type: int =>
// int64, uint => uint64 (always, even when small; Scan converts it to any
// integer type it fits), float => float64, decimal => string, string =>
// string, bytes => []byte, time => time.Time (UTC), json => []byte holding
// the JSON text (scan into json.RawMessage, []byte or string), null => nil;
// a JSON null cell is nil in every column type, so a JSON column holding the
// JSON value null reads as NULL.
//
// Transactions are not supported: Begin returns an error, because the whole
// tool call already is one unit of work.
//
// A failed statement returns a *SQLError.
func DB() *sql.DB {
	dbOnce.Do(func() { db = sql.OpenDB(connector{}) })
	return db
}

var (
	errNoTx   = errors.New("weft sql: transactions are not supported: each tool call is already one unit of work")
	errNoCall = errors.New("weft sql: no tool call in progress")
)

type sqlDriver struct{}

func (sqlDriver) Open(string) (driver.Conn, error)                           { return conn{}, nil }
func (sqlDriver) OpenConnector(string) (driver.Connector, error)             { return connector{}, nil }
func (connector) Connect(context.Context) (driver.Conn, error)               { return conn{}, nil }
func (connector) Driver() driver.Driver                                      { return sqlDriver{} }
func (conn) Prepare(query string) (driver.Stmt, error)                       { return stmt{query}, nil }
func (conn) PrepareContext(_ context.Context, q string) (driver.Stmt, error) { return stmt{q}, nil }
func (conn) Close() error                                                    { return nil }
func (conn) Begin() (driver.Tx, error)                                       { return nil, errNoTx }
func (conn) BeginTx(context.Context, driver.TxOptions) (driver.Tx, error)    { return nil, errNoTx }

type connector struct{}

// conn is stateless: every statement goes to the current call's host.
type conn struct{}

var (
	_ driver.QueryerContext     = conn{}
	_ driver.ExecerContext      = conn{}
	_ driver.ConnBeginTx        = conn{}
	_ driver.NamedValueChecker  = conn{}
	_ driver.ConnPrepareContext = conn{}
)

func (conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return runQuery(ctx, query, args)
}

func (conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return runExec(ctx, query, args)
}

// CheckNamedValue keeps unsigned integers (database/sql's default
// converter rejects those with the high bit set) and rejects named
// arguments; everything else goes to the default converter.
func (conn) CheckNamedValue(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return fmt.Errorf("weft sql: named argument %q: only ? placeholders are supported", nv.Name)
	}
	switch v := nv.Value.(type) {
	case uint64:
		return nil
	case uint:
		nv.Value = uint64(v)
		return nil
	}
	return driver.ErrSkip
}

type stmt struct{ query string }

func (stmt) Close() error  { return nil }
func (stmt) NumInput() int { return -1 }

func (s stmt) Exec(args []driver.Value) (driver.Result, error) {
	return runExec(context.Background(), s.query, named(args))
}

func (s stmt) Query(args []driver.Value) (driver.Rows, error) {
	return runQuery(context.Background(), s.query, named(args))
}

func (s stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return runExec(ctx, s.query, args)
}

func (s stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return runQuery(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return nv
}

type result struct{ affected, lastID int64 }

func (r result) LastInsertId() (int64, error) { return r.lastID, nil }
func (r result) RowsAffected() (int64, error) { return r.affected, nil }

func runExec(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	r, err := roundTrip(ctx, query, args)
	if err != nil {
		return nil, err
	}
	return result{r.RowsAffected, int64(r.LastInsertID)}, nil
}

func runQuery(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	res, err := roundTrip(ctx, query, args)
	if err != nil {
		return nil, err
	}
	r := &rows{columns: res.Columns, types: make([]string, len(res.Columns)), values: make([][]driver.Value, res.NumRows())}
	if r.columns == nil {
		r.columns = []string{}
	}
	for j, t := range res.Tags {
		r.types[j] = abi.TypeName(t)
	}
	vals := make([]driver.Value, len(res.Cells))
	for i := range r.values {
		row := vals[i*len(r.columns) : (i+1)*len(r.columns) : (i+1)*len(r.columns)]
		for j := range row {
			row[j] = driverValue(&res.Cells[i*len(r.columns)+j])
		}
		r.values[i] = row
	}
	return r, nil
}

// driverValue is a cell as database/sql sees it (DB's documented types):
// a decimal as its text, JSON as []byte of its text.
func driverValue(c *abi.SQLCell) driver.Value {
	switch v := c.Value().(type) {
	case abi.Decimal:
		return string(v)
	case abi.JSONText:
		return []byte(v)
	default:
		return v
	}
}

type sqlResponse = abi.SQLResponse[json.RawMessage]

// encodeRequestValues builds the weft_sql_v1 request JSON (abi.SQLRequest).
func encodeRequestValues(query string, args []any) ([]byte, error) {
	req := abi.SQLRequest{SQL: query, Args: make([]json.RawMessage, len(args))}
	for i, a := range args {
		var v any
		switch x := a.(type) {
		case nil, int64, uint64, bool, string, abi.TypedValue:
			v = x
		case int:
			v = int64(x)
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("weft sql: argument %d: %v is not a SQL value", i+1, x)
			}
			v = x
		case []byte:
			v = abi.TypedValue{T: abi.TagBytes, V: base64.StdEncoding.EncodeToString(x)}
		case time.Time:
			v = abi.TypedValue{T: abi.TagTime, V: x.UTC().Format(time.RFC3339Nano)}
		default:
			return nil, fmt.Errorf("weft sql: argument %d: unsupported type %T", i+1, x)
		}
		b, err := marshal(v)
		if err != nil {
			return nil, fmt.Errorf("weft sql: argument %d: %v", i+1, err)
		}
		req.Args[i] = b
	}
	return marshal(req)
}

// roundTrip runs one statement of DB: weft_sql_v2 when the host serves it
// (a batch of one), else weft_sql_v1.
func roundTrip(ctx context.Context, query string, args []driver.NamedValue) (*abi.SQLResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := currentHost()
	if h == nil {
		return nil, errNoCall
	}
	vals := make([]any, len(args))
	for i, a := range args {
		if f, ok := a.Value.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
			return nil, fmt.Errorf("weft sql: argument %d: %v is not a SQL value", i+1, f)
		}
		vals[i] = a.Value
	}
	var res []abi.SQLResult
	var err error
	if bh, ok := h.(abi.SQLBatchHost); ok {
		req, err := abi.EncodeSQLBatch([]Stmt{{SQL: query, Args: vals}})
		if err != nil {
			return nil, fmt.Errorf("weft sql: %v", err)
		}
		if res, err = abi.DecodeSQLResults(bh.SQLBatch(req)); err != nil {
			return nil, fmt.Errorf("weft sql: malformed response: %v", err)
		}
	} else if res, err = batchV1(h, []Stmt{{SQL: query, Args: vals}}); err != nil {
		return nil, err
	}
	if len(res) != 1 {
		return nil, fmt.Errorf("weft sql: malformed response: %d results for one statement", len(res))
	}
	if res[0].Error != nil {
		return nil, res[0].Error
	}
	return &res[0], nil
}

// numberText returns the text of a JSON number, or of a JSON string's content
// (hosts may quote numbers that do not fit a double).
func numberText(cell json.RawMessage) (string, error) {
	if len(cell) > 0 && cell[0] == '"' {
		return abi.CellString(cell)
	}
	return string(cell), nil
}

// decodeValue converts one response cell by its column type.
func decodeValue(typ string, cell json.RawMessage) (driver.Value, error) {
	cell = bytes.TrimSpace(cell)
	if string(cell) == "null" {
		return nil, nil
	}
	switch typ {
	case abi.TypeNull:
		return nil, nil
	case abi.TypeInt:
		s, err := numberText(cell)
		if err != nil {
			return nil, err
		}
		return strconv.ParseInt(s, 10, 64)
	case abi.TypeUint:
		s, err := numberText(cell)
		if err != nil {
			return nil, err
		}
		return strconv.ParseUint(s, 10, 64)
	case abi.TypeFloat:
		s, err := numberText(cell)
		if err != nil {
			return nil, err
		}
		return strconv.ParseFloat(s, 64)
	case abi.TypeDecimal:
		return numberText(cell)
	case abi.TypeString:
		return abi.CellString(cell)
	case abi.TypeBytes:
		s, err := abi.CellString(cell)
		if err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case abi.TypeTime:
		s, err := abi.CellString(cell)
		if err != nil {
			return nil, err
		}
		return parseTime(s)
	case abi.TypeJSON:
		return append([]byte(nil), cell...), nil
	}
	// An unknown type (a newer host): the plain JSON value.
	var v any
	dec := json.NewDecoder(bytes.NewReader(cell))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return i, nil
		}
		return v.Float64()
	case string, bool:
		return v, nil
	}
	return append([]byte(nil), cell...), nil
}

func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q", s)
}

type rows struct {
	columns []string
	types   []string
	values  [][]driver.Value
	next    int
}

func (r *rows) Columns() []string { return r.columns }
func (r *rows) Close() error      { r.next = len(r.values); return nil }

func (r *rows) Next(dest []driver.Value) error {
	if r.next >= len(r.values) {
		return io.EOF
	}
	copy(dest, r.values[r.next])
	r.next++
	return nil
}

// ColumnTypeDatabaseTypeName returns the weft column type in upper case
// (INT, UINT, FLOAT, DECIMAL, STRING, BYTES, TIME, JSON, NULL).
func (r *rows) ColumnTypeDatabaseTypeName(i int) string { return strings.ToUpper(r.types[i]) }
