package abi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// FuzzDecodeResponse checks the SDK's own SQL-response scanner against
// encoding/json: whatever it accepts, encoding/json accepts with the same
// meaning; whatever encoding/json rejects, it rejects (or defers to
// encoding/json through errFallback).
func FuzzDecodeResponse(f *testing.F) {
	for _, s := range []string{
		`{"columns":["order_id","total"],"types":["string","float"],"rows":[["#W1",12.5]],"rows_affected":0,"last_insert_id":0,"error":null}`,
		`{"columns":["a"],"types":["json"],"rows":[[{"k":[1,{"x":null}]}],["h\u00e9\"llo\n"]]}`,
		`{"rows":[null,[1]],"error":{"kind":"other","message":"m"}}`,
		`{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got SQLResponse[json.RawMessage]
		err := decodeResponse(data, &got)
		if err == errFallback {
			return
		}
		var want SQLResponse[json.RawMessage]
		werr := json.Unmarshal(data, &want)
		if err != nil {
			return // stricter than encoding/json is allowed
		}
		if werr != nil {
			t.Fatalf("scanner accepted what encoding/json rejects (%v): %q", werr, data)
		}
		norm := func(r *SQLResponse[json.RawMessage]) {
			for _, row := range r.Rows {
				for j, c := range row {
					var v any
					_ = json.Unmarshal(c, &v)
					row[j], _ = json.Marshal(v)
				}
			}
		}
		norm(&want)
		norm(&got)
		if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
			t.Fatalf("%q: (-encoding/json +scanner)\n%s", data, d)
		}
	})
}
