package retaildb

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DB is the whole retail database in db.json's shape. Its JSON form is the
// file's: {"products": {...}, "users": {...}, "orders": {...}}, each map keyed
// by the record's id, in slice order. In the file form an order's optional
// fields (cancel_reason, exchange_*, return_*) appear only when set.
type DB struct {
	Products []Product
	Users    []User
	Orders   []Order
}

// Product is one entry of db.json "products".
type Product struct {
	Name      string
	ProductID string
	Variants  []Variant // JSON: object keyed by item_id, in slice order
}

// Variant is one entry of a product's "variants".
type Variant struct {
	ItemID    string
	Options   Options
	Available bool
	Price     float64
}

// User is one entry of db.json "users".
type User struct {
	UserID         string
	Name           Name
	Address        Address
	Email          string
	PaymentMethods []PaymentMethod // JSON: object keyed by id, in slice order
	Orders         []string
}

// Name is a user's name.
type Name struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// Address is a user's or an order's address.
type Address struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	State    string `json:"state"`
	Zip      string `json:"zip"`
}

// PaymentMethod is one entry of a user's "payment_methods". Brand and
// LastFour are set for credit cards, Balance for gift cards; nil fields are
// absent from the JSON.
type PaymentMethod struct {
	Source   string
	ID       string
	Brand    *string
	LastFour *string
	Balance  *float64
}

// Order is one entry of db.json "orders". The pointer and slice fields after
// PaymentHistory are tau2's optional order fields; nil means unset (None).
//
// Order's own JSON encoding is tau2's record shape, the one its tools return
// and the oracle's final_changes use: all fourteen keys, unset ones null.
// Inside a DB the file shape is used instead (unset optional keys omitted).
type Order struct {
	OrderID                 string
	UserID                  string
	Address                 Address
	Items                   []OrderItem
	Status                  string
	Fulfillments            []Fulfillment
	PaymentHistory          []Payment
	CancelReason            *string
	ExchangeItems           []string
	ExchangeNewItems        []string
	ExchangePaymentMethodID *string
	ExchangePriceDifference *float64
	ReturnItems             []string
	ReturnPaymentMethodID   *string
}

// OrderItem is one entry of an order's "items".
type OrderItem struct {
	Name      string
	ProductID string
	ItemID    string
	Price     float64
	Options   Options
}

// Fulfillment is one entry of an order's "fulfillments".
type Fulfillment struct {
	TrackingID []string
	ItemIDs    []string
}

// Payment is one entry of an order's "payment_history".
type Payment struct {
	TransactionType string
	Amount          float64
	PaymentMethodID string
}

// Options is a string-to-string JSON object (a variant's or an item's
// options) with its key order kept.
type Options []Option

// Option is one key of an Options object.
type Option struct {
	Name  string
	Value string
}

// --- JSON encoding -------------------------------------------------------

type productJSON struct {
	Name      string   `json:"name"`
	ProductID string   `json:"product_id"`
	Variants  variants `json:"variants"`
}

type variantJSON struct {
	ItemID    string  `json:"item_id"`
	Options   Options `json:"options"`
	Available bool    `json:"available"`
	Price     pyFloat `json:"price"`
}

type paymentMethodJSON struct {
	Source   string   `json:"source"`
	ID       string   `json:"id"`
	Brand    *string  `json:"brand,omitempty"`
	LastFour *string  `json:"last_four,omitempty"`
	Balance  *pyFloat `json:"balance,omitempty"`
}

type itemJSON struct {
	Name      string  `json:"name"`
	ProductID string  `json:"product_id"`
	ItemID    string  `json:"item_id"`
	Price     pyFloat `json:"price"`
	Options   Options `json:"options"`
}

type fulfillmentJSON struct {
	TrackingID []string `json:"tracking_id"`
	ItemIDs    []string `json:"item_ids"`
}

type paymentJSON struct {
	TransactionType string  `json:"transaction_type"`
	Amount          pyFloat `json:"amount"`
	PaymentMethodID string  `json:"payment_method_id"`
}

type userJSON struct {
	UserID         string         `json:"user_id"`
	Name           Name           `json:"name"`
	Address        Address        `json:"address"`
	Email          string         `json:"email"`
	PaymentMethods paymentMethods `json:"payment_methods"`
	Orders         []string       `json:"orders"`
}

// orderJSON is the record shape: every key, null when unset.
type orderJSON struct {
	OrderID                 string        `json:"order_id"`
	UserID                  string        `json:"user_id"`
	Address                 Address       `json:"address"`
	Items                   []OrderItem   `json:"items"`
	Status                  string        `json:"status"`
	Fulfillments            []Fulfillment `json:"fulfillments"`
	PaymentHistory          []Payment     `json:"payment_history"`
	CancelReason            *string       `json:"cancel_reason"`
	ExchangeItems           []string      `json:"exchange_items"`
	ExchangeNewItems        []string      `json:"exchange_new_items"`
	ExchangePaymentMethodID *string       `json:"exchange_payment_method_id"`
	ExchangePriceDifference *pyFloat      `json:"exchange_price_difference"`
	ReturnItems             []string      `json:"return_items"`
	ReturnPaymentMethodID   *string       `json:"return_payment_method_id"`
}

// fileOrderJSON is the file shape: unset optional keys omitted.
type fileOrderJSON struct {
	OrderID                 string        `json:"order_id"`
	UserID                  string        `json:"user_id"`
	Address                 Address       `json:"address"`
	Items                   []OrderItem   `json:"items"`
	Status                  string        `json:"status"`
	Fulfillments            []Fulfillment `json:"fulfillments"`
	PaymentHistory          []Payment     `json:"payment_history"`
	CancelReason            *string       `json:"cancel_reason,omitempty"`
	ExchangeItems           *[]string     `json:"exchange_items,omitempty"`
	ExchangeNewItems        *[]string     `json:"exchange_new_items,omitempty"`
	ExchangePaymentMethodID *string       `json:"exchange_payment_method_id,omitempty"`
	ExchangePriceDifference *pyFloat      `json:"exchange_price_difference,omitempty"`
	ReturnItems             *[]string     `json:"return_items,omitempty"`
	ReturnPaymentMethodID   *string       `json:"return_payment_method_id,omitempty"`
}

type variants []Variant
type paymentMethods []PaymentMethod
type fileOrder Order

// MarshalJSON encodes the product in db.json's shape.
func (p Product) MarshalJSON() ([]byte, error) {
	return json.Marshal(productJSON{p.Name, p.ProductID, p.Variants})
}

// MarshalJSON encodes the variant in db.json's shape.
func (v Variant) MarshalJSON() ([]byte, error) {
	return json.Marshal(variantJSON{v.ItemID, v.Options, v.Available, pyFloat(v.Price)})
}

// MarshalJSON encodes the user in db.json's shape.
func (u User) MarshalJSON() ([]byte, error) {
	return json.Marshal(userJSON{u.UserID, u.Name, u.Address, u.Email, u.PaymentMethods, nonNil(u.Orders)})
}

// MarshalJSON encodes the payment method; nil fields are omitted.
func (m PaymentMethod) MarshalJSON() ([]byte, error) {
	return json.Marshal(paymentMethodJSON{m.Source, m.ID, m.Brand, m.LastFour, (*pyFloat)(m.Balance)})
}

// MarshalJSON encodes the order in tau2's record shape (all keys, unset
// optional fields null).
func (o Order) MarshalJSON() ([]byte, error) {
	return json.Marshal(orderJSON{
		OrderID: o.OrderID, UserID: o.UserID, Address: o.Address,
		Items: nonNil(o.Items), Status: o.Status, Fulfillments: nonNil(o.Fulfillments),
		PaymentHistory: nonNil(o.PaymentHistory), CancelReason: o.CancelReason,
		ExchangeItems: o.ExchangeItems, ExchangeNewItems: o.ExchangeNewItems,
		ExchangePaymentMethodID: o.ExchangePaymentMethodID, ExchangePriceDifference: (*pyFloat)(o.ExchangePriceDifference),
		ReturnItems: o.ReturnItems, ReturnPaymentMethodID: o.ReturnPaymentMethodID,
	})
}

func (o fileOrder) MarshalJSON() ([]byte, error) {
	j := fileOrderJSON{
		OrderID: o.OrderID, UserID: o.UserID, Address: o.Address,
		Items: nonNil(o.Items), Status: o.Status, Fulfillments: nonNil(o.Fulfillments),
		PaymentHistory: nonNil(o.PaymentHistory), CancelReason: o.CancelReason,
		ExchangePaymentMethodID: o.ExchangePaymentMethodID, ExchangePriceDifference: (*pyFloat)(o.ExchangePriceDifference),
		ReturnPaymentMethodID: o.ReturnPaymentMethodID,
	}
	if o.ExchangeItems != nil {
		j.ExchangeItems = &o.ExchangeItems
	}
	if o.ExchangeNewItems != nil {
		j.ExchangeNewItems = &o.ExchangeNewItems
	}
	if o.ReturnItems != nil {
		j.ReturnItems = &o.ReturnItems
	}
	return json.Marshal(j)
}

// MarshalJSON encodes the item in db.json's shape.
func (it OrderItem) MarshalJSON() ([]byte, error) {
	return json.Marshal(itemJSON{it.Name, it.ProductID, it.ItemID, pyFloat(it.Price), it.Options})
}

// MarshalJSON encodes the fulfillment (nil lists as []).
func (f Fulfillment) MarshalJSON() ([]byte, error) {
	return json.Marshal(fulfillmentJSON{nonNil(f.TrackingID), nonNil(f.ItemIDs)})
}

// MarshalJSON encodes the payment.
func (p Payment) MarshalJSON() ([]byte, error) {
	return json.Marshal(paymentJSON{p.TransactionType, pyFloat(p.Amount), p.PaymentMethodID})
}

// pyFloat is a float64 that encodes like Python's repr, as tau2's json.dump
// writes it: 198.0 rather than 198, exponent form only outside
// 1e-4 <= |x| < 1e16. Numerically it is the same value either way.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, fmt.Errorf("retaildb: %v is not a JSON number", x)
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // shortest digits, like repr
	exp, err := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if err != nil {
		return nil, err
	}
	if decpt := exp + 1; x != 0 && (decpt <= -4 || decpt > 16) {
		return []byte(e), nil // Go's e+NN/e-NN matches Python's
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return []byte(s), nil
}

// MarshalJSON encodes the options as a JSON object in slice order.
func (o Options) MarshalJSON() ([]byte, error) {
	return marshalKeyed(o, func(x Option) string { return x.Name }, func(x Option) any { return x.Value })
}

func (v variants) MarshalJSON() ([]byte, error) {
	return marshalKeyed(v, func(x Variant) string { return x.ItemID }, func(x Variant) any { return x })
}

func (m paymentMethods) MarshalJSON() ([]byte, error) {
	return marshalKeyed(m, func(x PaymentMethod) string { return x.ID }, func(x PaymentMethod) any { return x })
}

// MarshalJSON encodes the database in db.json's file shape.
func (d DB) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"products":`)
	b, err := marshalKeyed(d.Products, func(x Product) string { return x.ProductID }, func(x Product) any { return x })
	if err != nil {
		return nil, err
	}
	buf.Write(b)
	buf.WriteString(`,"users":`)
	if b, err = marshalKeyed(d.Users, func(x User) string { return x.UserID }, func(x User) any { return x }); err != nil {
		return nil, err
	}
	buf.Write(b)
	buf.WriteString(`,"orders":`)
	if b, err = marshalKeyed(d.Orders, func(x Order) string { return x.OrderID }, func(x Order) any { return fileOrder(x) }); err != nil {
		return nil, err
	}
	buf.Write(b)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// marshalKeyed encodes items as a JSON object, key(x) -> val(x), in order.
func marshalKeyed[T any](items []T, key func(T) string, val func(T) any) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, x := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(key(x))
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(val(x))
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
