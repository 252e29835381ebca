package retaildb

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The decoder reads db.json in one pass over a json.Decoder's tokens. It is
// strict so that what decodes encodes back to the same JSON: unknown keys,
// missing or null required keys, duplicate keys, values of the wrong type and
// map keys that differ from their record's id are errors naming the path.

type reader struct{ dec *json.Decoder }

func newReader(r io.Reader) *reader { return &reader{dec: json.NewDecoder(r)} }

// decodeOne decodes exactly one JSON value from b with read.
func decodeOne(b []byte, read func(r *reader) error) error {
	r := newReader(bytes.NewReader(b))
	if err := read(r); err != nil {
		return err
	}
	return r.end()
}

// end checks that nothing follows the value read.
func (r *reader) end() error {
	if _, err := r.dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

func (r *reader) token() (json.Token, error) {
	t, err := r.dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return t, err
}

func (r *reader) delim(want json.Delim) error {
	t, err := r.token()
	if err != nil {
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q, got %s", want, show(t))
	}
	return nil
}

// object reads a JSON object, calling fn for each key in order; fn reads the
// value. Duplicate keys are errors.
func (r *reader) object(fn func(key string) error) error {
	if err := r.delim('{'); err != nil {
		return err
	}
	seen := map[string]bool{}
	for r.dec.More() {
		t, err := r.token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		if seen[k] {
			return fmt.Errorf("duplicate key %q", k)
		}
		seen[k] = true
		if err := fn(k); err != nil {
			return fmt.Errorf("%q: %w", k, err)
		}
	}
	return r.delim('}')
}

// record reads an object with a fixed key set: read is called per key and
// reports whether it knows the key; every key of required must appear.
func (r *reader) record(required []string, read func(key string) (bool, error)) error {
	seen := make(map[string]bool, len(required))
	err := r.object(func(k string) error {
		known, err := read(k)
		if err != nil {
			return err
		}
		if !known {
			return errors.New("unknown key")
		}
		seen[k] = true
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range required {
		if !seen[k] {
			return fmt.Errorf("missing key %q", k)
		}
	}
	return nil
}

func (r *reader) array(fn func() error) error {
	if err := r.delim('['); err != nil {
		return err
	}
	for i := 0; r.dec.More(); i++ {
		if err := fn(); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
	}
	return r.delim(']')
}

func (r *reader) str(p *string) error {
	t, err := r.token()
	if err != nil {
		return err
	}
	s, ok := t.(string)
	if !ok {
		return fmt.Errorf("want a string, got %s", show(t))
	}
	*p = s
	return nil
}

func (r *reader) float(p *float64) error {
	t, err := r.token()
	if err != nil {
		return err
	}
	f, ok := t.(float64)
	if !ok {
		return fmt.Errorf("want a number, got %s", show(t))
	}
	*p = f
	return nil
}

func (r *reader) bool(p *bool) error {
	t, err := r.token()
	if err != nil {
		return err
	}
	b, ok := t.(bool)
	if !ok {
		return fmt.Errorf("want a boolean, got %s", show(t))
	}
	*p = b
	return nil
}

func (r *reader) nullStr(p **string) error {
	t, err := r.token()
	if err != nil || t == nil {
		*p = nil
		return err
	}
	s, ok := t.(string)
	if !ok {
		return fmt.Errorf("want a string or null, got %s", show(t))
	}
	*p = &s
	return nil
}

func (r *reader) nullFloat(p **float64) error {
	t, err := r.token()
	if err != nil || t == nil {
		*p = nil
		return err
	}
	f, ok := t.(float64)
	if !ok {
		return fmt.Errorf("want a number or null, got %s", show(t))
	}
	*p = &f
	return nil
}

// strList reads an array of strings; null gives nil, [] an empty slice.
func (r *reader) strList(p *[]string) error {
	t, err := r.token()
	if err != nil || t == nil {
		*p = nil
		return err
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("want an array or null, got %s", show(t))
	}
	out := []string{}
	for i := 0; r.dec.More(); i++ {
		var s string
		if err := r.str(&s); err != nil {
			return fmt.Errorf("[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	*p = out
	return r.delim(']')
}

func show(t json.Token) string {
	switch x := t.(type) {
	case json.Delim:
		return fmt.Sprintf("%q", rune(x))
	case string:
		return fmt.Sprintf("string %q", x)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T %v", t, t)
}

// keyed reads an object of records whose keys must equal their ids.
func keyed[T any](r *reader, read func(*T) error, id func(*T) string) ([]T, error) {
	out := []T{}
	err := r.object(func(k string) error {
		var x T
		if err := read(&x); err != nil {
			return err
		}
		if id(&x) != k {
			return fmt.Errorf("key holds a record with id %q", id(&x))
		}
		out = append(out, x)
		return nil
	})
	return out, err
}

func (r *reader) db(d *DB) error {
	var err error
	return r.record([]string{"products", "users", "orders"}, func(k string) (bool, error) {
		switch k {
		case "products":
			d.Products, err = keyed(r, r.product, func(p *Product) string { return p.ProductID })
		case "users":
			d.Users, err = keyed(r, r.user, func(u *User) string { return u.UserID })
		case "orders":
			d.Orders, err = keyed(r, r.order, func(o *Order) string { return o.OrderID })
		default:
			return false, nil
		}
		return true, err
	})
}

func (r *reader) product(p *Product) error {
	return r.record([]string{"name", "product_id", "variants"}, func(k string) (bool, error) {
		var err error
		switch k {
		case "name":
			return true, r.str(&p.Name)
		case "product_id":
			return true, r.str(&p.ProductID)
		case "variants":
			p.Variants, err = keyed(r, r.variant, func(v *Variant) string { return v.ItemID })
			return true, err
		}
		return false, nil
	})
}

func (r *reader) variant(v *Variant) error {
	return r.record([]string{"item_id", "options", "available", "price"}, func(k string) (bool, error) {
		switch k {
		case "item_id":
			return true, r.str(&v.ItemID)
		case "options":
			return true, r.options(&v.Options)
		case "available":
			return true, r.bool(&v.Available)
		case "price":
			return true, r.float(&v.Price)
		}
		return false, nil
	})
}

func (r *reader) options(o *Options) error {
	*o = Options{}
	return r.object(func(k string) error {
		var s string
		if err := r.str(&s); err != nil {
			return err
		}
		*o = append(*o, Option{k, s})
		return nil
	})
}

func (r *reader) user(u *User) error {
	return r.record([]string{"user_id", "name", "address", "email", "payment_methods", "orders"}, func(k string) (bool, error) {
		var err error
		switch k {
		case "user_id":
			return true, r.str(&u.UserID)
		case "name":
			return true, r.name(&u.Name)
		case "address":
			return true, r.address(&u.Address)
		case "email":
			return true, r.str(&u.Email)
		case "payment_methods":
			u.PaymentMethods, err = keyed(r, r.paymentMethod, func(m *PaymentMethod) string { return m.ID })
			return true, err
		case "orders":
			u.Orders = []string{}
			return true, r.array(func() error {
				var s string
				err := r.str(&s)
				u.Orders = append(u.Orders, s)
				return err
			})
		}
		return false, nil
	})
}

func (r *reader) name(n *Name) error {
	return r.record([]string{"first_name", "last_name"}, func(k string) (bool, error) {
		switch k {
		case "first_name":
			return true, r.str(&n.FirstName)
		case "last_name":
			return true, r.str(&n.LastName)
		}
		return false, nil
	})
}

func (r *reader) address(a *Address) error {
	return r.record([]string{"address1", "address2", "city", "country", "state", "zip"}, func(k string) (bool, error) {
		switch k {
		case "address1":
			return true, r.str(&a.Address1)
		case "address2":
			return true, r.str(&a.Address2)
		case "city":
			return true, r.str(&a.City)
		case "country":
			return true, r.str(&a.Country)
		case "state":
			return true, r.str(&a.State)
		case "zip":
			return true, r.str(&a.Zip)
		}
		return false, nil
	})
}

func (r *reader) paymentMethod(m *PaymentMethod) error {
	return r.record([]string{"source", "id"}, func(k string) (bool, error) {
		switch k {
		case "source":
			return true, r.str(&m.Source)
		case "id":
			return true, r.str(&m.ID)
		case "brand":
			return true, r.nullStr(&m.Brand)
		case "last_four":
			return true, r.nullStr(&m.LastFour)
		case "balance":
			return true, r.nullFloat(&m.Balance)
		}
		return false, nil
	})
}

func (r *reader) order(o *Order) error {
	return r.record([]string{"order_id", "user_id", "address", "items", "status", "fulfillments", "payment_history"}, func(k string) (bool, error) {
		switch k {
		case "order_id":
			return true, r.str(&o.OrderID)
		case "user_id":
			return true, r.str(&o.UserID)
		case "address":
			return true, r.address(&o.Address)
		case "items":
			o.Items = []OrderItem{}
			return true, r.array(func() error {
				var it OrderItem
				err := r.item(&it)
				o.Items = append(o.Items, it)
				return err
			})
		case "status":
			return true, r.str(&o.Status)
		case "fulfillments":
			o.Fulfillments = []Fulfillment{}
			return true, r.array(func() error {
				var f Fulfillment
				err := r.fulfillment(&f)
				o.Fulfillments = append(o.Fulfillments, f)
				return err
			})
		case "payment_history":
			o.PaymentHistory = []Payment{}
			return true, r.array(func() error {
				var p Payment
				err := r.payment(&p)
				o.PaymentHistory = append(o.PaymentHistory, p)
				return err
			})
		case "cancel_reason":
			return true, r.nullStr(&o.CancelReason)
		case "exchange_items":
			return true, r.strList(&o.ExchangeItems)
		case "exchange_new_items":
			return true, r.strList(&o.ExchangeNewItems)
		case "exchange_payment_method_id":
			return true, r.nullStr(&o.ExchangePaymentMethodID)
		case "exchange_price_difference":
			return true, r.nullFloat(&o.ExchangePriceDifference)
		case "return_items":
			return true, r.strList(&o.ReturnItems)
		case "return_payment_method_id":
			return true, r.nullStr(&o.ReturnPaymentMethodID)
		}
		return false, nil
	})
}

func (r *reader) item(it *OrderItem) error {
	return r.record([]string{"name", "product_id", "item_id", "price", "options"}, func(k string) (bool, error) {
		switch k {
		case "name":
			return true, r.str(&it.Name)
		case "product_id":
			return true, r.str(&it.ProductID)
		case "item_id":
			return true, r.str(&it.ItemID)
		case "price":
			return true, r.float(&it.Price)
		case "options":
			return true, r.options(&it.Options)
		}
		return false, nil
	})
}

func (r *reader) fulfillment(f *Fulfillment) error {
	return r.record([]string{"tracking_id", "item_ids"}, func(k string) (bool, error) {
		var err error
		switch k {
		case "tracking_id":
			err = r.strList(&f.TrackingID)
		case "item_ids":
			err = r.strList(&f.ItemIDs)
		default:
			return false, nil
		}
		if err == nil && (k == "tracking_id" && f.TrackingID == nil || k == "item_ids" && f.ItemIDs == nil) {
			err = errors.New("null list")
		}
		return true, err
	})
}

func (r *reader) payment(p *Payment) error {
	return r.record([]string{"transaction_type", "amount", "payment_method_id"}, func(k string) (bool, error) {
		switch k {
		case "transaction_type":
			return true, r.str(&p.TransactionType)
		case "amount":
			return true, r.float(&p.Amount)
		case "payment_method_id":
			return true, r.str(&p.PaymentMethodID)
		}
		return false, nil
	})
}

// UnmarshalJSON decodes db.json's shape (either order shape), strictly.
func (d *DB) UnmarshalJSON(b []byte) error {
	var x DB
	if err := decodeOne(b, func(r *reader) error { return r.db(&x) }); err != nil {
		return err
	}
	*d = x
	return nil
}

// UnmarshalJSON decodes a product, strictly.
func (p *Product) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.product(p) })
}

// UnmarshalJSON decodes a variant, strictly.
func (v *Variant) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.variant(v) })
}

// UnmarshalJSON decodes a string-to-string object keeping key order.
func (o *Options) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.options(o) })
}

// UnmarshalJSON decodes a user, strictly.
func (u *User) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.user(u) })
}

// UnmarshalJSON decodes a name, strictly.
func (n *Name) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.name(n) })
}

// UnmarshalJSON decodes an address, strictly.
func (a *Address) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.address(a) })
}

// UnmarshalJSON decodes a payment method, strictly.
func (m *PaymentMethod) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.paymentMethod(m) })
}

// UnmarshalJSON decodes an order in either shape, strictly.
func (o *Order) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.order(o) })
}

// UnmarshalJSON decodes an order item, strictly.
func (it *OrderItem) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.item(it) })
}

// UnmarshalJSON decodes a fulfillment, strictly.
func (f *Fulfillment) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.fulfillment(f) })
}

// UnmarshalJSON decodes a payment, strictly.
func (p *Payment) UnmarshalJSON(b []byte) error {
	return decodeOne(b, func(r *reader) error { return r.payment(p) })
}
