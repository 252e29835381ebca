package state

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha512"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// sentinel marks the open ends of a composite key used as a seek pivot: the
// minimum sorts before every value including NULL, the maximum after all.
type sentinel int8

const (
	minKey sentinel = -1
	maxKey sentinel = 1
)

// colCmp orders two stored, non-NULL values of one column.
type colCmp func(a, b any) int

// makeColCmp returns the comparison for values of typ, with fast paths for the
// common Go representations and the column type's own collation-aware
// comparison otherwise.
func makeColCmp(typ sql.Type) colCmp {
	binaryStrings := false
	if st, ok := typ.(sql.StringType); ok {
		c := st.Collation()
		binaryStrings = c == sql.Collation_binary || c == sql.Collation_utf8mb4_0900_bin || c == sql.Collation_utf8mb4_bin
	}
	return func(a, b any) int {
		switch x := a.(type) {
		case int64:
			if y, ok := b.(int64); ok {
				return cmp.Compare(x, y)
			}
		case int32:
			if y, ok := b.(int32); ok {
				return cmp.Compare(x, y)
			}
		case uint64:
			if y, ok := b.(uint64); ok {
				return cmp.Compare(x, y)
			}
		case string:
			if y, ok := b.(string); ok && binaryStrings {
				return strings.Compare(x, y)
			}
		case float64:
			if y, ok := b.(float64); ok {
				return cmp.Compare(x, y)
			}
		case decimal.Decimal:
			if y, ok := b.(decimal.Decimal); ok {
				return x.Cmp(y)
			}
		}
		c, err := typ.Compare(context.Background(), a, b)
		if err != nil {
			// Stored values are converted to the column type on write, so this
			// is unreachable for well-formed data; order by representation
			// to stay total rather than panic.
			return strings.Compare(fmt.Sprintf("%T%v", a, a), fmt.Sprintf("%T%v", b, b))
		}
		return c
	}
}

// rank orders sentinels and NULL around ordinary values.
func rank(v any) int {
	switch v := v.(type) {
	case sentinel:
		return int(v) * 2
	case nil:
		return -1
	}
	return 0
}

// tupleCmp orders composite keys column by column with NULL first.
func tupleCmp(cmps []colCmp) func(a, b []any) int {
	return func(a, b []any) int {
		for i, c := range cmps {
			x, y := a[i], b[i]
			rx, ry := rank(x), rank(y)
			if rx != 0 || ry != 0 {
				if rx != ry {
					return cmp.Compare(rx, ry)
				}
				continue
			}
			if r := c(x, y); r != 0 {
				return r
			}
		}
		return 0
	}
}

// normalize unwraps lazily loaded values so stored rows hold plain values.
func normalize(ctx context.Context, v any) (any, error) {
	if w, ok := v.(sql.AnyWrapper); ok {
		return w.UnwrapAny(ctx)
	}
	return v, nil
}

// canonicalJSON renders a JSON column value with sorted object keys.
func canonicalJSON(v any) ([]byte, error) {
	if w, ok := v.(sql.JSONWrapper); ok {
		x, err := w.ToInterface()
		if err != nil {
			return nil, err
		}
		v = x
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// appendCanonical appends the canonical, type-tagged encoding of one stored
// value of column col. Equal values encode equally whatever path produced them
// (decimals at the column's scale, times in UTC, JSON with sorted keys).
func appendCanonical(b []byte, col *sql.Column, v any) []byte {
	appendBytes := func(tag byte, s []byte) []byte {
		b = append(b, tag)
		b = binary.AppendUvarint(b, uint64(len(s)))
		return append(b, s...)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 0)
	case int8:
		return binary.BigEndian.AppendUint64(append(b, 1), uint64(int64(x)))
	case int16:
		return binary.BigEndian.AppendUint64(append(b, 1), uint64(int64(x)))
	case int32:
		return binary.BigEndian.AppendUint64(append(b, 1), uint64(int64(x)))
	case int64:
		return binary.BigEndian.AppendUint64(append(b, 1), uint64(x))
	case int:
		return binary.BigEndian.AppendUint64(append(b, 1), uint64(int64(x)))
	case uint8:
		return binary.BigEndian.AppendUint64(append(b, 2), uint64(x))
	case uint16:
		return binary.BigEndian.AppendUint64(append(b, 2), uint64(x))
	case uint32:
		return binary.BigEndian.AppendUint64(append(b, 2), uint64(x))
	case uint64:
		return binary.BigEndian.AppendUint64(append(b, 2), x)
	case float32:
		return binary.BigEndian.AppendUint64(append(b, 3), math.Float64bits(float64(x)+0))
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 3), math.Float64bits(x+0))
	case decimal.Decimal:
		return appendBytes(4, []byte(decimalString(col, x)))
	case string:
		return appendBytes(5, []byte(x))
	case []byte:
		return appendBytes(6, x)
	case time.Time:
		u := x.UTC()
		b = binary.BigEndian.AppendUint64(append(b, 7), uint64(u.Unix()))
		return binary.BigEndian.AppendUint32(b, uint32(u.Nanosecond()))
	case sql.JSONWrapper:
		j, err := canonicalJSON(x)
		if err != nil {
			j = []byte(fmt.Sprint(x))
		}
		return appendBytes(8, j)
	}
	return appendBytes(9, []byte(fmt.Sprintf("%T:%v", v, v)))
}

func decimalString(col *sql.Column, d decimal.Decimal) string {
	if col != nil {
		if dt, ok := col.Type.(sql.DecimalType); ok {
			return d.StringFixed(int32(dt.Scale()))
		}
	}
	return d.String()
}

// lanes is an additive multiset hash (the LtHash construction of Bellare and
// Micciancio's AdHash family, with 8 lanes of 64 bits): the hash of a table is
// the lane-wise sum mod 2^64 of SHA-512(canonical row) over its rows, so it is
// independent of insertion order and is updated in O(1) per changed row.
type lanes [8]uint64

func rowDigest(schema sql.Schema, row sql.Row) lanes {
	buf := make([]byte, 0, 128)
	for i, v := range row {
		buf = appendCanonical(buf, schema[i], v)
	}
	sum := sha512.Sum512(buf)
	var l lanes
	for i := range l {
		l[i] = binary.BigEndian.Uint64(sum[i*8:])
	}
	return l
}

func (l lanes) add(o lanes) lanes {
	for i := range l {
		l[i] += o[i]
	}
	return l
}

func (l lanes) sub(o lanes) lanes {
	for i := range l {
		l[i] -= o[i]
	}
	return l
}

// rowsEqual compares two stored rows of one table column by column.
func rowsEqual(schema sql.Schema, cmps []colCmp, a, b sql.Row) bool {
	if len(a) > 0 && len(b) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		x, y := a[i], b[i]
		if x == nil || y == nil {
			if x != y {
				return false
			}
			continue
		}
		if types.IsJSON(schema[i].Type) {
			jx, _ := canonicalJSON(x)
			jy, _ := canonicalJSON(y)
			if !bytes.Equal(jx, jy) {
				return false
			}
			continue
		}
		if cmps[i](x, y) != 0 {
			return false
		}
		// Collations may equate distinct strings; the state must not.
		if sx, ok := x.(string); ok {
			if sy, ok := y.(string); !ok || sx != sy {
				return false
			}
		}
	}
	return true
}
