package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// Values model Python's JSON-shaped objects: *Dict (an insertion-ordered
// dict with string keys, as Python dicts keep order), []any, string,
// bool, nil and numbers (json.Number as decoded, int64 and float64 as
// computed).

// Dict is an insertion-ordered string-keyed map.
type Dict struct {
	keys []string
	m    map[string]any
}

func newDict() *Dict { return &Dict{m: map[string]any{}} }

// dict builds a Dict from alternating keys and values.
func dict(kv ...any) *Dict {
	d := newDict()
	for i := 0; i+1 < len(kv); i += 2 {
		d.Set(kv[i].(string), kv[i+1])
	}
	return d
}

func (d *Dict) Get(k string) (any, bool) {
	v, ok := d.m[k]
	return v, ok
}

// G is Get without the presence flag.
func (d *Dict) G(k string) any { return d.m[k] }

func (d *Dict) Has(k string) bool { _, ok := d.m[k]; return ok }

func (d *Dict) Set(k string, v any) {
	if _, ok := d.m[k]; !ok {
		d.keys = append(d.keys, k)
	}
	d.m[k] = v
}

func (d *Dict) Del(k string) {
	if _, ok := d.m[k]; !ok {
		return
	}
	delete(d.m, k)
	for i, x := range d.keys {
		if x == k {
			d.keys = append(d.keys[:i:i], d.keys[i+1:]...)
			break
		}
	}
}

func (d *Dict) Keys() []string { return append([]string(nil), d.keys...) }
func (d *Dict) Len() int       { return len(d.keys) }

// Values in insertion order.
func (d *Dict) Values() []any {
	out := make([]any, len(d.keys))
	for i, k := range d.keys {
		out[i] = d.m[k]
	}
	return out
}

func (d *Dict) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range d.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(d.m[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes a value as JSON without HTML escaping; floats that are
// not finite are an error (Python's json would write NaN).
func marshal(v any) ([]byte, error) {
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("non-finite number %v", f)
		}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// decodeValue decodes JSON keeping object key order (as *Dict) and numbers
// as json.Number.
func decodeValue(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeNext(dec)
	if err != nil {
		return nil, err
	}
	// Only white space may follow (dec.More is false at a stray '}').
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func decodeNext(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := newDict()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeNext(dec)
				if err != nil {
					return nil, err
				}
				d.Set(kt.(string), v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return d, nil
		case '[':
			l := []any{}
			for dec.More() {
				v, err := decodeNext(dec)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return l, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return tok, nil
	}
}

// deepCopy copies a value (Python's copy.deepcopy of JSON data).
func deepCopy(v any) any {
	switch x := v.(type) {
	case *Dict:
		d := &Dict{keys: append([]string(nil), x.keys...), m: make(map[string]any, len(x.m))}
		for k, e := range x.m {
			d.m[k] = deepCopy(e)
		}
		return d
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}

// num returns a number value as float64 and whether it is a number
// (bools are not).
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// isInt reports whether v is a Python int (not a float, not a bool).
func isInt(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return !strings.ContainsAny(string(x), ".eE")
	case int64, int:
		return true
	}
	return false
}

func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, true
		}
		f, err := x.Float64()
		return int64(f), err == nil
	case int64:
		return x, true
	case int:
		return int64(x), true
	case float64:
		return int64(x), true
	}
	return 0, false
}

// pyEq is Python == on JSON-shaped values (numbers by value).
func pyEq(a, b any) bool {
	if fa, ok := num(a); ok {
		if fb, ok := num(b); ok {
			return fa == fb
		}
		if bb, ok := b.(bool); ok {
			return fa == b2f(bb)
		}
		return false
	}
	if ab, ok := a.(bool); ok {
		if fb, ok := num(b); ok {
			return b2f(ab) == fb
		}
	}
	switch x := a.(type) {
	case *Dict:
		y, ok := b.(*Dict)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.keys {
			w, ok := y.m[k]
			if !ok || !pyEq(x.m[k], w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEq(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// truthy is Python's bool(v).
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *Dict:
		return x.Len() > 0
	}
	if f, ok := num(v); ok {
		return f != 0
	}
	return true
}

// Renderings (str(), repr(), float repr, round) are sdk/pyvalue's
// StrAny, ReprAny, FloatRepr and Round; *Dict is a pyvalue.Mapping.
var _ pyvalue.Mapping = (*Dict)(nil)

func str(v any) (string, bool) { s, ok := v.(string); return s, ok }

func list(v any) ([]any, bool) { l, ok := v.([]any); return l, ok }
