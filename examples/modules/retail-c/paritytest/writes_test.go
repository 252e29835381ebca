package paritytest

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// writeErrorCases are bad calls of the write tools on db.json: each must
// answer the Go module's tool error (the text here is the Go module's,
// tools_write.go / tools_read.go) and change nothing. The orders, items and
// payment methods were picked from db.json for the property each case
// needs (e.g. #W6779827 is pending, paid with gift_card_7219486, whose
// balance 49.0 is below the 77.03 a swap of 7896397433 for 2444431651
// costs).
var writeErrorCases = []struct {
	name, tool, args, want string
}{
	// cancel_pending_order
	{"cancel unknown order", "cancel_pending_order", `{"order_id":"#W0000000","reason":"no longer needed"}`, "Order not found"},
	{"cancel delivered order", "cancel_pending_order", `{"order_id":"#W4817420","reason":"no longer needed"}`, "Non-pending order cannot be cancelled"},
	{"cancel bad reason", "cancel_pending_order", `{"order_id":"#W4776164","reason":"changed my mind"}`, "Invalid reason"},
	{"cancel reason case", "cancel_pending_order", `{"order_id":"#W4776164","reason":"No longer needed"}`, "Invalid reason"},
	{"cancel order id case", "cancel_pending_order", `{"order_id":"#w4776164","reason":"no longer needed"}`, "Order not found"},
	{"cancel empty ids", "cancel_pending_order", `{"order_id":"","reason":""}`, "Order not found"},
	{"cancel id with NUL", "cancel_pending_order", `{"order_id":"#W4776164\u0000","reason":"no longer needed"}`, "Order not found"},

	// modify_pending_order_items
	{"modify non-pending", "modify_pending_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478"],"new_item_ids":["4894369688"],"payment_method_id":"gift_card_8168843"}`,
		"Non-pending order cannot be modified"},
	{"modify unknown item", "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["1111111111"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`,
		"1111111111 not found"},
	{"modify item twice", "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980","8349118980"],"new_item_ids":["9647292434","9647292434"],"payment_method_id":"credit_card_9513926"}`,
		"8349118980 not found"},
	{"modify unknown of two", "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980","\u00e9"],"new_item_ids":["9647292434","1"],"payment_method_id":"credit_card_9513926"}`,
		"\u00e9 not found"},
	{"modify count mismatch", "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":[],"payment_method_id":"credit_card_9513926"}`,
		"The number of items to be exchanged should match"},
	{"modify same item", "modify_pending_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["8349118980"],"payment_method_id":"credit_card_9513926"}`,
		"The new item id should be different from the old item id"},
	{"modify unavailable variant", "modify_pending_order_items",
		`{"order_id":"#W5918442","item_ids":["1725100896"],"new_item_ids":["1002370030"],"payment_method_id":"credit_card_5051208"}`,
		"New item 1002370030 not found or available"},
	{"modify other product's item", "modify_pending_order_items",
		`{"order_id":"#W5918442","item_ids":["1725100896"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_5051208"}`,
		"Variant not found"},
	{"modify unknown payment method", "modify_pending_order_items",
		`{"order_id":"#W5918442","item_ids":["1725100896"],"new_item_ids":["9007697085"],"payment_method_id":"paypal_0000000"}`,
		"Payment method not found"},
	{"modify insufficient gift card", "modify_pending_order_items",
		`{"order_id":"#W6779827","item_ids":["7896397433"],"new_item_ids":["2444431651"],"payment_method_id":"gift_card_7219486"}`,
		"Insufficient gift card balance to pay for the new item"},

	// modify_pending_order_address
	{"address non-pending", "modify_pending_order_address",
		`{"order_id":"#W4817420","address1":"1 A St","address2":"","city":"Austin","state":"TX","country":"USA","zip":"73301"}`,
		"Non-pending order cannot be modified"},
	{"address unknown order", "modify_pending_order_address",
		`{"order_id":"W4776164","address1":"1 A St","address2":"","city":"Austin","state":"TX","country":"USA","zip":"73301"}`,
		"Order not found"},

	// modify_pending_order_payment
	{"payment non-pending", "modify_pending_order_payment", `{"order_id":"#W4817420","payment_method_id":"gift_card_8168843"}`,
		"Non-pending order cannot be modified"},
	{"payment unknown method", "modify_pending_order_payment", `{"order_id":"#W4776164","payment_method_id":"gift_card_0000000"}`,
		"Payment method not found"},
	{"payment same method", "modify_pending_order_payment", `{"order_id":"#W5918442","payment_method_id":"credit_card_5051208"}`,
		"The new payment method should be different from the current one"},
	{"payment insufficient gift card", "modify_pending_order_payment", `{"order_id":"#W2443586","payment_method_id":"gift_card_2742113"}`,
		"Insufficient gift card balance to pay for the order"},

	// modify_user_address
	{"user address unknown user", "modify_user_address",
		`{"user_id":"nobody_0000","address1":"1 A St","address2":"","city":"Austin","state":"TX","country":"USA","zip":"73301"}`,
		"User not found"},

	// return_delivered_order_items
	{"return pending order", "return_delivered_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980"],"payment_method_id":"credit_card_9513926"}`,
		"Non-delivered order cannot be returned"},
	{"return unknown method", "return_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478"],"payment_method_id":"paypal_0000000"}`,
		"Payment method not found"},
	{"return unknown item", "return_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478","1111111111"],"payment_method_id":"gift_card_8168843"}`,
		"Some item not found"},

	// exchange_delivered_order_items
	{"exchange pending order", "exchange_delivered_order_items",
		`{"order_id":"#W4776164","item_ids":["8349118980"],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`,
		"Non-delivered order cannot be exchanged"},
	{"exchange unknown item", "exchange_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["1111111111"],"new_item_ids":["4894369688"],"payment_method_id":"gift_card_8168843"}`,
		"Number of 1111111111 not found."},
	{"exchange count mismatch", "exchange_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478"],"new_item_ids":["4894369688","4894369688"],"payment_method_id":"gift_card_8168843"}`,
		"The number of items to be exchanged should match."},
	{"exchange insufficient gift card", "exchange_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478"],"new_item_ids":["4894369688"],"payment_method_id":"gift_card_8168843"}`,
		"Insufficient gift card balance to pay for the price difference"},
	{"exchange unknown method", "exchange_delivered_order_items",
		`{"order_id":"#W4817420","item_ids":["4900661478"],"new_item_ids":["4894369688"],"payment_method_id":"paypal_0000000"}`,
		"Payment method not found"},
}

// TestWriteToolErrors: every bad call above answers exactly the Go
// module's answer, which is the tool error listed, and leaves the state as
// it was (content hash before and after, on both modules).
func TestWriteToolErrors(t *testing.T) {
	f := setup(t)
	for _, c := range writeErrorCases {
		t.Run(c.name, func(t *testing.T) {
			sc, sg := f.session(), f.session()
			before := sc.Workspace.Hash()
			got := call(f.c, sc, c.tool, json.RawMessage(c.args))
			want := call(f.gomod, sg, c.tool, json.RawMessage(c.args))
			if got != want {
				t.Errorf("C %+v, Go %+v", got, want)
			}
			if !got.IsError || got.Text != c.want || got.Err != "" {
				t.Errorf("C answered %+v, want the tool error %q", got, c.want)
			}
			if h := sc.Workspace.Hash(); h != before {
				t.Errorf("C module changed the state: %v -> %v", before, h)
			}
			if h := sg.Workspace.Hash(); h != before {
				t.Errorf("Go module changed the state: %v -> %v", before, h)
			}
		})
	}
}

// TestWriteToolMalformedArguments: arguments of the wrong shape (wrong
// types, unknown or missing keys, not an object) are refused by the host's
// schema check before either module runs: the same "invalid arguments"
// error for both, nothing changed. (Arguments that pass the schema but name
// nothing, such as empty ids, are in writeErrorCases.)
func TestWriteToolMalformedArguments(t *testing.T) {
	f := setup(t)
	for _, c := range []struct{ tool, args string }{
		{"cancel_pending_order", `{"order_id":"#W4776164","reason":5}`},
		{"cancel_pending_order", `{"order_id":"#W4776164","reason":"no longer needed","extra":1}`},
		{"cancel_pending_order", `{}`},
		{"cancel_pending_order", `null`},
		{"cancel_pending_order", `[]`},
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":"8349118980","new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":[8349118980],"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		// one bad property per case: with two, which one the host names
		// varies from call to call (core/module/validate.go deepest() breaks
		// ties in the validator's map order)
		{"modify_pending_order_items", `{"order_id":"#W4776164","item_ids":null,"new_item_ids":["9647292434"],"payment_method_id":"credit_card_9513926"}`},
		{"modify_pending_order_payment", `{"order_id":["#W4776164"],"payment_method_id":"gift_card_0000000"}`},
		{"return_delivered_order_items", `{"order_id":"#W4817420","item_ids":{},"payment_method_id":"gift_card_8168843"}`},
		{"exchange_delivered_order_items", `{"order_id":"#W4817420","item_ids":["4900661478"],"payment_method_id":"gift_card_8168843"}`},
		{"modify_user_address", `{"user_id":"ava_moore_2033","address1":true}`},
	} {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			sc, sg := f.session(), f.session()
			before := sc.Workspace.Hash()
			got := call(f.c, sc, c.tool, json.RawMessage(c.args))
			want := call(f.gomod, sg, c.tool, json.RawMessage(c.args))
			if got != want {
				t.Errorf("C %+v, Go %+v", got, want)
			}
			if !strings.Contains(got.Err, "invalid arguments") {
				t.Errorf("C answered %+v, want the host's invalid arguments error", got)
			}
			if sc.Workspace.Hash() != before || sg.Workspace.Hash() != before {
				t.Errorf("state changed")
			}
		})
	}
}

// calcExprs is the calculate corpus: the Go module's own cases
// (calc_test.go) and edges of big integers, float conversion and
// rounding, then n random expressions over the accepted alphabet (seeded:
// the same every run).
func calcExprs(n int) []string {
	out := []string{
		"2 + 2", "100 / 3", "2 ** 8", "(12.5 + 7.25) * 2", "1/0", "1 // 0", "7 // 2", "-7 // 2", "7.5 // 2", "-7.5 // 2",
		"7 // -2.0", "2 ** -1", "0 ** -1", "-2 ** 2", "(-2) ** 2", "2 ** 3 ** 2", "(-8) ** (1/3)", "10 ** 400",
		"10 ** 400 // 10 ** 399", "10 ** 30 / 3", "0.125", "0.375", "2.675", "1.005", "-0.001", "0.005", "012", "00",
		"01.5", "1.", ".5", "1..2", "1.2.3", "()", "(1)(2)", "1 2", "2 * * 3", "2 *** 3", "", "   ", "  3 + 4", "1 - - 1",
		"+-+1", "10.0 ** 400", "(10.0 ** 200) * (10.0 ** 200)", "(10.0 ** 200) * (10.0 ** 200) - (10.0 ** 200) * (10.0 ** 200)",
		"0.1 + 0.2", "1e5", "1319.43 - 302.67 + 271.89", "135.24 - 153.23", "2 ** 0.5", "(-1) ** 0.5", "(-2.0) ** 3",
		"0 ** 0", "0.0 ** 0", "4 / 2", "12345678901234567890123 / 7", "...", "(...)", "5 // 0.0", "-0.0", "1 / 3 * 3",
		"99999999999999999999 * 1.0", "0.1 * 3", "3 * 0.1 - 0.3", "2 ** 1023 * 2", "2.0 ** 1024",
		"1" + strings.Repeat("0", 400) + ".0", "0." + strings.Repeat("0", 400) + "1", "-1 / 10 ** 400", "1 / 10 ** 400",
		"10 ** 308 * 10 / 3", "2**1024 / 2**1000", "(2**53+1) * 1.0", "2**64 + 0.0", "-(2**70) // 3", "(-2) ** 63 // 7",
		"(-1) ** 10000000000000000000000", "(-1) ** 10000000000000000000001", "0 ** 100000000000000000000000",
		"2 ** 4194303", "3 ** 20000 // 3 ** 19990", "1.5 ** 100", "1.0001 ** 10000", "2.5 ** -3.7", "7 ** 0.3",
		"123.456 ** 2.5", "(-3.5) ** 3", "0.5 ** 1100", "10 ** -400", "12 / -4", "0 / -5", "-(0.0)", "((2))", "2 **",
		"(", ")", "1 +", "1 ++ 2", "1 // // 2", "1 / 2 / 3 / 4", "12.5 // 0.1", "-12.5 // 0.1", "1e", "a", "1,5",
		"\u0661", "1_000", "2\x00", strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150), strings.Repeat("-", 300) + "1",
		strings.Repeat("1+", 3000) + "1", strings.Repeat("(", 3998) + "1" + strings.Repeat(")", 3998),
		strings.Repeat("-", 20001) + "1", strings.Repeat("1**", 3998) + "1", strings.Repeat("(-1**", 1000) + "2" + strings.Repeat(")", 1000),
	}
	r := rand.New(rand.NewSource(7))
	num := func() string {
		switch x := r.Float64(); {
		case x < 0.3:
			return fmt.Sprint(r.Intn(101))
		case x < 0.5:
			return fmt.Sprintf("%.2f", r.Float64()*1000)
		case x < 0.6:
			return fmt.Sprintf("%d%09d%09d", r.Intn(1000), r.Intn(1e9), r.Intn(1e9))
		case x < 0.7:
			return "." + fmt.Sprint(r.Intn(100))
		case x < 0.8:
			return fmt.Sprint(r.Intn(10)) + "."
		default:
			return fmt.Sprintf("%.1f", r.Float64()*10)
		}
	}
	ops := []string{"+", "-", "*", "/", "//", "**"}
	var expr func(d int) string
	expr = func(d int) string {
		x := r.Float64()
		switch {
		case d > 4 || x < 0.3:
			return num()
		case x < 0.4:
			return []string{"-", "+"}[r.Intn(2)] + expr(d+1)
		case x < 0.55:
			return "(" + expr(d+1) + ")"
		}
		op := ops[r.Intn(len(ops))]
		if op == "**" {
			return expr(d+2) + " ** " + []string{"0.5", "-1", "2", "3", "-0.5", "1.5", "(" + expr(d+3) + ")"}[r.Intn(7)]
		}
		sp := func() string { return []string{" ", ""}[r.Intn(2)] }
		return expr(d+1) + sp() + op + sp() + expr(d+1)
	}
	toks := []string{"1", "2", "0", "00", "1.5", ".", "(", ")", "+", "-", "*", "/", "**", "//", " ", "3.", "10"}
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			out = append(out, expr(0))
			continue
		}
		var b strings.Builder
		for k := r.Intn(8) + 1; k > 0; k-- {
			b.WriteString(toks[r.Intn(len(toks))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestCalculateParity: calculate answers byte for byte what the Go module
// answers over the corpus (values and error texts), in one session per
// module (calculate is read-only).
func TestCalculateParity(t *testing.T) {
	f := setup(t)
	n := 3000
	if testing.Short() {
		n = 300
	}
	sc, sg := f.session(), f.session()
	exprs, errs := calcExprs(n), 0
	for _, e := range exprs {
		args, _ := json.Marshal(map[string]string{"expression": e})
		got, want := call(f.c, sc, "calculate", args), call(f.gomod, sg, "calculate", args)
		if got != want {
			t.Errorf("calculate(%q): C %+v, Go %+v", e, got, want)
		}
		if got.IsError {
			errs++
		}
	}
	// a sanity check on the corpus itself: both outcomes well represented
	if errs < len(exprs)/10 || errs > len(exprs)*9/10 {
		t.Errorf("%d of %d expressions are errors", errs, len(exprs))
	}
	t.Logf("%d expressions, %d errors", len(exprs), errs)
}

// TestCalculateNestingLimit: the one documented difference from the Go
// module (calc.c): more than 4,000 nested parentheses and powers is a tool
// error in C (a fixed wasm stack), a value in Go.
func TestCalculateNestingLimit(t *testing.T) {
	f := setup(t)
	args, _ := json.Marshal(map[string]string{"expression": strings.Repeat("(", 4001) + "1" + strings.Repeat(")", 4001)})
	got := call(f.c, f.session(), "calculate", args)
	if !got.IsError || got.Text != "expression nested too deeply" {
		t.Errorf("C answered %+v", got)
	}
}

// FuzzCalculateParity: any expression gets the Go module's answer from the
// C module, byte for byte (but past the C module's nesting limit).
// Corpus: testdata/fuzz/FuzzCalculateParity.
func FuzzCalculateParity(f *testing.F) {
	for _, e := range calcExprs(0)[:40] {
		f.Add(e)
	}
	fx := setup(f)
	sc, sg := fx.session(), fx.session()
	f.Fuzz(func(t *testing.T, expr string) {
		args, err := json.Marshal(map[string]string{"expression": expr})
		if err != nil {
			t.Skip()
		}
		got, want := call(fx.c, sc, "calculate", args), call(fx.gomod, sg, "calculate", args)
		if got.IsError && got.Text == "expression nested too deeply" {
			return
		}
		if got != want {
			t.Errorf("calculate(%q): C %+v, Go %+v", expr, got, want)
		}
	})
}
