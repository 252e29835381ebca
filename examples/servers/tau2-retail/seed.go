package tau2retail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// Convert reads tau2-bench's retail db.json and writes the server's seed:
// {table: [row, ...]} over schema.sql (the layout core/state.LoadJSON
// reads), tables in schema order, one row per line, rows in db.json's
// order with pos their position. Numbers keep db.json's text exactly;
// nested lists and maps become JSON column values as they are in db.json.
// A record missing a field of the schema is an error naming it.
func Convert(db io.Reader, w io.Writer) error {
	var top struct {
		Products json.RawMessage `json:"products"`
		Users    json.RawMessage `json:"users"`
		Orders   json.RawMessage `json:"orders"`
	}
	dec := json.NewDecoder(db)
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		return fmt.Errorf("db.json: %w", err)
	}
	var t tables
	if err := eachRecord(top.Users, "users", t.addUser); err != nil {
		return err
	}
	if err := eachRecord(top.Orders, "orders", t.addOrder); err != nil {
		return err
	}
	if err := eachRecord(top.Products, "products", t.addProduct); err != nil {
		return err
	}
	return t.write(w)
}

type address struct {
	Address1 *string `json:"address1"`
	Address2 *string `json:"address2"`
	City     *string `json:"city"`
	Country  *string `json:"country"`
	State    *string `json:"state"`
	Zip      *string `json:"zip"`
}

type userRow struct {
	UserID    string          `json:"user_id"`
	Pos       int             `json:"pos"`
	FirstName string          `json:"first_name"`
	LastName  string          `json:"last_name"`
	Address1  string          `json:"address1"`
	Address2  string          `json:"address2"`
	City      string          `json:"city"`
	Country   string          `json:"country"`
	State     string          `json:"state"`
	Zip       string          `json:"zip"`
	Email     string          `json:"email"`
	Orders    json.RawMessage `json:"orders"`
}

type paymentMethodRow struct {
	UserID          string       `json:"user_id"`
	PaymentMethodID string       `json:"payment_method_id"`
	Pos             int          `json:"pos"`
	Source          string       `json:"source"`
	Brand           *string      `json:"brand"`
	LastFour        *string      `json:"last_four"`
	Balance         *json.Number `json:"balance"`
}

type orderRow struct {
	OrderID                 string          `json:"order_id"`
	Pos                     int             `json:"pos"`
	UserID                  string          `json:"user_id"`
	Address1                string          `json:"address1"`
	Address2                string          `json:"address2"`
	City                    string          `json:"city"`
	Country                 string          `json:"country"`
	State                   string          `json:"state"`
	Zip                     string          `json:"zip"`
	Status                  string          `json:"status"`
	Items                   json.RawMessage `json:"items"`
	Fulfillments            json.RawMessage `json:"fulfillments"`
	PaymentHistory          json.RawMessage `json:"payment_history"`
	CancelReason            *string         `json:"cancel_reason"`
	ExchangeItems           json.RawMessage `json:"exchange_items"`
	ExchangeNewItems        json.RawMessage `json:"exchange_new_items"`
	ExchangePaymentMethodID *string         `json:"exchange_payment_method_id"`
	ExchangePriceDifference *json.Number    `json:"exchange_price_difference"`
	ReturnItems             json.RawMessage `json:"return_items"`
	ReturnPaymentMethodID   *string         `json:"return_payment_method_id"`
}

type productRow struct {
	ProductID string `json:"product_id"`
	Pos       int    `json:"pos"`
	Name      string `json:"name"`
}

type variantRow struct {
	ProductID string          `json:"product_id"`
	ItemID    string          `json:"item_id"`
	Pos       int             `json:"pos"`
	Options   json.RawMessage `json:"options"`
	Available bool            `json:"available"`
	Price     json.Number     `json:"price"`
}

// tables holds the rows of each table, in db.json order.
type tables struct {
	users          []userRow
	paymentMethods []paymentMethodRow
	orders         []orderRow
	products       []productRow
	variants       []variantRow
}

func (t *tables) addUser(key string, pos int, raw json.RawMessage) error {
	var u struct {
		UserID *string `json:"user_id"`
		Name   *struct {
			FirstName *string `json:"first_name"`
			LastName  *string `json:"last_name"`
		} `json:"name"`
		Address        *address        `json:"address"`
		Email          *string         `json:"email"`
		PaymentMethods json.RawMessage `json:"payment_methods"`
		Orders         json.RawMessage `json:"orders"`
	}
	if err := decodeStrict(raw, &u); err != nil {
		return fmt.Errorf("users[%s]: %w", key, err)
	}
	if u.Name == nil || u.Address == nil || u.PaymentMethods == nil || u.Orders == nil {
		return fmt.Errorf("users[%s]: want name, address, payment_methods and orders", key)
	}
	row := userRow{Pos: pos, Orders: u.Orders}
	if err := need("users", key, field{"user_id", u.UserID, &row.UserID}, field{"name.first_name", u.Name.FirstName, &row.FirstName},
		field{"name.last_name", u.Name.LastName, &row.LastName}, field{"email", u.Email, &row.Email}); err != nil {
		return err
	}
	if err := u.Address.into("users", key, &row.Address1, &row.Address2, &row.City, &row.Country, &row.State, &row.Zip); err != nil {
		return err
	}
	t.users = append(t.users, row)
	return eachRecord(u.PaymentMethods, "users["+key+"].payment_methods", func(id string, pos int, raw json.RawMessage) error {
		var m struct {
			Source   *string      `json:"source"`
			ID       *string      `json:"id"`
			Brand    *string      `json:"brand"`
			LastFour *string      `json:"last_four"`
			Balance  *json.Number `json:"balance"`
		}
		if err := decodeStrict(raw, &m); err != nil {
			return fmt.Errorf("users[%s].payment_methods[%s]: %w", key, id, err)
		}
		if m.Source == nil || m.ID == nil {
			return fmt.Errorf("users[%s].payment_methods[%s]: want source and id", key, id)
		}
		t.paymentMethods = append(t.paymentMethods, paymentMethodRow{
			UserID: row.UserID, PaymentMethodID: *m.ID, Pos: pos, Source: *m.Source,
			Brand: m.Brand, LastFour: m.LastFour, Balance: m.Balance,
		})
		return nil
	})
}

func (t *tables) addOrder(key string, pos int, raw json.RawMessage) error {
	var o struct {
		OrderID                 *string         `json:"order_id"`
		UserID                  *string         `json:"user_id"`
		Address                 *address        `json:"address"`
		Items                   json.RawMessage `json:"items"`
		Status                  *string         `json:"status"`
		Fulfillments            json.RawMessage `json:"fulfillments"`
		PaymentHistory          json.RawMessage `json:"payment_history"`
		CancelReason            *string         `json:"cancel_reason"`
		ExchangeItems           json.RawMessage `json:"exchange_items"`
		ExchangeNewItems        json.RawMessage `json:"exchange_new_items"`
		ExchangePaymentMethodID *string         `json:"exchange_payment_method_id"`
		ExchangePriceDifference *json.Number    `json:"exchange_price_difference"`
		ReturnItems             json.RawMessage `json:"return_items"`
		ReturnPaymentMethodID   *string         `json:"return_payment_method_id"`
	}
	if err := decodeStrict(raw, &o); err != nil {
		return fmt.Errorf("orders[%s]: %w", key, err)
	}
	if o.Address == nil || o.Items == nil || o.Fulfillments == nil || o.PaymentHistory == nil {
		return fmt.Errorf("orders[%s]: want address, items, fulfillments and payment_history", key)
	}
	row := orderRow{
		Pos: pos, Items: o.Items, Fulfillments: o.Fulfillments, PaymentHistory: o.PaymentHistory,
		CancelReason: o.CancelReason, ExchangeItems: nullable(o.ExchangeItems), ExchangeNewItems: nullable(o.ExchangeNewItems),
		ExchangePaymentMethodID: o.ExchangePaymentMethodID, ExchangePriceDifference: o.ExchangePriceDifference,
		ReturnItems: nullable(o.ReturnItems), ReturnPaymentMethodID: o.ReturnPaymentMethodID,
	}
	if err := need("orders", key, field{"order_id", o.OrderID, &row.OrderID}, field{"user_id", o.UserID, &row.UserID},
		field{"status", o.Status, &row.Status}); err != nil {
		return err
	}
	if err := o.Address.into("orders", key, &row.Address1, &row.Address2, &row.City, &row.Country, &row.State, &row.Zip); err != nil {
		return err
	}
	t.orders = append(t.orders, row)
	return nil
}

func (t *tables) addProduct(key string, pos int, raw json.RawMessage) error {
	var p struct {
		Name      *string         `json:"name"`
		ProductID *string         `json:"product_id"`
		Variants  json.RawMessage `json:"variants"`
	}
	if err := decodeStrict(raw, &p); err != nil {
		return fmt.Errorf("products[%s]: %w", key, err)
	}
	if p.Name == nil || p.ProductID == nil || p.Variants == nil {
		return fmt.Errorf("products[%s]: want name, product_id and variants", key)
	}
	t.products = append(t.products, productRow{ProductID: *p.ProductID, Pos: pos, Name: *p.Name})
	return eachRecord(p.Variants, "products["+key+"].variants", func(id string, pos int, raw json.RawMessage) error {
		var v struct {
			ItemID    *string         `json:"item_id"`
			Options   json.RawMessage `json:"options"`
			Available *bool           `json:"available"`
			Price     *json.Number    `json:"price"`
		}
		if err := decodeStrict(raw, &v); err != nil {
			return fmt.Errorf("products[%s].variants[%s]: %w", key, id, err)
		}
		if v.ItemID == nil || v.Options == nil || v.Available == nil || v.Price == nil {
			return fmt.Errorf("products[%s].variants[%s]: want item_id, options, available and price", key, id)
		}
		t.variants = append(t.variants, variantRow{
			ProductID: *p.ProductID, ItemID: *v.ItemID, Pos: pos, Options: v.Options, Available: *v.Available, Price: *v.Price,
		})
		return nil
	})
}

func (a *address) into(table, key string, dst ...*string) error {
	src := []*string{a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip}
	names := []string{"address1", "address2", "city", "country", "state", "zip"}
	for i, s := range src {
		if s == nil {
			return fmt.Errorf("%s[%s]: address has no %s", table, key, names[i])
		}
		*dst[i] = *s
	}
	return nil
}

// field is a required string field of a record: its name, the decoded
// value (nil when absent) and where the row keeps it.
type field struct {
	name string
	src  *string
	dst  *string
}

// need copies required string fields, naming the first one missing.
func need(table, key string, fs ...field) error {
	for _, f := range fs {
		if f.src == nil {
			return fmt.Errorf("%s[%s]: no %s", table, key, f.name)
		}
		*f.dst = *f.src
	}
	return nil
}

// nullable maps an absent or null JSON value to SQL NULL.
func nullable(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

func decodeStrict(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// eachRecord calls fn for each member of a JSON object, in document order,
// with its key, its position and its value.
func eachRecord(raw json.RawMessage, what string, fn func(key string, pos int, raw json.RawMessage) error) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return fmt.Errorf("%s: not a JSON object", what)
	}
	for pos := 0; dec.More(); pos++ {
		kt, err := dec.Token()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("%s[%v]: %w", what, kt, err)
		}
		if err := fn(kt.(string), pos, v); err != nil {
			return err
		}
	}
	return nil
}

// write writes the tables as {table: [row, ...]}, one row per line.
func (t *tables) write(w io.Writer) error {
	var buf bytes.Buffer
	buf.WriteString("{")
	first := true
	section := func(name string, n int, row func(i int) any) error {
		if !first {
			buf.WriteString(",")
		}
		first = false
		fmt.Fprintf(&buf, "\n%q: [", name)
		for i := range n {
			b, err := json.Marshal(row(i))
			if err != nil {
				return fmt.Errorf("%s row %d: %w", name, i, err)
			}
			if i > 0 {
				buf.WriteString(",")
			}
			buf.WriteString("\n")
			buf.Write(b)
		}
		buf.WriteString("\n]")
		return nil
	}
	for _, s := range []struct {
		name string
		n    int
		row  func(int) any
	}{
		{"users", len(t.users), func(i int) any { return t.users[i] }},
		{"payment_methods", len(t.paymentMethods), func(i int) any { return t.paymentMethods[i] }},
		{"orders", len(t.orders), func(i int) any { return t.orders[i] }},
		{"products", len(t.products), func(i int) any { return t.products[i] }},
		{"variants", len(t.variants), func(i int) any { return t.variants[i] }},
	} {
		if err := section(s.name, s.n, s.row); err != nil {
			return err
		}
	}
	buf.WriteString("\n}\n")
	_, err := w.Write(buf.Bytes())
	return err
}
