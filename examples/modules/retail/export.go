package main

import (
	"context"

	"github.com/weft-dev/weft/examples/modules/retail/records"
)

// exportDB is the export hook: the whole state in db.json's shape.
func exportDB(ctx context.Context) (any, error) {
	var d records.DBFile
	var err error
	all := filter{All: true}
	if d.Products, err = readProducts(ctx, all); err != nil {
		return nil, err
	}
	if d.Users, err = readUsers(ctx, all); err != nil {
		return nil, err
	}
	if d.Orders, err = readOrders(ctx, all); err != nil {
		return nil, err
	}
	return &d, nil
}
