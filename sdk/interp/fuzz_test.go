package interp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// FuzzDispatch feeds arbitrary arguments and SQL cells to a program that
// echoes them: every answer is one JSON object (a result or an internal
// error), never a panic.
func FuzzDispatch(f *testing.F) {
	const src = "def echo(x = None, **kw):\n    r = query_one('SELECT v FROM t')\n    return {'x': x, 'kw': kw, 'r': r}\n"
	f.Add(`{"x":1}`, `[[{"a":1}]]`, "json")
	f.Add(`{"x":[1,2.5,"s",null,true]}`, `[["12.30"]]`, "decimal")
	f.Add(`{"y":{"z":{}}}`, `[[1e400]]`, "float")
	f.Add(`[]`, `[[null]]`, "int")
	f.Add(`{"x":1e3}`, `[["x"]]`, "string")
	in := interp.New(interp.Options{MaxSteps: 1_000_000})
	prog := abi.Program{Digest: spec.ProgramDigest(src, nil), Source: src}
	f.Fuzz(func(t *testing.T, args, rows, typ string) {
		h := &fakeHost{sql: func(abi.SQLRequest) string {
			return `{"columns":["v"],"types":[` + mustJSON(typ) + `],"rows":` + rows + `,"rows_affected":0,"last_insert_id":0,"error":null}`
		}}
		req, err := json.Marshal(abi.CallRequest{Tool: "echo", Arguments: json.RawMessage(args), Program: &prog})
		if err != nil {
			return // not JSON: the host never sends it
		}
		out := in.Dispatch(context.Background(), h, req)
		if _, err := abi.DecodeAnswer(out); err != nil {
			t.Fatalf("answer %s: %v", out, err)
		}
		if strings.Contains(string(out), "interpreter panic") {
			t.Fatalf("panic: %s", out)
		}
	})
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
