package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// weft_sql_v2 (docs/abi.md, "weft_sql_v2"): several statements in one host
// call, requests and results in a compact binary encoding instead of JSON.
// The encoding is the same in both directions:
//
//	request  = version:u8(=2) count:uvarint statement*count
//	statement = sql:str nargs:uvarint value*nargs
//	response = version:u8(=2) count:uvarint result*count
//	result   = 0x00 ncols:uvarint (name:str type:u8)*ncols nrows:uvarint value*(nrows*ncols)
//	             rows_affected:varint last_insert_id:uvarint
//	         | 0x01 kind:str message:str
//	str      = len:uvarint bytes
//	value    = tag:u8 payload (the SQLTag* constants)
//
// varint is zigzag (encoding/binary's AppendVarint), uvarint
// encoding/binary's AppendUvarint. The results are in statement order; at
// most one is an error, the last: the statements after a failed one did not
// run and the failed one had no effect (those before it did).

// SQLWireVersion is the first byte of every weft_sql_v2 request and
// response.
const SQLWireVersion = 2

// Value tags of weft_sql_v2: the first byte of every argument and cell. A
// column's type code (SQLResult.Tags) is the tag of its cells' type
// (SQLTagNull for an all-NULL column).
const (
	SQLTagNull    = 0x00 // no payload
	SQLTagInt     = 0x01 // varint
	SQLTagUint    = 0x02 // uvarint
	SQLTagFloat   = 0x03 // 8 bytes, IEEE 754 binary64, little-endian
	SQLTagFalse   = 0x04 // no payload (arguments; cells of bool columns are ints)
	SQLTagTrue    = 0x05 // no payload
	SQLTagString  = 0x06 // str, UTF-8
	SQLTagBytes   = 0x07 // str
	SQLTagTime    = 0x08 // seconds since the Unix epoch (varint), nanoseconds (uvarint, < 1e9); UTC
	SQLTagDecimal = 0x09 // str: the decimal's text keeping its scale, "12.30"
	SQLTagJSON    = 0x0a // str: the JSON text
)

// Decimal is a DECIMAL value as its text, "12.30": an argument bound as a
// decimal, or what a decimal cell decodes to.
type Decimal string

// JSONText is the text of a JSON value: an argument bound as JSON, or what a
// JSON cell decodes to.
type JSONText string

// SQLStatement is one statement of a weft_sql_v2 batch: ? placeholders
// bound in order to Args, each nil, bool, int64 (or any signed integer
// type), uint64 (or any unsigned one), float64 (float32; not NaN or ±Inf),
// string, []byte, time.Time (sent as UTC), Decimal or JSONText.
type SQLStatement struct {
	SQL  string
	Args []any
}

// SQLCell is one decoded cell of a weft_sql_v2 result: T is its tag; N holds
// an int's bits (int64(N)), a uint, a float's bits (math.Float64frombits),
// a time's seconds (int64(N)); Nanos a time's nanoseconds; S the text of a
// string, bytes, decimal or JSON cell.
type SQLCell struct {
	T     byte
	Nanos uint32
	N     uint64
	S     string
}

// Value is the cell as a Go value: nil, int64, uint64, float64, bool (only
// from arguments), string, []byte (a copy), time.Time (UTC), Decimal or
// JSONText.
func (c *SQLCell) Value() any {
	switch c.T {
	case SQLTagInt:
		return int64(c.N)
	case SQLTagUint:
		return c.N
	case SQLTagFloat:
		return math.Float64frombits(c.N)
	case SQLTagFalse:
		return false
	case SQLTagTrue:
		return true
	case SQLTagString:
		return c.S
	case SQLTagBytes:
		return []byte(c.S)
	case SQLTagTime:
		return time.Unix(int64(c.N), int64(c.Nanos)).UTC()
	case SQLTagDecimal:
		return Decimal(c.S)
	case SQLTagJSON:
		return JSONText(c.S)
	}
	return nil
}

// SQLResult is one statement's result of a weft_sql_v2 response. Cells
// holds len(Columns) cells per row, row after row.
type SQLResult struct {
	Columns      []string
	Tags         []byte // one type code (SQLTag*) per column
	Cells        []SQLCell
	RowsAffected int64
	LastInsertID uint64
	Error        *SQLError // set on the failed statement (the last result)
}

// NumRows is the number of rows of the result.
func (r *SQLResult) NumRows() int {
	if len(r.Columns) == 0 {
		return 0
	}
	return len(r.Cells) / len(r.Columns)
}

// Row returns the cells of row i.
func (r *SQLResult) Row(i int) []SQLCell {
	n := len(r.Columns)
	return r.Cells[i*n : (i+1)*n : (i+1)*n]
}

// TypeName is the weft_sql_v1 type name (the Type* constants) of a type
// code, "" for an unknown one.
func TypeName(tag byte) string {
	switch tag {
	case SQLTagNull:
		return TypeNull
	case SQLTagInt, SQLTagFalse, SQLTagTrue:
		return TypeInt
	case SQLTagUint:
		return TypeUint
	case SQLTagFloat:
		return TypeFloat
	case SQLTagString:
		return TypeString
	case SQLTagBytes:
		return TypeBytes
	case SQLTagTime:
		return TypeTime
	case SQLTagDecimal:
		return TypeDecimal
	case SQLTagJSON:
		return TypeJSON
	}
	return ""
}

// AppendSQLString appends a str (uvarint length, bytes).
func AppendSQLString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendSQLValue appends one value (tag and payload) of a Go value of the
// types SQLStatement lists; an error for any other type or a NaN/±Inf
// float, b unchanged.
func AppendSQLValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, SQLTagNull), nil
	case bool:
		if x {
			return append(b, SQLTagTrue), nil
		}
		return append(b, SQLTagFalse), nil
	case int64:
		return binary.AppendVarint(append(b, SQLTagInt), x), nil
	case int:
		return binary.AppendVarint(append(b, SQLTagInt), int64(x)), nil
	case int8:
		return binary.AppendVarint(append(b, SQLTagInt), int64(x)), nil
	case int16:
		return binary.AppendVarint(append(b, SQLTagInt), int64(x)), nil
	case int32:
		return binary.AppendVarint(append(b, SQLTagInt), int64(x)), nil
	case uint64:
		return binary.AppendUvarint(append(b, SQLTagUint), x), nil
	case uint:
		return binary.AppendUvarint(append(b, SQLTagUint), uint64(x)), nil
	case uint8:
		return binary.AppendUvarint(append(b, SQLTagUint), uint64(x)), nil
	case uint16:
		return binary.AppendUvarint(append(b, SQLTagUint), uint64(x)), nil
	case uint32:
		return binary.AppendUvarint(append(b, SQLTagUint), uint64(x)), nil
	case float32:
		return appendFloat(b, float64(x))
	case float64:
		return appendFloat(b, x)
	case string:
		return AppendSQLString(append(b, SQLTagString), x), nil
	case []byte:
		b = binary.AppendUvarint(append(b, SQLTagBytes), uint64(len(x)))
		return append(b, x...), nil
	case time.Time:
		x = x.UTC()
		b = binary.AppendVarint(append(b, SQLTagTime), x.Unix())
		return binary.AppendUvarint(b, uint64(x.Nanosecond())), nil
	case Decimal:
		return AppendSQLString(append(b, SQLTagDecimal), string(x)), nil
	case JSONText:
		return AppendSQLString(append(b, SQLTagJSON), string(x)), nil
	}
	return b, fmt.Errorf("unsupported SQL value type %T", v)
}

func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, fmt.Errorf("%v is not a SQL value", f)
	}
	return binary.LittleEndian.AppendUint64(append(b, SQLTagFloat), math.Float64bits(f)), nil
}

// EncodeSQLBatch encodes a weft_sql_v2 request; the error names the
// statement and argument (1-based) of a value AppendSQLValue refuses.
func EncodeSQLBatch(stmts []SQLStatement) ([]byte, error) {
	n := 2
	for _, s := range stmts {
		n += len(s.SQL) + 4 + 10*len(s.Args)
	}
	b := make([]byte, 0, n)
	b = append(b, SQLWireVersion)
	b = binary.AppendUvarint(b, uint64(len(stmts)))
	for i, s := range stmts {
		b = AppendSQLString(b, s.SQL)
		b = binary.AppendUvarint(b, uint64(len(s.Args)))
		for j, a := range s.Args {
			var err error
			if b, err = AppendSQLValue(b, a); err != nil {
				return nil, fmt.Errorf("statement %d argument %d: %v", i+1, j+1, err)
			}
		}
	}
	return b, nil
}

// ErrSQLWire is the error of every malformed weft_sql_v2 message
// (DecodeSQLBatch, DecodeSQLResults); errors.Is finds it.
var ErrSQLWire = errors.New("malformed weft_sql_v2 message")

// wire reads a weft_sql_v2 message. It holds the message as one string, so
// that every string cell is a substring of it (no allocation per cell).
type wire struct {
	s   string
	i   int
	err error
}

func (w *wire) fail(what string) {
	if w.err == nil {
		w.err = fmt.Errorf("%w: %s at byte %d", ErrSQLWire, what, w.i)
	}
	w.i = len(w.s)
}

func (w *wire) byte1() byte {
	if w.i >= len(w.s) {
		w.fail("unexpected end")
		return 0
	}
	c := w.s[w.i]
	w.i++
	return c
}

func (w *wire) uvarint() uint64 {
	var x uint64
	var shift uint
	for k := 0; k < binary.MaxVarintLen64; k++ {
		if w.i >= len(w.s) {
			w.fail("unexpected end in a varint")
			return 0
		}
		c := w.s[w.i]
		w.i++
		if c < 0x80 {
			if k == binary.MaxVarintLen64-1 && c > 1 {
				w.fail("varint overflows 64 bits")
				return 0
			}
			return x | uint64(c)<<shift
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	w.fail("varint overflows 64 bits")
	return 0
}

func (w *wire) varint() int64 {
	u := w.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a uvarint count of items each at least min bytes long,
// refusing one the rest of the message cannot hold (so a hostile count
// never sizes an allocation).
func (w *wire) count(min int) int {
	n := w.uvarint()
	if w.err != nil {
		return 0
	}
	if min < 1 {
		min = 1
	}
	if n > uint64(len(w.s)-w.i)/uint64(min) {
		w.fail("count larger than the message")
		return 0
	}
	return int(n)
}

func (w *wire) str() string {
	n := w.uvarint()
	if w.err != nil {
		return ""
	}
	if n > uint64(len(w.s)-w.i) {
		w.fail("string longer than the message")
		return ""
	}
	s := w.s[w.i : w.i+int(n)]
	w.i += int(n)
	return s
}

// cell reads one value.
func (w *wire) cell(c *SQLCell) {
	c.T = w.byte1()
	switch c.T {
	case SQLTagNull, SQLTagFalse, SQLTagTrue:
	case SQLTagInt:
		c.N = uint64(w.varint())
	case SQLTagUint:
		c.N = w.uvarint()
	case SQLTagFloat:
		if len(w.s)-w.i < 8 {
			w.fail("unexpected end in a float")
			return
		}
		var u uint64
		for k := 7; k >= 0; k-- {
			u = u<<8 | uint64(w.s[w.i+k])
		}
		c.N = u
		w.i += 8
		if f := math.Float64frombits(c.N); math.IsNaN(f) || math.IsInf(f, 0) {
			w.fail("float is not finite")
		}
	case SQLTagString:
		c.S = w.str()
		if !utf8.ValidString(c.S) {
			w.fail("string is not UTF-8")
		}
	case SQLTagBytes, SQLTagJSON:
		c.S = w.str()
	case SQLTagDecimal:
		c.S = w.str()
		if !validDecimal(c.S) {
			w.fail("decimal text " + strconv.Quote(c.S))
		}
	case SQLTagTime:
		c.N = uint64(w.varint())
		ns := w.uvarint()
		if ns >= 1e9 {
			w.fail("time nanoseconds out of range")
			return
		}
		c.Nanos = uint32(ns)
	default:
		w.fail(fmt.Sprintf("unknown value tag 0x%02x", c.T))
	}
}

// validDecimal: [-]digits[.digits].
func validDecimal(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	d := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, d = i+1, d+1
	}
	if d == 0 {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		d = 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, d = i+1, d+1
		}
		if d == 0 {
			return false
		}
	}
	return i == len(s)
}

func (w *wire) header() {
	if v := w.byte1(); w.err == nil && v != SQLWireVersion {
		w.fail(fmt.Sprintf("version %d, want %d", v, SQLWireVersion))
	}
}

func (w *wire) end() error {
	if w.err == nil && w.i != len(w.s) {
		w.fail("trailing bytes")
	}
	return w.err
}

// DecodeSQLBatch decodes a weft_sql_v2 request (the host's side): each
// argument a Go value as SQLCell.Value gives it. Errors wrap ErrSQLWire.
func DecodeSQLBatch(raw []byte) ([]SQLStatement, error) {
	w := &wire{s: string(raw)}
	w.header()
	n := w.count(2)
	stmts := make([]SQLStatement, 0, n)
	for k := 0; k < n && w.err == nil; k++ {
		var s SQLStatement
		s.SQL = w.str()
		na := w.count(1)
		if na > 0 {
			s.Args = make([]any, na)
		}
		for j := 0; j < na && w.err == nil; j++ {
			var c SQLCell
			w.cell(&c)
			s.Args[j] = c.Value()
		}
		stmts = append(stmts, s)
	}
	if err := w.end(); err != nil {
		return nil, err
	}
	return stmts, nil
}

// DecodeSQLResults decodes a weft_sql_v2 response (the guest's side).
// Errors wrap ErrSQLWire: a bad tag, a count or length past the end, a
// string cell that is not UTF-8, a non-finite float, a malformed decimal,
// an error result that is not the last, trailing bytes.
func DecodeSQLResults(raw []byte) ([]SQLResult, error) {
	w := &wire{s: string(raw)}
	w.header()
	n := w.count(2)
	out := make([]SQLResult, n)
	for k := 0; k < n && w.err == nil; k++ {
		r := &out[k]
		switch w.byte1() {
		case 0:
			nc := w.count(2)
			r.Columns = make([]string, nc)
			r.Tags = make([]byte, nc)
			for j := 0; j < nc && w.err == nil; j++ {
				r.Columns[j] = w.str()
				r.Tags[j] = w.byte1()
				if w.err == nil && TypeName(r.Tags[j]) == "" {
					w.fail(fmt.Sprintf("unknown column type 0x%02x", r.Tags[j]))
				}
			}
			nr := 0
			if nc > 0 {
				nr = w.count(nc)
			} else if w.uvarint() != 0 {
				w.fail("rows without columns")
			}
			if w.err != nil {
				break
			}
			r.Cells = make([]SQLCell, nr*nc)
			for j := range r.Cells {
				if w.err != nil {
					break
				}
				w.cell(&r.Cells[j])
			}
			r.RowsAffected = w.varint()
			r.LastInsertID = w.uvarint()
		case 1:
			r.Error = &SQLError{Kind: w.str(), Message: w.str()}
			if k != n-1 {
				w.fail("an error result before the last")
			}
		default:
			w.fail("unknown result status")
		}
	}
	if err := w.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// SQLResultsWriter builds a weft_sql_v2 response (the host's side): per
// statement either Rows (columns, then each cell with Cell) and Done, or
// Fail; then Bytes. The zero value is ready; Reset reuses it.
type SQLResultsWriter struct {
	body []byte
	n    int
}

// Reset empties the writer.
func (w *SQLResultsWriter) Reset() { w.body, w.n = w.body[:0], 0 }

// Rows starts a successful result with its columns, their type codes and
// the number of rows; nrows*len(cols) cells follow (Cell).
func (w *SQLResultsWriter) Rows(cols []string, tags []byte, nrows int) {
	w.n++
	w.body = append(w.body, 0)
	w.body = binary.AppendUvarint(w.body, uint64(len(cols)))
	for j, c := range cols {
		w.body = AppendSQLString(w.body, c)
		w.body = append(w.body, tags[j])
	}
	w.body = binary.AppendUvarint(w.body, uint64(nrows))
}

// Cell appends one cell (AppendSQLValue); on an error nothing is appended.
func (w *SQLResultsWriter) Cell(v any) error {
	var err error
	w.body, err = AppendSQLValue(w.body, v)
	return err
}

// Done ends a successful result.
func (w *SQLResultsWriter) Done(rowsAffected int64, lastInsertID uint64) {
	w.body = binary.AppendVarint(w.body, rowsAffected)
	w.body = binary.AppendUvarint(w.body, lastInsertID)
}

// Mark and Rewind drop a result begun after Mark (a cell that failed to
// encode: the host answers an error for that statement instead).
func (w *SQLResultsWriter) Mark() (int, int) { return len(w.body), w.n }

// Rewind returns to a Mark.
func (w *SQLResultsWriter) Rewind(at, n int) { w.body, w.n = w.body[:at], n }

// Fail appends an error result (it must be the last).
func (w *SQLResultsWriter) Fail(kind, message string) {
	w.n++
	w.body = append(w.body, 1)
	w.body = AppendSQLString(w.body, kind)
	w.body = AppendSQLString(w.body, message)
}

// Bytes is the response: the version, the number of results, the results.
func (w *SQLResultsWriter) Bytes() []byte {
	b := make([]byte, 0, len(w.body)+11)
	b = append(b, SQLWireVersion)
	b = binary.AppendUvarint(b, uint64(w.n))
	return append(b, w.body...)
}

// SQLFailure is the whole response of a batch that failed before its first
// statement ran (a malformed request, no SQL session): one error result.
func SQLFailure(kind, message string) []byte {
	var w SQLResultsWriter
	w.Fail(kind, message)
	return w.Bytes()
}
