package abi

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDecodeResponseMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{"columns":["order_id","total"],"types":["string","float"],"rows":[["#W1",12.5]],"rows_affected":0,"last_insert_id":0,"error":null}`,
		`{"columns":[],"types":[],"rows":[],"rows_affected":3,"last_insert_id":7,"error":null}`,
		` { "columns" : [ "a" , "b" ] , "types" : ["json","string"], "rows" : [ [ {"k": [1, 2, {"x": null}]} , "h\u00e9\"llo\n" ], [null, "ü"], [ [], "" ] ] } `,
		`{"columns":["n"],"types":["int"],"rows":[[-1.5e+10],[0],[18446744073709551615]],"error":{"kind":"other","message":"m"}}`,
		`{"columns":null,"types":null,"rows":null}`,
		`{"rows":[null,[1]]}`,
		`{}`,
	} {
		var want, got SQLResponse[json.RawMessage]
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(in, err)
		}
		if err := decodeResponse([]byte(in), &got); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		// compare cells by compacted text
		norm := func(r *SQLResponse[json.RawMessage]) {
			for _, row := range r.Rows {
				for j, c := range row {
					var v any
					json.Unmarshal(c, &v)
					row[j], _ = json.Marshal(v)
				}
			}
		}
		norm(&want)
		norm(&got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s:\n got %+v\nwant %+v", in, got, want)
		}
	}
	for _, bad := range []string{``, `{`, `{"rows":[[1,]]}`, `{"columns":["a"]`, `{"rows":[[01]]}`, `{"columns":["a"]} x`, `{"rows":[["a` + "\x01" + `"]]}`, `{"rows":[[tru]]}`} {
		var r SQLResponse[json.RawMessage]
		if err := decodeResponse([]byte(bad), &r); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for _, fb := range []string{`{"Columns":["a"]}`, `{"extra":1}`} {
		var r SQLResponse[json.RawMessage]
		if err := decodeResponse([]byte(fb), &r); err != errFallback {
			t.Errorf("%q: %v, want fallback", fb, err)
		}
	}
}

func TestUnquoteCell(t *testing.T) {
	for _, in := range []string{`"abc"`, `"h\u00e9"`, `"ü"`, `"\ud83d\ude00"`, `"a\\b"`, `""`, "\"\xff\""} {
		var want string
		werr := json.Unmarshal([]byte(in), &want)
		got, err := CellString(json.RawMessage(in))
		if (err != nil) != (werr != nil) || got != want {
			t.Errorf("%s: got %q %v want %q %v", in, got, err, want, werr)
		}
	}
}
