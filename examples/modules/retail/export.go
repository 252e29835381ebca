package main

import (
	"context"
	"encoding/json"
)

// dbFile is the whole database in db.json's shape: products, users and
// orders, each an object keyed by id in position order; orders omit their
// unset optional keys, as the file does.
type dbFile struct {
	products []*product
	users    []*user
	orders   []*order
}

func (d *dbFile) MarshalJSON() ([]byte, error) {
	var o obj
	var ps, us, os obj
	for _, p := range d.products {
		ps.add(p.ProductID, p)
	}
	for _, u := range d.users {
		us.add(u.UserID, u)
	}
	for _, x := range d.orders {
		x.fileShape = true
		os.add(x.OrderID, x)
	}
	for _, m := range []struct {
		key string
		o   *obj
	}{{"products", &ps}, {"users", &us}, {"orders", &os}} {
		b, err := m.o.bytes()
		if err != nil {
			return nil, err
		}
		o.add(m.key, json.RawMessage(b))
	}
	return o.bytes()
}

// exportDB is the export hook: the whole state in db.json's shape.
func exportDB(ctx context.Context) (any, error) {
	var d dbFile
	var err error
	all := filter{all: true}
	if d.products, err = readProducts(ctx, all); err != nil {
		return nil, err
	}
	if d.users, err = readUsers(ctx, all); err != nil {
		return nil, err
	}
	if d.orders, err = readOrders(ctx, all); err != nil {
		return nil, err
	}
	return &d, nil
}
