package sqlhost

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weft-dev/weft/sdk/abi"
)

// Rows is a materialized query result: Columns[j] names column j and
// Values[i][j] is its value in row i, in Go form (int8..int64, uint8..uint64,
// float32/float64, decimal.Decimal, string, []byte, time.Time, a JSON
// document implementing ToInterface() (any, error), or nil for NULL).
type Rows struct {
	Columns []string
	Values  [][]any
}

// Result reports what a write statement did.
type Result struct {
	RowsAffected int64
	LastInsertID uint64
}

// Executor runs one statement with ? placeholders bound to args in order.
// Bound values are int64, uint64, float64, bool, string, nil, []byte,
// time.Time (UTC) and decimal.Decimal.
type Executor interface {
	Query(ctx context.Context, q string, args ...any) (*Rows, error)
	Exec(ctx context.Context, q string, args ...any) (Result, error)
}

// Classifier is optionally implemented by an Executor to map its errors to
// the ABI error kinds (see the Kind* constants).
type Classifier interface {
	Classify(err error) string
}

// ABI error kinds of weft_sql_v1 (docs/abi.md; sdk/abi's).
const (
	KindDuplicateKey = abi.KindDuplicateKey
	KindNoSuchTable  = abi.KindNoSuchTable
	KindNoSuchColumn = abi.KindNoSuchColumn
	KindSyntax       = abi.KindSyntax
	KindTypeMismatch = abi.KindTypeMismatch
	KindNotNull      = abi.KindNotNull
	KindDenied       = abi.KindDenied
	KindOther        = abi.KindOther
	// KindResourceLimit: the statement exceeded the call's SQL budget
	// (docs/abi.md, "SQL limits"); the call then fails with memory_limit.
	KindResourceLimit = "resource_limit"
)

// Handler serves weft_sql_v1 query requests for one executor and policy.
type Handler struct {
	Exec   Executor
	Policy Policy
	// Classify maps an executor error to an ABI kind; nil uses the
	// Executor's Classifier if it implements one, else KindOther.
	Classify func(error) string
	// OnDenied, if set, is told about every statement the policy refused
	// (the refusal is still returned to the guest as an sql error).
	OnDenied func(*DeniedError)

	// keyed is Policy.key() with the table lists it was computed from,
	// computed at the handler's first statement and again whenever Policy's
	// lists differ from those (a changed Policy, or names changed in place in
	// a shared slice): a cached verdict is always the current policy's.
	keyed atomic.Pointer[keyedPolicy]
}

type keyedPolicy struct {
	owns, reads []string
	key         string
}

// policyKey returns h.Policy.key(), recomputing it only when the policy's
// table lists changed since the last statement. The comparison is a few
// string compares (same bytes: pointer-equal), far below the key's sort.
func (h *Handler) policyKey() string {
	p := h.Policy
	if k := h.keyed.Load(); k != nil && slices.Equal(k.owns, p.Owns) && slices.Equal(k.reads, p.Reads) {
		return k.key
	}
	k := &keyedPolicy{owns: slices.Clone(p.Owns), reads: slices.Clone(p.Reads), key: p.key()}
	h.keyed.Store(k)
	return k.key
}

// Handle serves one weft_sql_v1 query request (JSON) and returns the
// response JSON. It never fails: errors travel in the response's "error".
func Handle(ctx context.Context, ex Executor, pol Policy, req []byte) []byte {
	h := Handler{Exec: ex, Policy: pol}
	return h.Handle(ctx, req)
}

// Request is a weft_sql_v1 query request (the shared wire type).
type Request = abi.SQLRequest

// Response is a weft_sql_v1 query response as the host builds it: cells are
// Go values of the column's type (the shared wire type, abi.SQLResponse).
type Response = abi.SQLResponse[any]

// ErrorReply is the "error" member of a failed response.
type ErrorReply = abi.SQLError

// Handle serves one request.
func (h *Handler) Handle(ctx context.Context, req []byte) []byte {
	return encode(h.serve(ctx, req))
}

func fail(kind, msg string) *Response {
	return &Response{Error: &ErrorReply{Kind: kind, Message: msg}}
}

func (h *Handler) serve(ctx context.Context, raw []byte) *Response {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		return fail(KindOther, "malformed sql request: "+err.Error())
	}
	args := make([]any, len(req.Args))
	for i, a := range req.Args {
		v, err := DecodeArg(a)
		if err != nil {
			return fail(KindTypeMismatch, fmt.Sprintf("argument %d: %v", i+1, err))
		}
		args[i] = v
	}
	rows, res, reply := h.run(ctx, req.SQL, args)
	if reply != nil {
		return &Response{Error: reply}
	}
	if rows == nil {
		return &Response{RowsAffected: res.RowsAffected, LastInsertID: res.LastInsertID}
	}
	resp, err := EncodeRows(rows)
	if err != nil {
		return fail(KindOther, err.Error())
	}
	return resp
}

// failed answers an executor error: a *DeniedError (the engine's own check
// of the policy, e.g. a table resolved through scopes the text check does
// not see) is reported like a refusal of Check.
func (h *Handler) failed(err error) *Response {
	var de *DeniedError
	if errors.As(err, &de) {
		if h.OnDenied != nil {
			h.OnDenied(de)
		}
		return fail(KindDenied, de.Error())
	}
	return fail(h.classify(err), err.Error())
}

func (h *Handler) classify(err error) string {
	var k string
	switch {
	case h.Classify != nil:
		k = h.Classify(err)
	default:
		if c, ok := h.Exec.(Classifier); ok {
			k = c.Classify(err)
		}
	}
	if k == "" {
		k = KindOther
	}
	return k
}

func encode(r *Response) []byte {
	if r.Columns == nil {
		r.Columns = []string{}
	}
	if r.Types == nil {
		r.Types = []string{}
	}
	if r.Rows == nil {
		r.Rows = [][]any{}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		b.Reset()
		enc.Encode(fail(KindOther, "encoding response: "+err.Error()))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// DecodeArg decodes one request argument: a JSON number (int64 when
// integral and in range, uint64 above int64, else float64), string, bool,
// null, or a tagged {"t": "bytes"|"time"|"decimal", "v": "..."} object.
func DecodeArg(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case json.Number:
		s := x.String()
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return u, nil
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number %s out of range", s)
		}
		return f, nil
	case map[string]any:
		t, _ := x["t"].(string)
		s, ok := x["v"].(string)
		if !ok || len(x) != 2 {
			return nil, errors.New(`tagged value must be {"t": ..., "v": "<string>"}`)
		}
		switch t {
		case abi.TagBytes:
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("bytes: %v", err)
			}
			return b, nil
		case abi.TagTime:
			tm, err := time.Parse(time.RFC3339Nano, s)
			if err != nil {
				return nil, fmt.Errorf("time: %v", err)
			}
			return tm.UTC(), nil
		case abi.TagDecimal:
			d, err := decimal.NewFromString(s)
			if err != nil {
				return nil, fmt.Errorf("decimal: %v", err)
			}
			return d, nil
		default:
			return nil, fmt.Errorf("unknown value tag %q", t)
		}
	default:
		return nil, fmt.Errorf("unsupported argument value %s", raw)
	}
}

// Column types of a response (sdk/abi's).
const (
	TypeInt     = abi.TypeInt
	TypeUint    = abi.TypeUint
	TypeFloat   = abi.TypeFloat
	TypeDecimal = abi.TypeDecimal
	TypeString  = abi.TypeString
	TypeBytes   = abi.TypeBytes
	TypeTime    = abi.TypeTime
	TypeJSON    = abi.TypeJSON
	TypeNull    = abi.TypeNull
)

type jsonDoc interface {
	ToInterface() (any, error)
}

// TypeOf is the response type of one Go value (TypeNull for nil).
func TypeOf(v any) string {
	switch v.(type) {
	case nil:
		return TypeNull
	case int, int8, int16, int32, int64:
		return TypeInt
	case uint, uint8, uint16, uint32, uint64:
		return TypeUint
	case float32, float64:
		return TypeFloat
	case decimal.Decimal, *decimal.Decimal:
		return TypeDecimal
	case string:
		return TypeString
	case []byte:
		return TypeBytes
	case time.Time:
		return TypeTime
	case bool:
		return TypeInt
	case jsonDoc, json.RawMessage, map[string]any, []any:
		return TypeJSON
	}
	return TypeString
}

// EncodeRows builds the response of a query: one type per column from its
// first non-NULL value (TypeNull for an all-NULL column), every value of the
// column encoded as that type.
func EncodeRows(r *Rows) (*Response, error) {
	resp := &Response{}
	if r == nil {
		return resp, nil
	}
	resp.Columns = append([]string{}, r.Columns...)
	n := len(r.Columns)
	resp.Types = make([]string, n)
	for j := range n {
		resp.Types[j] = TypeNull
		for _, row := range r.Values {
			if j < len(row) && row[j] != nil {
				resp.Types[j] = TypeOf(row[j])
				break
			}
		}
	}
	resp.Rows = make([][]any, len(r.Values))
	for i, row := range r.Values {
		out := make([]any, n)
		for j := range n {
			if j >= len(row) {
				continue
			}
			v, err := encodeValue(resp.Types[j], row[j])
			if err != nil {
				return nil, fmt.Errorf("column %s: %v", r.Columns[j], err)
			}
			out[j] = v
		}
		resp.Rows[i] = out
	}
	return resp, nil
}

// encodeValue returns the JSON-encodable form of v in a column of type t.
func encodeValue(t string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if p, ok := v.(*decimal.Decimal); ok {
		if p == nil {
			return nil, nil
		}
		v = *p
	}
	switch t {
	case TypeInt, TypeUint, TypeFloat:
		return number(v)
	case TypeDecimal:
		switch x := v.(type) {
		case decimal.Decimal:
			return decimalString(x), nil
		case string:
			return x, nil
		}
		n, err := number(v)
		if err != nil {
			return nil, err
		}
		if num, ok := n.(json.Number); ok {
			return num.String(), nil
		}
		return fmt.Sprint(n), nil
	case TypeBytes:
		switch x := v.(type) {
		case []byte:
			return base64.StdEncoding.EncodeToString(x), nil
		case string:
			return base64.StdEncoding.EncodeToString([]byte(x)), nil
		}
		return base64.StdEncoding.EncodeToString([]byte(stringOf(v))), nil
	case TypeTime:
		if x, ok := v.(time.Time); ok {
			return x.UTC().Format(time.RFC3339Nano), nil
		}
		return stringOf(v), nil
	case TypeJSON:
		switch x := v.(type) {
		case jsonDoc:
			return x.ToInterface()
		case json.RawMessage:
			return x, nil
		case []byte:
			if json.Valid(x) {
				return json.RawMessage(x), nil
			}
			return string(x), nil
		}
		return v, nil
	default: // string
		return stringOf(v), nil
	}
}

func stringOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case decimal.Decimal:
		return decimalString(x)
	case jsonDoc:
		i, err := x.ToInterface()
		if err == nil {
			if b, err := json.Marshal(i); err == nil {
				return string(b)
			}
		}
	}
	return fmt.Sprint(v)
}

func number(v any) (any, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 32)), nil
	case float64:
		return finite(x), nil
	case decimal.Decimal:
		return json.Number(decimalString(x)), nil
	case string:
		if _, err := strconv.ParseFloat(x, 64); err == nil {
			return json.Number(x), nil
		}
		return x, nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), nil
	}
	return stringOf(v), nil
}

// finite maps NaN and ±Inf (not representable in JSON) to null.
func finite(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return f
}

// decimalString keeps the value's scale (a DECIMAL(10,2) 12.30 stays
// "12.30"; decimal.Decimal.String would trim it to "12.3").
func decimalString(d decimal.Decimal) string {
	if e := d.Exponent(); e < 0 {
		return d.StringFixed(-e)
	}
	return d.String()
}
