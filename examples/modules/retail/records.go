package main

import (
	"context"

	"github.com/weft-dev/weft/examples/modules/retail/records"
)

// The retail records, their JSON and their reading from SQL live in
// package records, shared with the host-side retaildb; these are their
// names in the module.
type (
	address       = records.Address
	paymentMethod = records.PaymentMethod
	user          = records.User
	option        = records.Option
	options       = records.Options
	variant       = records.Variant
	product       = records.Product
	payment       = records.Payment
	order         = records.Order
	filter        = records.Filter
)

var (
	pyRepr   = records.PyRepr
	pyRound2 = records.PyRound2
)

// query is the module's records.Query.
var _ records.Query = query

// The readers send each reader's statements in one host call (batch); a
// read of everything (the export hook) one statement per call instead, so
// that no answer holds more than one table.
func readBatch(f filter) records.Batch {
	if f.All {
		return records.Sequential(query)
	}
	return batch
}

func readUsers(ctx context.Context, f filter) ([]*user, error) {
	res, err := readBatch(f)(ctx, records.UserStatements(f))
	if err != nil {
		return nil, err
	}
	return records.AssembleUsers(f, res)
}
func readOrders(ctx context.Context, f filter) ([]*order, error) {
	res, err := readBatch(f)(ctx, records.OrderStatements(f))
	if err != nil {
		return nil, err
	}
	return records.AssembleOrders(f, res)
}
func readProducts(ctx context.Context, f filter) ([]*product, error) {
	res, err := readBatch(f)(ctx, records.ProductStatements(f))
	if err != nil {
		return nil, err
	}
	return records.AssembleProducts(f, res)
}
