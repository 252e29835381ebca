package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/weft-dev/weft/examples/modules/retail/records"
)

// --- writers ----------------------------------------------------------------

// saveOrder writes the order's own row (address, status, optional fields).
func saveOrder(ctx context.Context, o *order) error {
	a := o.Address
	return exec(ctx, "UPDATE orders SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ?, status = ?, "+
		"cancel_reason = ?, exchange_items = ?, exchange_new_items = ?, exchange_payment_method_id = ?, exchange_price_difference = ?, "+
		"return_items = ?, return_payment_method_id = ? WHERE order_id = ?",
		a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, o.Status,
		records.Deref(o.CancelReason), records.JSONList(o.ExchangeItems), records.JSONList(o.ExchangeNewItems), records.Deref(o.ExchangePaymentMethodID),
		records.Deref(o.ExchangePriceDifference), records.JSONList(o.ReturnItems), records.Deref(o.ReturnPaymentMethodID), o.OrderID)
}

// addPayments inserts the order's payment history entries from position from on.
func addPayments(ctx context.Context, o *order, from int) error {
	for i := from; i < len(o.PaymentHistory); i++ {
		p := o.PaymentHistory[i]
		if err := exec(ctx, "INSERT INTO payments (order_id, pos, transaction_type, amount, payment_method_id) VALUES (?, ?, ?, ?, ?)",
			o.OrderID, i, p.TransactionType, p.Amount, p.PaymentMethodID); err != nil {
			return err
		}
	}
	return nil
}

// saveBalance writes a gift card's balance.
func saveBalance(ctx context.Context, userID string, m *paymentMethod) error {
	return exec(ctx, "UPDATE payment_methods SET balance = ? WHERE user_id = ? AND payment_method_id = ?", records.Deref(m.Balance), userID, m.ID)
}

// saveItem writes order item pos and replaces its options.
func saveItem(ctx context.Context, o *order, pos int) error {
	it := o.Items[pos]
	if err := exec(ctx, "UPDATE order_items SET item_id = ?, product_id = ?, name = ?, price = ? WHERE order_id = ? AND pos = ?",
		it.ItemID, it.ProductID, it.Name, it.Price, o.OrderID, pos); err != nil {
		return err
	}
	if err := exec(ctx, "DELETE FROM order_item_options WHERE order_id = ? AND item_pos = ?", o.OrderID, pos); err != nil {
		return err
	}
	for k, op := range it.Options {
		if err := exec(ctx, "INSERT INTO order_item_options (order_id, item_pos, pos, name, value) VALUES (?, ?, ?, ?, ?)",
			o.OrderID, pos, k, op.Name, op.Value); err != nil {
			return err
		}
	}
	return nil
}

// --- helpers mirroring the reference's checks ------------------------------

// countOf counts s in list.
func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

func itemIDs(o *order) []string {
	ids := make([]string, len(o.Items))
	for i, it := range o.Items {
		ids[i] = it.ItemID
	}
	return ids
}

// firstItem returns the position of the first order item with the id, or -1.
func firstItem(o *order, itemID string) int {
	for i, it := range o.Items {
		if it.ItemID == itemID {
			return i
		}
	}
	return -1
}

func sortedCopy(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out) // byte order of UTF-8 is code point order, like Python's sorted
	return out
}

func ptrTo[T any](v T) *T { return &v }

// productsOf lists, once each in order, the products of the order's items
// with the given ids (ids not in the order are left out: priceDiff
// reports them).
func productsOf(o *order, ids []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, id := range ids {
		if pos := firstItem(o, id); pos >= 0 && !seen[o.Items[pos].ProductID] {
			seen[o.Items[pos].ProductID] = true
			out = append(out, o.Items[pos].ProductID)
		}
	}
	return out
}

// --- write tools --------------------------------------------------------------

type cancelIn struct {
	OrderID string `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	Reason  string `json:"reason" description:"Why the order is cancelled: exactly 'no longer needed' or 'ordered by mistake'."`
}

// cancelPendingOrder cancels a pending order: every entry of its payment
// history is refunded (gift cards at once, their balance rounded to cents).
func cancelPendingOrder(ctx context.Context, in cancelIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if o.Status != "pending" {
		return nil, errors.New("Non-pending order cannot be cancelled")
	}
	if in.Reason != "no longer needed" && in.Reason != "ordered by mistake" {
		return nil, errors.New("Invalid reason")
	}
	var u *user
	var refunds []payment
	var touched []*paymentMethod
	for _, p := range o.PaymentHistory {
		refunds = append(refunds, payment{TransactionType: "refund", Amount: p.Amount, PaymentMethodID: p.PaymentMethodID})
		var m *paymentMethod
		if u, m, err = getPaymentMethod(ctx, u, o.UserID, p.PaymentMethodID); err != nil {
			return nil, err
		}
		if m.IsGiftCard() {
			m.Balance = ptrTo(pyRound2(balance(m) + p.Amount))
			touched = append(touched, m)
		}
	}
	o.Status = "cancelled"
	o.CancelReason = ptrTo(in.Reason)
	n := len(o.PaymentHistory)
	o.PaymentHistory = append(o.PaymentHistory, refunds...)
	for _, m := range touched {
		if err := saveBalance(ctx, u.UserID, m); err != nil {
			return nil, err
		}
	}
	if err := saveOrder(ctx, o); err != nil {
		return nil, err
	}
	if err := addPayments(ctx, o, n); err != nil {
		return nil, err
	}
	return o, nil
}

func balance(m *paymentMethod) float64 {
	if m.Balance == nil {
		return 0
	}
	return *m.Balance
}

type exchangeIn struct {
	OrderID         string   `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	ItemIDs         []string `json:"item_ids" description:"Item ids of the order to exchange; an id may appear more than once if the order holds it more than once."`
	NewItemIDs      []string `json:"new_item_ids" description:"The replacement item ids, position by position: each must be an available variant of the same product as the item it replaces."`
	PaymentMethodID string   `json:"payment_method_id" description:"The user's payment method that pays or receives the price difference, e.g. 'gift_card_1234567' or 'credit_card_1234567'."`
}

// priceDiff sums new minus old prices over the pairs, in order, checking
// that every old item is in the order and every new one is an available
// variant of the same product. It also returns the last variant looked at.
func priceDiff(ctx context.Context, o *order, old, new []string, rejectSame bool) (float64, *variant, error) {
	diff := 0.0
	var last *variant
	for i, id := range old {
		newID := new[i]
		if rejectSame && id == newID {
			return 0, nil, errors.New("The new item id should be different from the old item id")
		}
		pos := firstItem(o, id)
		if pos < 0 {
			return 0, nil, fmt.Errorf("Item %s not found", id)
		}
		it := o.Items[pos]
		v, err := getVariant(ctx, it.ProductID, newID)
		if err != nil {
			return 0, nil, err
		}
		if !v.Available {
			return 0, nil, fmt.Errorf("New item %s not found or available", newID)
		}
		diff += v.Price - it.Price
		last = v
	}
	return diff, last, nil
}

func exchangeDeliveredOrderItems(ctx context.Context, in exchangeIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if o.Status != "delivered" {
		return nil, errors.New("Non-delivered order cannot be exchanged")
	}
	all := itemIDs(o)
	for _, id := range in.ItemIDs {
		if countOf(in.ItemIDs, id) > countOf(all, id) {
			return nil, fmt.Errorf("Number of %s not found.", id)
		}
	}
	if len(in.ItemIDs) != len(in.NewItemIDs) {
		return nil, errors.New("The number of items to be exchanged should match.")
	}
	if ctx, err = prefetch(ctx, []string{o.UserID}, productsOf(o, in.ItemIDs)); err != nil {
		return nil, err
	}
	diff, _, err := priceDiff(ctx, o, in.ItemIDs, in.NewItemIDs, false)
	if err != nil {
		return nil, err
	}
	diff = pyRound2(diff)
	_, m, err := getPaymentMethod(ctx, nil, o.UserID, in.PaymentMethodID)
	if err != nil {
		return nil, err
	}
	if m.IsGiftCard() && balance(m) < diff {
		return nil, errors.New("Insufficient gift card balance to pay for the price difference")
	}
	o.Status = "exchange requested"
	o.ExchangeItems = sortedCopy(in.ItemIDs)
	o.ExchangeNewItems = sortedCopy(in.NewItemIDs)
	o.ExchangePaymentMethodID = ptrTo(in.PaymentMethodID)
	o.ExchangePriceDifference = ptrTo(diff)
	if err := saveOrder(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

type orderAddressIn struct {
	OrderID  string `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	Address1 string `json:"address1" description:"First address line, e.g. '12 Oak Street'."`
	Address2 string `json:"address2" description:"Second address line, e.g. 'Suite 4', or an empty string."`
	City     string `json:"city" description:"City, e.g. 'Austin'."`
	State    string `json:"state" description:"State, e.g. 'TX'."`
	Country  string `json:"country" description:"Country, e.g. 'USA'."`
	Zip      string `json:"zip" description:"Zip code, e.g. '73301'."`
}

func modifyPendingOrderAddress(ctx context.Context, in orderAddressIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(o.Status, "pending") {
		return nil, errors.New("Non-pending order cannot be modified")
	}
	o.Address = address{Address1: in.Address1, Address2: in.Address2, City: in.City, Country: in.Country, State: in.State, Zip: in.Zip}
	if err := saveOrder(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

type modifyItemsIn struct {
	OrderID         string   `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	ItemIDs         []string `json:"item_ids" description:"Item ids of the order to change; an id may appear more than once if the order holds it more than once."`
	NewItemIDs      []string `json:"new_item_ids" description:"The replacement item ids, position by position: each must differ from the item it replaces and be an available variant of the same product."`
	PaymentMethodID string   `json:"payment_method_id" description:"The user's payment method that pays or receives the price difference, e.g. 'gift_card_1234567' or 'credit_card_1234567'."`
}

// modifyPendingOrderItems swaps items of a pending order for other variants
// of the same products and settles the price difference. As in the
// reference, every changed item takes the price and options of the last
// new variant checked (its own new item id, though).
func modifyPendingOrderItems(ctx context.Context, in modifyItemsIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if o.Status != "pending" {
		return nil, errors.New("Non-pending order cannot be modified")
	}
	all := itemIDs(o)
	for _, id := range in.ItemIDs {
		if countOf(in.ItemIDs, id) > countOf(all, id) {
			return nil, fmt.Errorf("%s not found", id)
		}
	}
	if len(in.ItemIDs) != len(in.NewItemIDs) {
		return nil, errors.New("The number of items to be exchanged should match")
	}
	// the products priceDiff looks up and the user getPaymentMethod reads,
	// in one host call
	if ctx, err = prefetch(ctx, []string{o.UserID}, productsOf(o, in.ItemIDs)); err != nil {
		return nil, err
	}
	diff, last, err := priceDiff(ctx, o, in.ItemIDs, in.NewItemIDs, true)
	if err != nil {
		return nil, err
	}
	u, m, err := getPaymentMethod(ctx, nil, o.UserID, in.PaymentMethodID)
	if err != nil {
		return nil, err
	}
	if m.IsGiftCard() && balance(m) < diff {
		return nil, errors.New("Insufficient gift card balance to pay for the new item")
	}
	kind := "refund"
	if diff > 0 {
		kind = "payment"
	}
	n := len(o.PaymentHistory)
	o.PaymentHistory = append(o.PaymentHistory, payment{TransactionType: kind, Amount: math.Abs(diff), PaymentMethodID: in.PaymentMethodID})
	if m.IsGiftCard() {
		m.Balance = ptrTo(pyRound2(balance(m) - diff))
	}
	changed := map[int]bool{}
	for i, id := range in.ItemIDs {
		pos := firstItem(o, id)
		if pos < 0 {
			return nil, fmt.Errorf("Item %s not found", id)
		}
		it := o.Items[pos]
		it.ItemID = in.NewItemIDs[i]
		it.Price = last.Price
		it.Options = append(options{}, last.Options...)
		changed[pos] = true
	}
	o.Status = "pending (item modified)"

	if err := addPayments(ctx, o, n); err != nil {
		return nil, err
	}
	if m.IsGiftCard() {
		if err := saveBalance(ctx, u.UserID, m); err != nil {
			return nil, err
		}
	}
	for pos := range o.Items {
		if changed[pos] {
			if err := saveItem(ctx, o, pos); err != nil {
				return nil, err
			}
		}
	}
	if err := saveOrder(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}

type modifyPaymentIn struct {
	OrderID         string `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	PaymentMethodID string `json:"payment_method_id" description:"The user's payment method to pay with instead, e.g. 'gift_card_1234567' or 'credit_card_1234567'."`
}

// modifyPendingOrderPayment moves the single payment of a pending order to
// another of the user's payment methods (a new payment plus a refund of the
// old one; gift card balances change at once, rounded to cents).
func modifyPendingOrderPayment(ctx context.Context, in modifyPaymentIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if !strings.Contains(o.Status, "pending") {
		return nil, errors.New("Non-pending order cannot be modified")
	}
	u, m, err := getPaymentMethod(ctx, nil, o.UserID, in.PaymentMethodID)
	if err != nil {
		return nil, err
	}
	if len(o.PaymentHistory) != 1 || o.PaymentHistory[0].TransactionType != "payment" {
		return nil, errors.New("There should be exactly one payment for a pending order")
	}
	first := o.PaymentHistory[0]
	if first.PaymentMethodID == in.PaymentMethodID {
		return nil, errors.New("The new payment method should be different from the current one")
	}
	amount := first.Amount
	if m.IsGiftCard() && balance(m) < amount {
		return nil, errors.New("Insufficient gift card balance to pay for the order")
	}
	o.PaymentHistory = append(o.PaymentHistory,
		payment{TransactionType: "payment", Amount: amount, PaymentMethodID: in.PaymentMethodID},
		payment{TransactionType: "refund", Amount: amount, PaymentMethodID: first.PaymentMethodID})
	var touched []*paymentMethod
	if m.IsGiftCard() {
		m.Balance = ptrTo(pyRound2(balance(m) - amount))
		touched = append(touched, m)
	}
	_, old, err := getPaymentMethod(ctx, u, o.UserID, first.PaymentMethodID)
	if err != nil {
		return nil, err
	}
	if old.IsGiftCard() {
		old.Balance = ptrTo(pyRound2(balance(old) + amount))
		touched = append(touched, old)
	}
	if err := addPayments(ctx, o, 1); err != nil {
		return nil, err
	}
	for _, t := range touched {
		if err := saveBalance(ctx, u.UserID, t); err != nil {
			return nil, err
		}
	}
	return o, nil
}

type userAddressIn struct {
	UserID   string `json:"user_id" description:"The user id, e.g. 'jane_doe_1234'."`
	Address1 string `json:"address1" description:"First address line, e.g. '12 Oak Street'."`
	Address2 string `json:"address2" description:"Second address line, e.g. 'Suite 4', or an empty string."`
	City     string `json:"city" description:"City, e.g. 'Austin'."`
	State    string `json:"state" description:"State, e.g. 'TX'."`
	Country  string `json:"country" description:"Country, e.g. 'USA'."`
	Zip      string `json:"zip" description:"Zip code, e.g. '73301'."`
}

func modifyUserAddress(ctx context.Context, in userAddressIn) (*user, error) {
	u, err := getUser(ctx, in.UserID)
	if err != nil {
		return nil, err
	}
	u.Address = address{Address1: in.Address1, Address2: in.Address2, City: in.City, Country: in.Country, State: in.State, Zip: in.Zip}
	a := u.Address
	if err := exec(ctx, "UPDATE users SET address1 = ?, address2 = ?, city = ?, country = ?, state = ?, zip = ? WHERE user_id = ?",
		a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, u.UserID); err != nil {
		return nil, err
	}
	return u, nil
}

type returnIn struct {
	OrderID         string   `json:"order_id" description:"The order id, which starts with '#', e.g. '#W1234567'."`
	ItemIDs         []string `json:"item_ids" description:"Item ids of the order to return; an id may appear more than once if the order holds it more than once."`
	PaymentMethodID string   `json:"payment_method_id" description:"Where the refund goes: the order's original payment method or one of the user's gift cards."`
}

func returnDeliveredOrderItems(ctx context.Context, in returnIn) (*order, error) {
	o, err := getOrder(ctx, in.OrderID)
	if err != nil {
		return nil, err
	}
	if o.Status != "delivered" {
		return nil, errors.New("Non-delivered order cannot be returned")
	}
	_, m, err := getPaymentMethod(ctx, nil, o.UserID, in.PaymentMethodID)
	if err != nil {
		return nil, err
	}
	if !m.IsGiftCard() {
		if len(o.PaymentHistory) == 0 {
			return nil, errors.New("The order has no payment")
		}
		if in.PaymentMethodID != o.PaymentHistory[0].PaymentMethodID {
			return nil, errors.New("Payment method should be the original payment method")
		}
	}
	all := itemIDs(o)
	for _, id := range in.ItemIDs {
		if countOf(in.ItemIDs, id) > countOf(all, id) {
			return nil, errors.New("Some item not found")
		}
	}
	o.Status = "return requested"
	o.ReturnItems = sortedCopy(in.ItemIDs)
	o.ReturnPaymentMethodID = ptrTo(in.PaymentMethodID)
	if err := saveOrder(ctx, o); err != nil {
		return nil, err
	}
	return o, nil
}
