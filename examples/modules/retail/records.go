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

func readUsers(ctx context.Context, f filter) ([]*user, error) {
	return records.ReadUsers(ctx, query, f)
}
func readOrders(ctx context.Context, f filter) ([]*order, error) {
	return records.ReadOrders(ctx, query, f)
}
func readProducts(ctx context.Context, f filter) ([]*product, error) {
	return records.ReadProducts(ctx, query, f)
}
