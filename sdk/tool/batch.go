package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/weft-dev/weft/sdk/abi"
)

// Stmt is one statement of Batch: SQL with ? placeholders bound in order to
// Args (nil, bool, the integer types, float64, string, []byte, time.Time,
// abi.Decimal, abi.JSONText).
type Stmt = abi.SQLStatement

// SQLResult is what a write statement did.
type SQLResult struct {
	RowsAffected int64
	LastInsertID uint64
}

// Batch runs stmts in order in one host call (weft_sql_v2, the compact
// encoding of docs/abi.md) inside the current tool call's unit of work,
// with the same table policy, determinism and limits as DB's statements,
// and returns one *Rows per statement (a write's has no columns; its
// Result says what it did). It stops at the first statement that fails:
// the results of the statements before it and an error "weft sql:
// statement <i>: ..." wrapping its *SQLError (errors.As finds it); that
// statement had no effect, the ones before it did, the ones after it did
// not run. A host without weft_sql_v2 (a native host that is no
// abi.SQLBatchHost) gets one weft_sql_v1 request per statement, with the
// same results.
func Batch(ctx context.Context, stmts ...Stmt) ([]*Rows, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h := currentHost()
	if h == nil {
		return nil, errNoCall
	}
	var res []abi.SQLResult
	if bh, ok := h.(abi.SQLBatchHost); ok {
		req, err := abi.EncodeSQLBatch(stmts)
		if err != nil {
			return nil, fmt.Errorf("weft sql: %v", err)
		}
		if res, err = abi.DecodeSQLResults(bh.SQLBatch(req)); err != nil {
			return nil, fmt.Errorf("weft sql: malformed response: %v", err)
		}
	} else {
		var err error
		if res, err = batchV1(h, stmts); err != nil {
			return nil, err
		}
	}
	out := make([]*Rows, 0, len(res))
	for i := range res {
		r := &res[i]
		if r.Error != nil {
			return out, fmt.Errorf("weft sql: statement %d: %w", i+1, r.Error)
		}
		out = append(out, &Rows{res: r, row: -1})
	}
	if len(out) != len(stmts) {
		return out, fmt.Errorf("weft sql: malformed response: %d results for %d statements", len(out), len(stmts))
	}
	return out, nil
}

// Query runs one row-returning statement (a Batch of one).
func Query(ctx context.Context, q string, args ...any) (*Rows, error) {
	rs, err := Batch(ctx, Stmt{SQL: q, Args: args})
	if err != nil {
		return nil, err
	}
	return rs[0], nil
}

// Exec runs one write statement (a Batch of one).
func Exec(ctx context.Context, q string, args ...any) (SQLResult, error) {
	rs, err := Batch(ctx, Stmt{SQL: q, Args: args})
	if err != nil {
		return SQLResult{}, err
	}
	return rs[0].Result(), nil
}

// batchV1 runs the statements one weft_sql_v1 request each, converting the
// responses to the v2 results.
func batchV1(h Host, stmts []Stmt) ([]abi.SQLResult, error) {
	out := make([]abi.SQLResult, 0, len(stmts))
	for i, s := range stmts {
		args := make([]any, len(s.Args))
		for j, a := range s.Args {
			switch x := a.(type) {
			case abi.Decimal:
				args[j] = abi.TypedValue{T: abi.TagDecimal, V: string(x)}
			case abi.JSONText:
				args[j] = string(x)
			default:
				args[j] = a
			}
		}
		req, err := encodeRequestValues(s.SQL, args)
		if err != nil {
			return nil, fmt.Errorf("weft sql: statement %d: %v", i+1, err)
		}
		resp, err := abi.DecodeSQLResponse(h.SQL(req))
		if err != nil {
			return nil, fmt.Errorf("weft sql: malformed response: %v", err)
		}
		if resp.Error != nil {
			out = append(out, abi.SQLResult{Error: resp.Error})
			return out, nil
		}
		r, err := fromV1(resp)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

var v1Tags = map[string]byte{
	abi.TypeInt: abi.SQLTagInt, abi.TypeUint: abi.SQLTagUint, abi.TypeFloat: abi.SQLTagFloat,
	abi.TypeDecimal: abi.SQLTagDecimal, abi.TypeString: abi.SQLTagString, abi.TypeBytes: abi.SQLTagBytes,
	abi.TypeTime: abi.SQLTagTime, abi.TypeJSON: abi.SQLTagJSON, abi.TypeNull: abi.SQLTagNull,
}

func fromV1(resp *sqlResponse) (abi.SQLResult, error) {
	r := abi.SQLResult{Columns: resp.Columns, Tags: make([]byte, len(resp.Columns)), RowsAffected: resp.RowsAffected, LastInsertID: resp.LastInsertID}
	if len(resp.Types) != len(resp.Columns) {
		return r, fmt.Errorf("weft sql: malformed response: %d columns, %d types", len(resp.Columns), len(resp.Types))
	}
	for j, t := range resp.Types {
		tag, ok := v1Tags[t]
		if !ok {
			tag = abi.SQLTagString
		}
		r.Tags[j] = tag
	}
	r.Cells = make([]abi.SQLCell, 0, len(resp.Rows)*len(resp.Columns))
	for i, row := range resp.Rows {
		if len(row) != len(resp.Columns) {
			return r, fmt.Errorf("weft sql: malformed response: row %d has %d values for %d columns", i, len(row), len(resp.Columns))
		}
		for j, cell := range row {
			v, err := decodeValue(resp.Types[j], cell)
			if err != nil {
				return r, fmt.Errorf("weft sql: row %d column %q (%s): %v", i, resp.Columns[j], resp.Types[j], err)
			}
			c := abi.SQLCell{}
			switch x := v.(type) {
			case int64:
				c.T, c.N = abi.SQLTagInt, uint64(x)
			case uint64:
				c.T, c.N = abi.SQLTagUint, x
			case float64:
				c.T, c.N = abi.SQLTagFloat, math.Float64bits(x)
			case string:
				c.T, c.S = abi.SQLTagString, x
				if r.Tags[j] == abi.SQLTagDecimal {
					c.T = abi.SQLTagDecimal
				}
			case bool:
				c.T = abi.SQLTagFalse
				if x {
					c.T = abi.SQLTagTrue
				}
			case []byte:
				c.T, c.S = abi.SQLTagBytes, string(x)
				if r.Tags[j] == abi.SQLTagJSON {
					c.T = abi.SQLTagJSON
				}
			case time.Time:
				c.T, c.N, c.Nanos = abi.SQLTagTime, uint64(x.Unix()), uint32(x.Nanosecond())
			}
			r.Cells = append(r.Cells, c)
		}
	}
	return r, nil
}

// Rows is one statement's result, read without database/sql: Next moves
// to the following row, then the typed reads (Str, Int, Float, ...) take
// the row's columns left to right, keeping the first error for Err. Every
// read converts as the SQL value allows (an int column read by Float, a
// decimal by Str or Float); a mismatch (a string read by Int, NULL read by
// Str) records an error naming the row and column and returns the zero
// value.
type Rows struct {
	res *abi.SQLResult
	row int // current row, -1 before the first Next
	col int
	err error
}

// Columns are the result's column names.
func (r *Rows) Columns() []string { return r.res.Columns }

// Len is the number of rows.
func (r *Rows) Len() int { return r.res.NumRows() }

// Result is what the statement did (rows affected, last insert id).
func (r *Rows) Result() SQLResult {
	return SQLResult{RowsAffected: r.res.RowsAffected, LastInsertID: r.res.LastInsertID}
}

// Next moves to the next row; false after the last (or after an error).
func (r *Rows) Next() bool {
	if r.err != nil || r.row+1 >= r.Len() {
		r.row = r.Len()
		return false
	}
	r.row++
	r.col = 0
	return true
}

// Err is the first read error.
func (r *Rows) Err() error { return r.err }

// Values is every row with each cell as a Go value (abi.SQLCell.Value:
// nil, int64, uint64, float64, string, []byte, time.Time, abi.Decimal,
// abi.JSONText).
func (r *Rows) Values() [][]any {
	n, cols := r.Len(), len(r.res.Columns)
	out := make([][]any, n)
	vals := make([]any, n*cols)
	for i := range n {
		row := vals[i*cols : (i+1)*cols : (i+1)*cols]
		for j := range row {
			row[j] = r.res.Cells[i*cols+j].Value()
		}
		out[i] = row
	}
	return out
}

func (r *Rows) cell() *abi.SQLCell {
	if r.row < 0 || r.row >= r.Len() {
		r.failf("no current row")
		return &abi.SQLCell{}
	}
	if r.col >= len(r.res.Columns) {
		r.failf("row has only %d columns", len(r.res.Columns))
		return &abi.SQLCell{}
	}
	c := &r.res.Cells[r.row*len(r.res.Columns)+r.col]
	r.col++
	return c
}

func (r *Rows) failf(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("weft sql: row %d column %d: %s", r.row, r.col, fmt.Sprintf(format, args...))
	}
}

func (r *Rows) mismatch(c *abi.SQLCell, want string) {
	if c.T == abi.SQLTagNull {
		r.failf("unexpected NULL, want %s", want)
	} else {
		r.failf("want %s, got %s", want, abi.TypeName(c.T))
	}
}

// IsNull reports whether the next column of the row is NULL (without
// reading it).
func (r *Rows) IsNull() bool {
	if r.row < 0 || r.row >= r.Len() || r.col >= len(r.res.Columns) {
		return false
	}
	return r.res.Cells[r.row*len(r.res.Columns)+r.col].T == abi.SQLTagNull
}

// Skip passes over the next column.
func (r *Rows) Skip() { r.cell() }

// Str reads a string, decimal, JSON or bytes column as text.
func (r *Rows) Str() string {
	c := r.cell()
	switch c.T {
	case abi.SQLTagString, abi.SQLTagDecimal, abi.SQLTagJSON, abi.SQLTagBytes:
		return c.S
	}
	r.mismatch(c, "a string")
	return ""
}

// NullStr reads a nullable text column: nil for NULL.
func (r *Rows) NullStr() *string {
	if r.IsNull() {
		r.col++
		return nil
	}
	s := r.Str()
	return &s
}

// Int reads an integer column (a uint that fits, a float that is integral,
// a decimal or string of an integer).
func (r *Rows) Int() int64 {
	c := r.cell()
	switch c.T {
	case abi.SQLTagInt:
		return int64(c.N)
	case abi.SQLTagUint:
		if c.N <= math.MaxInt64 {
			return int64(c.N)
		}
	case abi.SQLTagFalse:
		return 0
	case abi.SQLTagTrue:
		return 1
	case abi.SQLTagFloat:
		if f := math.Float64frombits(c.N); f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f)
		}
	case abi.SQLTagDecimal, abi.SQLTagString:
		if i, err := strconv.ParseInt(c.S, 10, 64); err == nil {
			return i
		}
	}
	r.mismatch(c, "an integer")
	return 0
}

// Bool reads an integer column as a boolean (non-zero is true).
func (r *Rows) Bool() bool { return r.Int() != 0 }

// Float reads a number column (int, uint, float, decimal; a string holding
// a number).
func (r *Rows) Float() float64 {
	c := r.cell()
	switch c.T {
	case abi.SQLTagFloat:
		return math.Float64frombits(c.N)
	case abi.SQLTagInt:
		return float64(int64(c.N))
	case abi.SQLTagUint:
		return float64(c.N)
	case abi.SQLTagDecimal, abi.SQLTagString:
		if f, err := strconv.ParseFloat(c.S, 64); err == nil {
			return f
		}
	}
	r.mismatch(c, "a number")
	return 0
}

// NullFloat reads a nullable number column: nil for NULL.
func (r *Rows) NullFloat() *float64 {
	if r.IsNull() {
		r.col++
		return nil
	}
	f := r.Float()
	return &f
}

// Bytes reads a bytes, string or JSON column (a copy).
func (r *Rows) Bytes() []byte {
	c := r.cell()
	switch c.T {
	case abi.SQLTagBytes, abi.SQLTagString, abi.SQLTagJSON:
		return []byte(c.S)
	case abi.SQLTagNull:
		return nil
	}
	r.mismatch(c, "bytes")
	return nil
}

// Time reads a time column (UTC).
func (r *Rows) Time() time.Time {
	c := r.cell()
	if c.T == abi.SQLTagTime {
		return time.Unix(int64(c.N), int64(c.Nanos)).UTC()
	}
	r.mismatch(c, "a time")
	return time.Time{}
}

// JSON decodes a JSON column (or a string column holding JSON text) into
// v; NULL leaves v alone and returns false.
func (r *Rows) JSON(v any) bool {
	c := r.cell()
	switch c.T {
	case abi.SQLTagNull:
		return false
	case abi.SQLTagJSON, abi.SQLTagString, abi.SQLTagBytes:
		if err := json.Unmarshal([]byte(c.S), v); err != nil {
			r.failf("%v", err)
		}
		return true
	}
	r.mismatch(c, "JSON")
	return false
}
