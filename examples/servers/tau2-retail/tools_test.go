package tau2retail_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
)

// Records of db.json the tests use: #W2443586 is pending, paid once with
// paypal_7859314 (591.95) by aarav_nguyen_7344, whose gift_card_2742113
// holds 22.0; its item 9690244451 (236.51) is a variant of product
// 1656367028, whose 1340995114 is unavailable, 7706410293 (269.16) and
// 3616838507 (226.11) available. #W2611340 is processed, #W4817420
// delivered.
const (
	pendingOrder = "#W2443586"
	giftCard     = "gift_card_2742113"
	paypal       = "paypal_7859314"
)

// TestToolErrorsKeepState: each bad call is a tool error with the server's
// code for it (or refused by the input schema), and leaves the session's
// state as the seed left it.
func TestToolErrorsKeepState(t *testing.T) {
	mod := nativeServer(t)
	_, v0 := server(t)
	s := &module.Session{Workspace: v0.Store().Fork(v0)}
	items := func(old, new []string, pm string) map[string]any {
		return map[string]any{"order_id": pendingOrder, "item_ids": old, "new_item_ids": new, "payment_method_id": pm}
	}
	for _, c := range []struct {
		tool string
		args any
		code string // "" for a call the input schema refuses
	}{
		{"get_order_details", map[string]any{"order_id": "#W0000000"}, "order_not_found"},
		{"get_user_details", map[string]any{"user_id": "nobody_1"}, "user_not_found"},
		{"get_product_details", map[string]any{"product_id": "9690244451"}, "product_not_found"},
		{"get_item_details", map[string]any{"item_id": "1656367028"}, "item_not_found"},
		{"find_user_id_by_email", map[string]any{"email": "nobody@example.com"}, "user_not_found"},
		{"find_user_id_by_name_zip", map[string]any{"first_name": "Aarav", "last_name": "Nguyen", "zip": "00000"}, "user_not_found"},
		{"cancel_pending_order", map[string]any{"order_id": "#W2611340", "reason": "no longer needed"}, "order_not_pending"},
		{"cancel_pending_order", map[string]any{"order_id": pendingOrder, "reason": "changed my mind"}, "invalid_reason"},
		{"modify_pending_order_payment", map[string]any{"order_id": pendingOrder, "payment_method_id": giftCard}, "insufficient_balance"},
		{"modify_pending_order_payment", map[string]any{"order_id": pendingOrder, "payment_method_id": paypal}, "same_payment_method"},
		{"modify_pending_order_payment", map[string]any{"order_id": pendingOrder, "payment_method_id": "credit_card_0000000"}, "payment_method_not_found"},
		{"modify_pending_order_items", items([]string{"9690244451"}, []string{"9690244451"}, paypal), "same_item"},
		{"modify_pending_order_items", items([]string{"9690244451", "9690244451"}, []string{"7706410293", "3616838507"}, paypal), "item_not_in_order"},
		{"modify_pending_order_items", items([]string{"9690244451"}, []string{"7706410293", "3616838507"}, paypal), "item_count_mismatch"},
		{"modify_pending_order_items", items([]string{"9690244451"}, []string{"1340995114"}, paypal), "item_unavailable"},
		{"modify_pending_order_items", items([]string{"9690244451"}, []string{"1615379700"}, paypal), "variant_not_found"},
		{"modify_pending_order_items", items([]string{"9690244451"}, []string{"7706410293"}, giftCard), "insufficient_balance"},
		{"return_delivered_order_items", map[string]any{"order_id": pendingOrder, "item_ids": []string{"9690244451"}, "payment_method_id": paypal}, "order_not_delivered"},
		{"return_delivered_order_items", map[string]any{"order_id": "#W4817420", "item_ids": []string{"9690244451"}, "payment_method_id": "gift_card_8168843"}, "item_not_in_order"},
		{"exchange_delivered_order_items", map[string]any{"order_id": "#W4817420", "item_ids": []string{"6777246137"}, "new_item_ids": []string{"1615379700"}, "payment_method_id": "gift_card_8168843"}, "variant_not_found"},
		{"calculate", map[string]any{"expression": "abc"}, "invalid_expression"},
		{"get_user_details", map[string]any{}, ""},
		{"get_order_details", map[string]any{"order_id": pendingOrder, "extra": 1}, ""},
		{"get_order_details", map[string]any{"order_id": 2443586}, ""},
	} {
		args, _ := json.Marshal(c.args)
		res, err := mod.Call(context.Background(), s, c.tool, args)
		switch {
		case c.code == "":
			if !errors.Is(err, module.ErrInvalidArguments) {
				t.Errorf("%s(%s) = %+v, %v; want ErrInvalidArguments", c.tool, args, res, err)
			}
		case err != nil:
			t.Errorf("%s(%s): %v", c.tool, args, err)
		case !res.IsError || errorCode(t, res) != c.code:
			t.Errorf("%s(%s) = %q (error %v, code %q), want code %q", c.tool, args, abi.FirstText(res.Content), res.IsError, errorCode(t, res), c.code)
		}
		if s.Workspace.Hash() != v0.Hash() {
			t.Fatalf("%s(%s) changed the state", c.tool, args)
		}
	}
}

// TestModifyItemsRefundsGiftCard: a cheaper variant refunds the price
// difference to the gift card at once (balance rounded to cents), and the
// order and user read back so.
func TestModifyItemsRefundsGiftCard(t *testing.T) {
	mod := nativeServer(t)
	_, v0 := server(t)
	s := &module.Session{Workspace: v0.Store().Fork(v0)}
	call := func(tool string, args any) any {
		t.Helper()
		b, _ := json.Marshal(args)
		res, err := mod.Call(context.Background(), s, tool, b)
		if err != nil || res.IsError {
			t.Fatalf("%s(%s) = %+v, %v", tool, b, res, err)
		}
		var v any
		if err := json.Unmarshal([]byte(abi.FirstText(res.Content)), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	got := call("modify_pending_order_items", map[string]any{
		"order_id": pendingOrder, "item_ids": []string{"9690244451"}, "new_item_ids": []string{"3616838507"}, "payment_method_id": giftCard,
	}).(map[string]any)
	// CPython: 0 + (226.11 - 236.51) is -10.399999999999977.
	wantHistory := []any{
		map[string]any{"transaction_type": "payment", "amount": 591.95, "payment_method_id": paypal},
		map[string]any{"transaction_type": "refund", "amount": 10.399999999999977, "payment_method_id": giftCard},
	}
	if d := cmp.Diff(wantHistory, got["payment_history"]); d != "" {
		t.Errorf("payment_history (-want +got):\n%s", d)
	}
	if got["status"] != "pending (item modified)" {
		t.Errorf("status %v", got["status"])
	}
	item := got["items"].([]any)[0].(map[string]any)
	if item["item_id"] != "3616838507" || item["price"] != 226.11 {
		t.Errorf("first item %v", item)
	}
	if d := cmp.Diff(got, call("get_order_details", map[string]any{"order_id": pendingOrder})); d != "" {
		t.Errorf("get_order_details differs from the tool's answer (-tool +read):\n%s", d)
	}
	user := call("get_user_details", map[string]any{"user_id": "aarav_nguyen_7344"}).(map[string]any)
	card := user["payment_methods"].(map[string]any)[giftCard]
	if d := cmp.Diff(map[string]any{"source": "gift_card", "id": giftCard, "balance": 32.4}, card); d != "" {
		t.Errorf("gift card (-want +got):\n%s", d)
	}
}
