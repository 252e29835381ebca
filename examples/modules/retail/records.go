package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// The records below are the retail domain's JSON shapes: what the tools
// return and what the export hook writes. They mirror tau2-bench's data
// model (field names and nesting); ordered maps (payment methods, variants,
// options) keep their element order, which the schema stores in pos
// columns.

// address is a user's default address or an order's shipping address.
type address struct {
	Address1 string `json:"address1"`
	Address2 string `json:"address2"`
	City     string `json:"city"`
	Country  string `json:"country"`
	State    string `json:"state"`
	Zip      string `json:"zip"`
}

// userName is a user's first and last name.
type userName struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
}

// paymentMethod is one of a user's payment methods. Credit cards carry brand
// and last four digits, gift cards a balance; paypal has neither.
type paymentMethod struct {
	Source   string
	ID       string
	Brand    *string
	LastFour *string
	Balance  *float64
}

func (m *paymentMethod) isGiftCard() bool { return m.Source == "gift_card" }

type user struct {
	UserID         string
	Name           userName
	Address        address
	Email          string
	PaymentMethods []*paymentMethod // JSON: object keyed by id
	Orders         []string
}

// method returns the user's payment method with the id, or nil.
func (u *user) method(id string) *paymentMethod {
	for _, m := range u.PaymentMethods {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// option is one name/value pair of an options object.
type option struct {
	Name, Value string
}

// options is a string-to-string JSON object kept in its key order.
type options []option

type variant struct {
	ItemID    string
	Options   options
	Available bool
	Price     float64
}

type product struct {
	Name      string
	ProductID string
	Variants  []*variant // JSON: object keyed by item id
}

type orderItem struct {
	Name      string
	ProductID string
	ItemID    string
	Price     float64
	Options   options
}

type fulfillment struct {
	TrackingID []string
	ItemIDs    []string
}

type payment struct {
	TransactionType string
	Amount          float64
	PaymentMethodID string
}

// order is an order with tau2's seven optional fields (nil when unset).
type order struct {
	OrderID                 string
	UserID                  string
	Address                 address
	Items                   []*orderItem
	Status                  string
	Fulfillments            []fulfillment
	PaymentHistory          []payment
	CancelReason            *string
	ExchangeItems           []string
	ExchangeNewItems        []string
	ExchangePaymentMethodID *string
	ExchangePriceDifference *float64
	ReturnItems             []string
	ReturnPaymentMethodID   *string

	// fileShape omits unset optional keys (db.json's form) instead of
	// writing them as null (the record form tools return).
	fileShape bool
}

// --- JSON -------------------------------------------------------------------

// obj writes a JSON object member by member, in call order.
type obj struct {
	buf bytes.Buffer
	err error
	n   int
}

func (o *obj) add(key string, v any) {
	if o.err != nil {
		return
	}
	if o.n == 0 {
		o.buf.WriteByte('{')
	} else {
		o.buf.WriteByte(',')
	}
	o.n++
	k, _ := json.Marshal(key)
	o.buf.Write(k)
	o.buf.WriteByte(':')
	// The module's own records (and objects built here) are written
	// directly: json.Marshal would produce the same bytes (they are compact
	// and every string in them went through json.Marshal already) but
	// re-scans them byte by byte, once per nesting level.
	var b []byte
	var err error
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case *order:
		b, err = marshalRecord(x, x == nil)
	case *paymentMethod:
		b, err = marshalRecord(x, x == nil)
	case *variant:
		b, err = marshalRecord(x, x == nil)
	case options:
		b, err = x.MarshalJSON()
	case pyFloat:
		if math.IsInf(float64(x), 0) || math.IsNaN(float64(x)) {
			b, err = json.Marshal(v)
		} else {
			b, err = x.MarshalJSON()
		}
	case []*orderItem:
		b, err = marshalList(x)
	case []fulfillment:
		b, err = marshalList(x)
	case []payment:
		b, err = marshalList(x)
	default:
		b, err = json.Marshal(v)
	}
	if err != nil {
		b, err = json.Marshal(v) // its error, wrapped as encoding/json wraps it
	}
	if err != nil {
		o.err = err
		return
	}
	o.buf.Write(b)
}

// marshalRecord is json.Marshal of a record pointer, without the re-scan.
func marshalRecord[T json.Marshaler](p T, isNil bool) ([]byte, error) {
	if isNil {
		return []byte("null"), nil
	}
	return p.MarshalJSON()
}

// marshalList is json.Marshal of a slice of records, without the re-scan.
func marshalList[T json.Marshaler](s []T) ([]byte, error) {
	if s == nil {
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, x := range s {
		if i > 0 {
			buf.WriteByte(',')
		}
		if any(x) == nil || reflect.ValueOf(x).Kind() == reflect.Pointer && reflect.ValueOf(x).IsNil() {
			buf.WriteString("null")
			continue
		}
		b, err := x.MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf.Write(b)
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

func (o *obj) bytes() ([]byte, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.n == 0 {
		return []byte("{}"), nil
	}
	o.buf.WriteByte('}')
	return o.buf.Bytes(), nil
}

func (m *paymentMethod) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("source", m.Source)
	o.add("id", m.ID)
	if m.Brand != nil {
		o.add("brand", *m.Brand)
	}
	if m.LastFour != nil {
		o.add("last_four", *m.LastFour)
	}
	if m.Balance != nil {
		o.add("balance", pyFloat(*m.Balance))
	}
	return o.bytes()
}

func (u *user) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("user_id", u.UserID)
	o.add("name", u.Name)
	o.add("address", u.Address)
	o.add("email", u.Email)
	var pm obj
	for _, m := range u.PaymentMethods {
		pm.add(m.ID, m)
	}
	b, err := pm.bytes()
	if err != nil {
		return nil, err
	}
	o.add("payment_methods", json.RawMessage(b))
	o.add("orders", nonNil(u.Orders))
	return o.bytes()
}

func (op options) MarshalJSON() ([]byte, error) {
	var o obj
	for _, x := range op {
		o.add(x.Name, x.Value)
	}
	return o.bytes()
}

func (v *variant) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("item_id", v.ItemID)
	o.add("options", v.Options)
	o.add("available", v.Available)
	o.add("price", pyFloat(v.Price))
	return o.bytes()
}

func (p *product) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("name", p.Name)
	o.add("product_id", p.ProductID)
	var vs obj
	for _, v := range p.Variants {
		vs.add(v.ItemID, v)
	}
	b, err := vs.bytes()
	if err != nil {
		return nil, err
	}
	o.add("variants", json.RawMessage(b))
	return o.bytes()
}

func (it *orderItem) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("name", it.Name)
	o.add("product_id", it.ProductID)
	o.add("item_id", it.ItemID)
	o.add("price", pyFloat(it.Price))
	o.add("options", it.Options)
	return o.bytes()
}

func (f fulfillment) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("tracking_id", nonNil(f.TrackingID))
	o.add("item_ids", nonNil(f.ItemIDs))
	return o.bytes()
}

func (p payment) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("transaction_type", p.TransactionType)
	o.add("amount", pyFloat(p.Amount))
	o.add("payment_method_id", p.PaymentMethodID)
	return o.bytes()
}

func (ord *order) MarshalJSON() ([]byte, error) {
	var o obj
	o.add("order_id", ord.OrderID)
	o.add("user_id", ord.UserID)
	o.add("address", ord.Address)
	o.add("items", nonNil(ord.Items))
	o.add("status", ord.Status)
	o.add("fulfillments", nonNil(ord.Fulfillments))
	o.add("payment_history", nonNil(ord.PaymentHistory))
	opt := func(key string, set bool, v any) {
		if set {
			o.add(key, v)
		} else if !ord.fileShape {
			o.add(key, nil)
		}
	}
	opt("cancel_reason", ord.CancelReason != nil, ord.CancelReason)
	opt("exchange_items", ord.ExchangeItems != nil, ord.ExchangeItems)
	opt("exchange_new_items", ord.ExchangeNewItems != nil, ord.ExchangeNewItems)
	opt("exchange_payment_method_id", ord.ExchangePaymentMethodID != nil, ord.ExchangePaymentMethodID)
	var diff any
	if ord.ExchangePriceDifference != nil {
		diff = pyFloat(*ord.ExchangePriceDifference)
	}
	opt("exchange_price_difference", ord.ExchangePriceDifference != nil, diff)
	opt("return_items", ord.ReturnItems != nil, ord.ReturnItems)
	opt("return_payment_method_id", ord.ReturnPaymentMethodID != nil, ord.ReturnPaymentMethodID)
	return o.bytes()
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// pyFloat is a float64 written the way Python's repr (and so tau2's JSON)
// writes it: 198.0 rather than 198, exponent form only outside
// 1e-4 <= |x| < 1e16. Numerically the same value either way.
type pyFloat float64

func (f pyFloat) MarshalJSON() ([]byte, error) {
	x := float64(f)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil, fmt.Errorf("retail: %v is not a JSON number", x)
	}
	return []byte(pyRepr(x)), nil
}

// pyRepr formats a finite float like Python's repr.
func pyRepr(x float64) string {
	switch {
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	case math.IsNaN(x):
		return "nan"
	}
	e := strconv.FormatFloat(x, 'e', -1, 64) // shortest round-trip digits
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if x != 0 && (exp < -4 || exp >= 16) {
		return e // Go's e+NN / e-NN matches Python's
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsRune(s, '.') {
		s += ".0"
	}
	return s
}

// pyRound2 is Python's round(x, 2) on a float: the value correctly rounded
// to two decimals (ties to even on the exact binary value), as a float.
func pyRound2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 2, 64), 64)
	if err != nil {
		return x
	}
	return r
}
