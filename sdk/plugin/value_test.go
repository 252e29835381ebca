package plugin_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/sdk/plugin"
)

func TestJSONValueKeepsOrderAndInts(t *testing.T) {
	in := `{"type":"object","properties":{"order_id":{"type":"string","description":"<id> & more"},"reason":{"type":"string"}},"required":["order_id"],"n":9007199254740993,"f":2.5,"z":null,"b":true}`
	v, err := plugin.JSONValue([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := plugin.ValueJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("ValueJSON(JSONValue(x)) =\n%s\nwant\n%s", out, in)
	}
	if _, err := plugin.JSONValue([]byte(`{"a":1} {}`)); err == nil {
		t.Error("two values: nil error")
	}
	if _, err := plugin.JSONValue([]byte(`{"a":`)); err == nil {
		t.Error("truncated: nil error")
	}
	if v, err := plugin.JSONValue(nil); v != nil || err != nil {
		t.Errorf("empty: %v %v", v, err)
	}
}

func TestValueOfRoundTrip(t *testing.T) {
	in := map[string]any{"id": int64(9007199254740993), "f": 1.5, "s": "x", "b": []byte{0, 1}, "n": nil, "t": true,
		"l": []any{int64(1), "a", map[string]any{"k": false}}}
	v, err := plugin.ValueOf(in)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(any(in), plugin.GoValue(v)); d != "" {
		t.Errorf("round trip (-in +out):\n%s", d)
	}
	if _, err := plugin.ValueOf(make(chan int)); err == nil {
		t.Error("ValueOf(chan): nil error")
	}
	if v, err := plugin.ValueOf([]string{"a", "b"}); err != nil || !cmp.Equal(plugin.GoValue(v), any([]any{"a", "b"})) {
		t.Errorf("ValueOf([]string) = %v, %v", plugin.GoValue(v), err)
	}
	var s struct {
		A int `json:"a"`
	}
	if err := plugin.DecodeValue(plugin.MustJSONValue(`{"a": 3}`), &s); err != nil || s.A != 3 {
		t.Errorf("DecodeValue: %v %+v", err, s)
	}
	if err := plugin.DecodeValue(plugin.MustJSONValue(`{"b": 3}`), &s); err == nil {
		t.Error("DecodeValue of an unknown field: nil error")
	}
}
