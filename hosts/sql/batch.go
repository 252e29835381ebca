package sqlhost

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weft-dev/weft/sdk/abi"
)

// MaxBatch is the most statements one weft_sql_v2 request may hold.
const MaxBatch = 4096

// HandleBatch serves one weft_sql_v2 request (docs/abi.md, "weft_sql_v2":
// several statements, the compact binary encoding of sdk/abi) and returns
// the response. Each statement goes through exactly the path of a
// weft_sql_v1 request (Handle): the table policy, the executor, the error
// kinds. Statements run in order and the batch stops at the first that
// fails, whose error result is the last; a malformed request (an
// abi.ErrSQLWire, more than MaxBatch statements) is one "other" error
// result and runs nothing. It never fails otherwise.
func (h *Handler) HandleBatch(ctx context.Context, req []byte) []byte {
	stmts, err := abi.DecodeSQLBatch(req)
	if err != nil {
		return abi.SQLFailure(KindOther, "malformed sql batch: "+err.Error())
	}
	if len(stmts) > MaxBatch {
		return abi.SQLFailure(KindOther, fmt.Sprintf("malformed sql batch: %d statements, at most %d", len(stmts), MaxBatch))
	}
	var w abi.SQLResultsWriter
	for _, s := range stmts {
		if !h.serveOne(ctx, &w, s) {
			break
		}
	}
	return w.Bytes()
}

// serveOne runs one statement of a batch and appends its result; false
// when it failed (its error result appended).
func (h *Handler) serveOne(ctx context.Context, w *abi.SQLResultsWriter, s abi.SQLStatement) bool {
	for i, a := range s.Args {
		switch x := a.(type) {
		case abi.Decimal:
			d, err := decimal.NewFromString(string(x))
			if err != nil {
				w.Fail(KindTypeMismatch, fmt.Sprintf("argument %d: decimal: %v", i+1, err))
				return false
			}
			s.Args[i] = d
		case abi.JSONText:
			s.Args[i] = string(x)
		}
	}
	rows, res, reply := h.run(ctx, s.SQL, s.Args)
	if reply != nil {
		w.Fail(reply.Kind, reply.Message)
		return false
	}
	if rows == nil {
		w.Rows(nil, nil, 0)
		w.Done(res.RowsAffected, res.LastInsertID)
		return true
	}
	at, n := w.Mark()
	if err := writeRows(w, rows); err != nil {
		w.Rewind(at, n)
		w.Fail(KindOther, err.Error())
		return false
	}
	w.Done(0, 0)
	return true
}

// run is one statement of either wire: the policy check, then the
// executor's Query (rows) or Exec (res); reply is set when it was refused
// or failed.
func (h *Handler) run(ctx context.Context, q string, args []any) (rows *Rows, res Result, reply *ErrorReply) {
	kind, err := h.Policy.checkKeyed(h.policyKey(), q)
	if err != nil {
		var de *DeniedError
		if errors.As(err, &de) {
			if h.OnDenied != nil {
				h.OnDenied(de)
			}
			return nil, res, &ErrorReply{Kind: KindDenied, Message: de.Error()}
		}
		return nil, res, &ErrorReply{Kind: KindSyntax, Message: err.Error()}
	}
	if h.Exec == nil {
		return nil, res, &ErrorReply{Kind: KindOther, Message: "no SQL executor bound to this call"}
	}
	if kind == KindExec {
		res, err = h.Exec.Exec(ctx, q, args...)
		if err != nil {
			return nil, res, h.failed(err).Error
		}
		return nil, res, nil
	}
	rows, err = h.Exec.Query(ctx, q, args...)
	if err != nil {
		return nil, res, h.failed(err).Error
	}
	if rows == nil {
		rows = &Rows{}
	}
	return rows, res, nil
}

// writeRows appends a query's result: each column's type code from its
// first non-NULL value, each cell by its own Go value (cellValue).
func writeRows(w *abi.SQLResultsWriter, r *Rows) error {
	n := len(r.Columns)
	tags := make([]byte, n)
	for j := range n {
		for _, row := range r.Values {
			if j < len(row) && row[j] != nil {
				tags[j] = tagOf(row[j])
				break
			}
		}
	}
	w.Rows(r.Columns, tags, len(r.Values))
	for _, row := range r.Values {
		for j := range n {
			var v any
			if j < len(row) {
				v = row[j]
			}
			cv, err := cellValue(v)
			if err == nil {
				err = w.Cell(cv)
			}
			if err != nil {
				return fmt.Errorf("column %s: %v", r.Columns[j], err)
			}
		}
	}
	return nil
}

// tagOf is the type code of a non-NULL value (TypeOf's type).
func tagOf(v any) byte {
	switch TypeOf(v) {
	case TypeInt:
		return abi.SQLTagInt
	case TypeUint:
		return abi.SQLTagUint
	case TypeFloat:
		return abi.SQLTagFloat
	case TypeDecimal:
		return abi.SQLTagDecimal
	case TypeBytes:
		return abi.SQLTagBytes
	case TypeTime:
		return abi.SQLTagTime
	case TypeJSON:
		return abi.SQLTagJSON
	case TypeNull:
		return abi.SQLTagNull
	}
	return abi.SQLTagString
}

// cellValue maps an executor value to what abi.AppendSQLValue encodes:
// bool as 0/1, a decimal as its text keeping its scale, a JSON document as
// its JSON text, NaN/±Inf floats as NULL (as weft_sql_v1 does), anything
// else unknown as its string form.
func cellValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, int, int8, int16, int32, uint64, uint, uint8, uint16, uint32, string, []byte:
		return x, nil
	case float64:
		return finite(x), nil
	case float32:
		return finite(float64(x)), nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		return x.UTC(), nil
	case decimal.Decimal:
		return abi.Decimal(decimalString(x)), nil
	case *decimal.Decimal:
		if x == nil {
			return nil, nil
		}
		return abi.Decimal(decimalString(*x)), nil
	case json.RawMessage:
		return abi.JSONText(x), nil
	case jsonDoc:
		i, err := x.ToInterface()
		if err != nil || i == nil {
			return nil, err // a JSON null reads as NULL, as in weft_sql_v1
		}
		return jsonText(i)
	case map[string]any, []any:
		return jsonText(x)
	}
	return stringOf(v), nil
}

// jsonText is v's JSON text as weft_sql_v1 writes it (no HTML escaping).
func jsonText(v any) (any, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return abi.JSONText(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), nil
}
