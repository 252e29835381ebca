package interp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"go.starlark.net/starlark"
)

// decodeJSON decodes one JSON value into Starlark values keeping object
// member order (so iteration over a decoded dict is deterministic): object
// -> dict, array -> list, integral number -> int, other number -> float,
// string, bool, null -> None.
func decodeJSON(b []byte) (starlark.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

const maxDepth = 256

func decodeValue(dec *json.Decoder, depth int) (starlark.Value, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("JSON nested deeper than %d", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := starlark.NewDict(0)
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				if err := d.SetKey(starlark.String(k), v); err != nil {
					return nil, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return d, nil
		case '[':
			var l []starlark.Value
			for dec.More() {
				v, err := decodeValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l = append(l, v)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return starlark.NewList(l), nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return starlark.String(t), nil
	case bool:
		return starlark.Bool(t), nil
	case nil:
		return starlark.None, nil
	case json.Number:
		return numberValue(string(t))
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// numberValue is a JSON number as an int when it is integral (1, 1.0,
// 1e3) and a float otherwise.
func numberValue(s string) (starlark.Value, error) {
	if i, ok := new(big.Int).SetString(s, 10); ok {
		return starlark.MakeBigInt(i), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("number %s: %v", s, err)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return starlark.MakeInt64(int64(f)), nil
	}
	return starlark.Float(f), nil
}

func parseFloat(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("decimal %q: %v", s, err)
	}
	return f, nil
}

// encodeValue writes a Starlark value as JSON: dict (string keys, in
// insertion order) -> object, list and tuple -> array, int, float (finite;
// integral floats keep a ".0"), string, bool, None -> null.
func encodeValue(v starlark.Value) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeValue(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeValue(buf *bytes.Buffer, v starlark.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("value nested deeper than %d", maxDepth)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		buf.WriteString("null")
	case starlark.Bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case starlark.Int:
		buf.WriteString(x.String())
	case starlark.Float:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%v has no JSON form", f)
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if f == math.Trunc(f) && math.Abs(f) < 1e21 {
			s = strconv.FormatFloat(f, 'f', 1, 64)
		}
		buf.WriteString(s)
	case starlark.String:
		b, err := json.Marshal(string(x))
		if err != nil {
			return err
		}
		buf.Write(b)
	case *starlark.Dict:
		buf.WriteByte('{')
		for i, it := range x.Items() {
			k, ok := it[0].(starlark.String)
			if !ok {
				return fmt.Errorf("dict key %s is a %s, not a string", it[0], it[0].Type())
			}
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := json.Marshal(string(k))
			buf.Write(kb)
			buf.WriteByte(':')
			if err := writeValue(buf, it[1], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case starlark.Indexable: // list, tuple
		buf.WriteByte('[')
		for i := range x.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeValue(buf, x.Index(i), depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	default:
		return fmt.Errorf("a %s has no JSON form", v.Type())
	}
	return nil
}
