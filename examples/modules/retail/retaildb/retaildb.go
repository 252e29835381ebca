package retaildb

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/records"
)

// DDL is the retail schema (schema.sql): the argument of state.Store.Load.
//
//go:embed schema.sql
var DDL string

// Querier runs a row-returning SQL statement with ? parameters.
// *state.Workspace and *state.Unit implement it.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*state.Rows, error)
}

// ErrNotFound is returned by ExportUser, ExportOrder and ExportProduct when
// no record has the id.
var ErrNotFound = errors.New("retaildb: no such record")

// Decode reads a database in db.json's shape. It is strict so that nothing
// is lost on the way to SQL: unknown keys, missing required keys, duplicate
// keys and map keys that differ from their record's id are errors.
func Decode(r io.Reader) (*DB, error) {
	rd := newReader(r)
	var db DB
	if err := rd.db(&db); err != nil {
		return nil, fmt.Errorf("retaildb: decode: %w", err)
	}
	if err := rd.end(); err != nil {
		return nil, fmt.Errorf("retaildb: decode: %w", err)
	}
	return &db, nil
}

// Load reads db.json's shape from r and loads it into a new version of
// store with the retail schema, in bulk (no per-row SQL).
func Load(ctx context.Context, store *state.Store, r io.Reader) (*state.Version, error) {
	db, err := Decode(r)
	if err != nil {
		return nil, err
	}
	return LoadDB(ctx, store, db)
}

// LoadDB loads a decoded database into a new version of store.
func LoadDB(ctx context.Context, store *state.Store, db *DB) (*state.Version, error) {
	v, err := store.Load(ctx, DDL, db.TableRows()...)
	if err != nil {
		return nil, fmt.Errorf("retaildb: load: %w", err)
	}
	return v, nil
}

// TableRows converts the database to bulk rows for state.Store.Load with
// DDL, one entry per table of the schema.
func (d *DB) TableRows() []state.TableRows {
	users := state.TableRows{Table: "users", Columns: []string{"user_id", "pos", "first_name", "last_name", "address1", "address2", "city", "country", "state", "zip", "email"}}
	pms := state.TableRows{Table: "payment_methods", Columns: []string{"user_id", "payment_method_id", "pos", "source", "brand", "last_four", "balance"}}
	uos := state.TableRows{Table: "user_orders", Columns: []string{"user_id", "pos", "order_id"}}
	for i, u := range d.Users {
		a := u.Address
		users.Rows = append(users.Rows, []any{u.UserID, i, u.Name.FirstName, u.Name.LastName, a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, u.Email})
		for j, m := range u.PaymentMethods {
			pms.Rows = append(pms.Rows, []any{u.UserID, m.ID, j, m.Source, ptr(m.Brand), ptr(m.LastFour), ptr(m.Balance)})
		}
		for j, o := range u.Orders {
			uos.Rows = append(uos.Rows, []any{u.UserID, j, o})
		}
	}

	orders := state.TableRows{Table: "orders", Columns: []string{"order_id", "pos", "user_id", "address1", "address2", "city", "country", "state", "zip", "status",
		"cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id", "exchange_price_difference", "return_items", "return_payment_method_id"}}
	items := state.TableRows{Table: "order_items", Columns: []string{"order_id", "pos", "item_id", "product_id", "name", "price"}}
	itemOpts := state.TableRows{Table: "order_item_options", Columns: []string{"order_id", "item_pos", "pos", "name", "value"}}
	fuls := state.TableRows{Table: "fulfillments", Columns: []string{"order_id", "pos"}}
	tracks := state.TableRows{Table: "fulfillment_tracking_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "tracking_id"}}
	fulItems := state.TableRows{Table: "fulfillment_item_ids", Columns: []string{"order_id", "fulfillment_pos", "pos", "item_id"}}
	pays := state.TableRows{Table: "payments", Columns: []string{"order_id", "pos", "transaction_type", "amount", "payment_method_id"}}
	for i, o := range d.Orders {
		a := o.Address
		orders.Rows = append(orders.Rows, []any{o.OrderID, i, o.UserID, a.Address1, a.Address2, a.City, a.Country, a.State, a.Zip, o.Status,
			ptr(o.CancelReason), jsonList(o.ExchangeItems), jsonList(o.ExchangeNewItems), ptr(o.ExchangePaymentMethodID),
			ptr(o.ExchangePriceDifference), jsonList(o.ReturnItems), ptr(o.ReturnPaymentMethodID)})
		for j, it := range o.Items {
			items.Rows = append(items.Rows, []any{o.OrderID, j, it.ItemID, it.ProductID, it.Name, it.Price})
			for k, op := range it.Options {
				itemOpts.Rows = append(itemOpts.Rows, []any{o.OrderID, j, k, op.Name, op.Value})
			}
		}
		for j, f := range o.Fulfillments {
			fuls.Rows = append(fuls.Rows, []any{o.OrderID, j})
			for k, t := range f.TrackingID {
				tracks.Rows = append(tracks.Rows, []any{o.OrderID, j, k, t})
			}
			for k, t := range f.ItemIDs {
				fulItems.Rows = append(fulItems.Rows, []any{o.OrderID, j, k, t})
			}
		}
		for j, p := range o.PaymentHistory {
			pays.Rows = append(pays.Rows, []any{o.OrderID, j, p.TransactionType, p.Amount, p.PaymentMethodID})
		}
	}

	products := state.TableRows{Table: "products", Columns: []string{"product_id", "pos", "name"}}
	vars := state.TableRows{Table: "variants", Columns: []string{"product_id", "item_id", "pos", "available", "price"}}
	varOpts := state.TableRows{Table: "variant_options", Columns: []string{"product_id", "item_id", "pos", "name", "value"}}
	for i, p := range d.Products {
		products.Rows = append(products.Rows, []any{p.ProductID, i, p.Name})
		for j, v := range p.Variants {
			vars.Rows = append(vars.Rows, []any{p.ProductID, v.ItemID, j, v.Available, v.Price})
			for k, op := range v.Options {
				varOpts.Rows = append(varOpts.Rows, []any{p.ProductID, v.ItemID, k, op.Name, op.Value})
			}
		}
	}
	return []state.TableRows{users, pms, uos, orders, items, itemOpts, fuls, tracks, fulItems, pays, products, vars, varOpts}
}

func ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func jsonList(s []string) any {
	if s == nil {
		return nil
	}
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// Export returns the state of v in db.json's file shape, indented like the
// tau2-bench file (4 spaces, no trailing newline).
func Export(ctx context.Context, v *state.Version) ([]byte, error) {
	db, err := ExportDB(ctx, v.Store().Fork(v))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "    ")
	if err := enc.Encode(db); err != nil {
		return nil, fmt.Errorf("retaildb: export: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// ExportDB reads the whole database from q, every list and map in its
// position order, with the module's own reader (package records): the
// host and the guest read the retail tables one way.
func ExportDB(ctx context.Context, q Querier) (*records.DBFile, error) {
	var db records.DBFile
	var err error
	all, rq := records.Filter{All: true}, query(q)
	if db.Products, err = records.ReadProducts(ctx, rq, all); err != nil {
		return nil, err
	}
	if db.Users, err = records.ReadUsers(ctx, rq, all); err != nil {
		return nil, err
	}
	if db.Orders, err = records.ReadOrders(ctx, rq, all); err != nil {
		return nil, err
	}
	return &db, nil
}

// ExportUser reads one user in db.json's shape, or ErrNotFound.
func ExportUser(ctx context.Context, q Querier, userID string) (*records.User, error) {
	return one(records.ReadUsers(ctx, query(q), records.Filter{ID: userID}))
}

// ExportOrder reads one order, or ErrNotFound. Its JSON encoding is tau2's
// record shape (every optional key, null when unset).
func ExportOrder(ctx context.Context, q Querier, orderID string) (*records.Order, error) {
	return one(records.ReadOrders(ctx, query(q), records.Filter{ID: orderID}))
}

// ExportProduct reads one product in db.json's shape, or ErrNotFound.
func ExportProduct(ctx context.Context, q Querier, productID string) (*records.Product, error) {
	return one(records.ReadProducts(ctx, query(q), records.Filter{ID: productID}))
}

func one[T any](list []*T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, ErrNotFound
	}
	return list[0], nil
}

// query is q as a records.Query.
func query(q Querier) records.Query {
	return func(ctx context.Context, stmt string, args ...any) ([][]any, error) {
		r, err := q.Query(ctx, stmt, args...)
		if err != nil {
			return nil, fmt.Errorf("retaildb: %w", err)
		}
		return r.Values, nil
	}
}
