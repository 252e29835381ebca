package plugin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"time"

	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// ValueOf converts a Go value (nil, bool, integers, floats, json.Number,
// string, []byte, time.Time, a fmt.Stringer such as a decimal, []any,
// map[string]any) to a *Value: integers as int_value, unsigned above
// MaxInt64, times (RFC 3339, UTC) and Stringers as their exact text; any
// other type through its encoding/json form (typed slices and maps,
// structs). Errors: a value encoding/json cannot write (channels, funcs).
func ValueOf(v any) (*pb.Value, error) {
	switch x := v.(type) {
	case nil:
		return &pb.Value{Kind: &pb.Value_NullValue{NullValue: true}}, nil
	case bool:
		return &pb.Value{Kind: &pb.Value_BoolValue{BoolValue: x}}, nil
	case int:
		return intValue(int64(x)), nil
	case int8:
		return intValue(int64(x)), nil
	case int16:
		return intValue(int64(x)), nil
	case int32:
		return intValue(int64(x)), nil
	case int64:
		return intValue(x), nil
	case uint8:
		return intValue(int64(x)), nil
	case uint16:
		return intValue(int64(x)), nil
	case uint32:
		return intValue(int64(x)), nil
	case uint64:
		if x > math.MaxInt64 {
			return &pb.Value{Kind: &pb.Value_StringValue{StringValue: fmt.Sprint(x)}}, nil
		}
		return intValue(int64(x)), nil
	case float32:
		return &pb.Value{Kind: &pb.Value_DoubleValue{DoubleValue: float64(x)}}, nil
	case float64:
		return &pb.Value{Kind: &pb.Value_DoubleValue{DoubleValue: x}}, nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return intValue(i), nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, fmt.Errorf("weft plugin: JSON number %q: %w", x, err)
		}
		return &pb.Value{Kind: &pb.Value_DoubleValue{DoubleValue: f}}, nil
	case string:
		return &pb.Value{Kind: &pb.Value_StringValue{StringValue: x}}, nil
	case []byte:
		return &pb.Value{Kind: &pb.Value_BytesValue{BytesValue: x}}, nil
	case time.Time:
		return &pb.Value{Kind: &pb.Value_StringValue{StringValue: x.UTC().Format(time.RFC3339Nano)}}, nil
	case fmt.Stringer: // decimal.Decimal and friends: exact text
		return &pb.Value{Kind: &pb.Value_StringValue{StringValue: x.String()}}, nil
	case []any:
		l, err := ListOf(x)
		if err != nil {
			return nil, err
		}
		return &pb.Value{Kind: &pb.Value_ListValue{ListValue: l}}, nil
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		o := &pb.ValueObject{Fields: make([]*pb.ObjectField, 0, len(x))}
		for _, k := range keys {
			pv, err := ValueOf(x[k])
			if err != nil {
				return nil, fmt.Errorf("weft plugin: field %q: %w", k, err)
			}
			o.Fields = append(o.Fields, &pb.ObjectField{Key: k, Value: pv})
		}
		return &pb.Value{Kind: &pb.Value_ObjectValue{ObjectValue: o}}, nil
	}
	// Anything else that encoding/json can write (typed slices and maps,
	// structs): through its JSON.
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("weft plugin: no protocol value for %T: %w", v, err)
	}
	return JSONValue(b)
}

func intValue(i int64) *pb.Value { return &pb.Value{Kind: &pb.Value_IntValue{IntValue: i}} }

// ListOf converts a row or JSON array.
func ListOf(xs []any) (*pb.ValueList, error) {
	l := &pb.ValueList{Values: make([]*pb.Value, len(xs))}
	for i, e := range xs {
		pv, err := ValueOf(e)
		if err != nil {
			return nil, fmt.Errorf("weft plugin: item %d: %w", i, err)
		}
		l.Values[i] = pv
	}
	return l, nil
}

// GoValue converts a *Value back: nil (also for a nil *pb.Value), bool, int64,
// float64, string, []byte, []any, map[string]any.
func GoValue(v *pb.Value) any {
	switch x := v.GetKind().(type) {
	case *pb.Value_BoolValue:
		return x.BoolValue
	case *pb.Value_IntValue:
		return x.IntValue
	case *pb.Value_DoubleValue:
		return x.DoubleValue
	case *pb.Value_StringValue:
		return x.StringValue
	case *pb.Value_BytesValue:
		return x.BytesValue
	case *pb.Value_ListValue:
		return GoList(x.ListValue)
	case *pb.Value_ObjectValue:
		m := make(map[string]any, len(x.ObjectValue.GetFields()))
		for _, f := range x.ObjectValue.GetFields() {
			m[f.GetKey()] = GoValue(f.GetValue())
		}
		return m
	}
	return nil
}

// GoList converts a list back ([]any, never nil).
func GoList(l *pb.ValueList) []any {
	out := make([]any, len(l.GetValues()))
	for i, e := range l.GetValues() {
		out[i] = GoValue(e)
	}
	return out
}

// JSONValue converts JSON text to a *Value (integers as int_value, object
// fields in their order in the text); empty text is a nil Value (absent).
// Errors: text that is not one JSON value.
func JSONValue(text []byte) (*pb.Value, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	v, err := decodeJSON(dec)
	if err != nil {
		return nil, fmt.Errorf("weft plugin: JSON value: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("weft plugin: JSON value: trailing data")
	}
	return v, nil
}

// decodeJSON reads one value from dec's token stream.
func decodeJSON(dec *json.Decoder) (*pb.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			l := &pb.ValueList{}
			for dec.More() {
				e, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				l.Values = append(l.Values, e)
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return &pb.Value{Kind: &pb.Value_ListValue{ListValue: l}}, nil
		case '{':
			o := &pb.ValueObject{}
			seen := map[string]int{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				e, err := decodeJSON(dec)
				if err != nil {
					return nil, err
				}
				if i, dup := seen[k]; dup { // last one wins, as encoding/json
					o.Fields[i].Value = e
					continue
				}
				seen[k] = len(o.Fields)
				o.Fields = append(o.Fields, &pb.ObjectField{Key: k, Value: e})
			}
			if _, err := dec.Token(); err != nil {
				return nil, err
			}
			return &pb.Value{Kind: &pb.Value_ObjectValue{ObjectValue: o}}, nil
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return ValueOf(t)
	}
}

// ValueJSON converts a *Value to compact JSON text, object fields in
// their order; nil for an absent Value. Bytes become base64 strings (as
// encoding/json writes []byte).
func ValueJSON(v *pb.Value) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v *pb.Value) error {
	switch x := v.GetKind().(type) {
	case *pb.Value_ListValue:
		b.WriteByte('[')
		for i, e := range x.ListValue.GetValues() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	case *pb.Value_ObjectValue:
		b.WriteByte('{')
		for i, f := range x.ObjectValue.GetFields() {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeScalar(b, f.GetKey()); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := writeJSON(b, f.GetValue()); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	return writeScalar(b, GoValue(v))
}

// writeScalar writes v as JSON without HTML escaping (prompts show it).
func writeScalar(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("weft plugin: JSON of value: %w", err)
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// DecodeValue decodes v (e.g. RunEpisodeRequest.Settings) into dst as
// encoding/json would decode its JSON, rejecting unknown fields; an absent
// v leaves dst unchanged.
func DecodeValue(v *pb.Value, dst any) error {
	if v == nil {
		return nil
	}
	b, err := ValueJSON(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// MustJSONValue is JSONValue for constant JSON (schemas): it panics on bad
// JSON.
func MustJSONValue(text string) *pb.Value {
	v, err := JSONValue([]byte(text))
	if err != nil {
		panic(err)
	}
	return v
}

// SettingsJSON returns settings (RunEpisodeRequest.Settings and the like)
// as JSON text for a strict JSON decoder: "" when absent.
func SettingsJSON(settings *pb.Value) string {
	b, err := ValueJSON(settings)
	if err != nil {
		return ""
	}
	return string(b)
}
