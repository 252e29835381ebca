package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	pb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// Value converts a Go value to a *pb.Value. Errors: a type with no
// protocol form (channels, funcs, structs).
func Value(v any) (*pb.Value, error) {
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
			return nil, fmt.Errorf("wire: JSON number %q: %w", x, err)
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
		l, err := List(x)
		if err != nil {
			return nil, err
		}
		return &pb.Value{Kind: &pb.Value_ListValue{ListValue: l}}, nil
	case map[string]any:
		o := &pb.ValueObject{Fields: make(map[string]*pb.Value, len(x))}
		for k, e := range x {
			pv, err := Value(e)
			if err != nil {
				return nil, fmt.Errorf("wire: field %q: %w", k, err)
			}
			o.Fields[k] = pv
		}
		return &pb.Value{Kind: &pb.Value_ObjectValue{ObjectValue: o}}, nil
	}
	return nil, fmt.Errorf("wire: no protocol value for %T", v)
}

func intValue(i int64) *pb.Value { return &pb.Value{Kind: &pb.Value_IntValue{IntValue: i}} }

// List converts a row or JSON array.
func List(xs []any) (*pb.ValueList, error) {
	l := &pb.ValueList{Values: make([]*pb.Value, len(xs))}
	for i, e := range xs {
		pv, err := Value(e)
		if err != nil {
			return nil, fmt.Errorf("wire: item %d: %w", i, err)
		}
		l.Values[i] = pv
	}
	return l, nil
}

// FromValue converts back: nil (also for a nil *pb.Value), bool, int64,
// float64, string, []byte, []any, map[string]any.
func FromValue(v *pb.Value) any {
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
		return FromList(x.ListValue)
	case *pb.Value_ObjectValue:
		m := make(map[string]any, len(x.ObjectValue.GetFields()))
		for k, e := range x.ObjectValue.GetFields() {
			m[k] = FromValue(e)
		}
		return m
	}
	return nil
}

// FromList converts a list back ([]any, never nil).
func FromList(l *pb.ValueList) []any {
	out := make([]any, len(l.GetValues()))
	for i, e := range l.GetValues() {
		out[i] = FromValue(e)
	}
	return out
}

// JSON converts JSON text to a *pb.Value (integers as int_value); empty
// text is a nil Value (absent). Errors: text that is not one JSON value.
func JSON(text []byte) (*pb.Value, error) {
	if len(bytes.TrimSpace(text)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("wire: JSON value: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("wire: JSON value: trailing data")
	}
	return Value(v)
}

// ToJSON converts a *pb.Value to compact JSON text with object keys
// sorted; nil for an absent Value. Bytes become base64 strings (as
// encoding/json writes []byte).
func ToJSON(v *pb.Value) (json.RawMessage, error) {
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
		keys := make([]string, 0, len(x.ObjectValue.GetFields()))
		for k := range x.ObjectValue.GetFields() {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			if err := writeJSON(b, x.ObjectValue.GetFields()[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	e, err := json.Marshal(FromValue(v))
	if err != nil {
		return fmt.Errorf("wire: JSON of value: %w", err)
	}
	b.Write(e)
	return nil
}
