package abi

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// decodeValueJSON is what DecodeValue stands for: encoding/json's Decoder
// with UseNumber, nothing but whitespace after the value.
func decodeValueJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errSyntax
	}
	return v, nil
}

// FuzzDecodeValue: whatever DecodeValue accepts, encoding/json decodes to
// the same value.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{
		`{"order_id":"#W2417020"}`,
		`{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`,
		` {"a":[1,-2.5e+3,0,true,false,null,{"b":{}}],"a":"x\u00e9\n\"\\"} `,
		`{"k":"\ud83d\ude00"}`,
		`[01]`,
		`{"a":1} x`,
		`{"a":1}}`,
		"{\"a\":\"\xff\"}",
		`1e400`,
		`""`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := DecodeValue(data)
		if !ok {
			return
		}
		want, err := decodeValueJSON(data)
		if err != nil {
			t.Fatalf("DecodeValue accepted %q, encoding/json: %v", data, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%q (-json +DecodeValue):\n%s", data, d)
		}
	})
}

func TestDecodeValue(t *testing.T) {
	v, ok := DecodeValue([]byte(`{"ids":["a","b"],"n":1.50,"x":null,"t":true,"s":"\"q\""}`))
	want := map[string]any{"ids": []any{"a", "b"}, "n": json.Number("1.50"), "x": nil, "t": true, "s": `"q"`}
	if !ok || !cmp.Equal(v, want) {
		t.Fatalf("DecodeValue = %#v, %v", v, ok)
	}
	for _, bad := range []string{`{"a":1} x`, `[01]`, `{"a"}`, "\"\xff\"", `"\udc00"`, ``} {
		if v, ok := DecodeValue([]byte(bad)); ok {
			t.Errorf("DecodeValue(%q) = %#v, want left to encoding/json", bad, v)
		}
	}
}
