package module

import (
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
)

// benchArgsSchema is the input schema of retail's
// modify_pending_order_items (the shape that matters: strings and arrays of
// strings).
const benchArgsSchema = `{"type":"object","properties":{"order_id":{"type":"string"},` +
	`"item_ids":{"type":"array","items":{"type":"string"}},"new_item_ids":{"type":"array","items":{"type":"string"}},` +
	`"payment_method_id":{"type":"string"}},"required":["order_id","item_ids","new_item_ids","payment_method_id"],"additionalProperties":false}`

// BenchmarkHostArgs is the host's handling of one call's arguments before
// the guest runs (docs/benchmarks.md, "core/module"): once = the schema
// check's decode, then the guest request built around the bytes
// (callRequest, the path of Module.Call and megamcp); before = the path it
// replaced, measured in the same run: megamcp's json.Valid for the
// ledger, the schema check's decode, and json.Marshal of abi.CallRequest,
// which parses and compacts the json.RawMessage again.
//
//	go test -run '^$' -bench HostArgs -benchmem ./core/module
func BenchmarkHostArgs(b *testing.B) {
	man := Manifest{ABI: ABIVersion, Name: "bench", Tools: []abi.Tool{{Name: "modify_pending_order_items", InputSchema: json.RawMessage(benchArgsSchema)}}}
	schemas, err := man.compileSchemas()
	if err != nil {
		b.Fatal(err)
	}
	const tool = "modify_pending_order_items"
	sch := schemas[tool]
	args := json.RawMessage(`{"order_id": "#W2417020", "item_ids": ["2364795498", "9408160950"], ` +
		`"new_item_ids": ["1725459349", "4938013542"], "payment_method_id": "gift_card_5876000"}`)
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := validateArgs(tool, sch, args); err != nil {
				b.Fatal(err)
			}
			if req := callRequest(tool, args); len(req) == 0 {
				b.Fatal("empty request")
			}
		}
	})
	b.Run("before", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !json.Valid(args) {
				b.Fatal("invalid")
			}
			if err := validateArgs(tool, sch, args); err != nil {
				b.Fatal(err)
			}
			if req, err := json.Marshal(abi.CallRequest{Tool: tool, Arguments: args}); err != nil || len(req) == 0 {
				b.Fatal(err)
			}
		}
	})
}

// The request carries the arguments byte for byte and decodes to the
// same abi.CallRequest json.Marshal built; names needing escapes are
// escaped.
func TestCallRequest(t *testing.T) {
	for _, c := range []struct{ tool, args string }{
		{"get", ` {"id": "a b", "n": [1, 2.5e3]} `},
		{"odd\"name\\<>", `{}`},
		{"empty", ``},
	} {
		req := callRequest(c.tool, json.RawMessage(c.args))
		var got abi.CallRequest
		if err := json.Unmarshal(req, &got); err != nil {
			t.Fatalf("%q: %v", req, err)
		}
		want := c.args
		if want == "" {
			want = "{}"
		}
		if got.Tool != c.tool || string(got.Arguments) != trimSpace(want) {
			t.Errorf("%q: decoded %q %q, want %q %q", req, got.Tool, got.Arguments, c.tool, trimSpace(want))
		}
	}
}

func trimSpace(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}
