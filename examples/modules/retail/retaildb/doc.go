// Package retaildb is the tau2-bench retail domain as a relational schema
// over weft's versioned SQL state (core/state), with a lossless round trip
// between the benchmark's db.json and that schema.
//
// Provenance: the domain (its data model, its db.json and its tools) is the
// retail domain of tau2-bench (github.com/sierra-research/tau2-bench, MIT
// licence). The data lives in examples/data/tau2-retail (db.json: 50
// products, 500 users, 1,000 orders) with its LICENSE and README. The schema
// and all code here are weft's own. The retail tool module (Wasm) uses the
// same schema, and both read it with one reader, package
// examples/modules/retail/records: Export and the Export* functions return
// (and encode) its types.
//
// # Use
//
//	v, err := retaildb.Load(ctx, store, f)          // db.json -> state, in bulk
//	b, err := retaildb.Export(ctx, v)               // state -> db.json bytes
//	o, err := retaildb.ExportOrder(ctx, ws, "#W2417020") // one record
//
// Decode is strict (unknown, missing or duplicate keys are errors), so what
// loads exports back equal: the round trip of db.json is exact, and even
// byte-identical, since Export indents like the tau2 file.
//
// # Schema (schema.sql, exported as DDL)
//
// JSON arrays, and JSON objects whose key order is part of the data (the
// top-level users/orders/products maps, payment_methods, variants, options),
// keep their order in an INT pos column (0-based); export sorts by it. A
// nullable column is NULL exactly when its key is absent or null. Money
// (prices, amounts, balances, price differences) is DOUBLE: db.json only has
// two-decimal values, but tau2's tools compute in floats and store results
// such as 0.04999999999999716 (see the oracle files), which DOUBLE holds
// exactly and DECIMAL(10,2) would not.
//
//   - users (user_id; pos, first_name, last_name, address1, address2, city,
//     country, state, zip, email): one row per user, name and address inlined.
//     Indexes: email, zip (find_user_id_by_email, find_user_id_by_name_zip).
//   - payment_methods (user_id, payment_method_id; pos, source, brand,
//     last_four, balance): a user's payment_methods map; brand and last_four
//     are set for credit_card, balance for gift_card.
//   - user_orders (user_id, pos; order_id): a user's orders list. Index:
//     order_id.
//   - orders (order_id; pos, user_id, address1..zip, status, cancel_reason,
//     exchange_items, exchange_new_items, exchange_payment_method_id,
//     exchange_price_difference, return_items, return_payment_method_id): one
//     row per order, shipping address inlined; the last seven are tau2's
//     optional order fields (NULL until a cancel, exchange or return tool sets
//     them), the three item-id lists are JSON arrays. Index: user_id.
//   - order_items (order_id, pos; item_id, product_id, name, price): an
//     order's items list. item_id is not unique within an order (7 orders of
//     db.json hold the same item twice), hence the positional key. Index:
//     item_id.
//   - order_item_options (order_id, item_pos, pos; name, value): the options
//     object of order item item_pos, in key order.
//   - fulfillments (order_id, pos): an order's fulfillments list.
//   - fulfillment_tracking_ids (order_id, fulfillment_pos, pos; tracking_id)
//     and fulfillment_item_ids (order_id, fulfillment_pos, pos; item_id): the
//     two lists of each fulfillment (item ids may repeat).
//   - payments (order_id, pos; transaction_type, amount, payment_method_id):
//     an order's payment_history (payments and refunds).
//   - products (product_id; pos, name). Index: name.
//   - variants (product_id, item_id; pos, available, price): a product's
//     variants map. Unique index: item_id (item ids are unique over all
//     products; get_item_details looks one up by itself).
//   - variant_options (product_id, item_id, pos; name, value): a variant's
//     options object, in key order.
//
// # Two JSON shapes of an order
//
// In db.json an order has only the seven keys order_id ... payment_history;
// tau2's data model adds seven optional keys, and its tools (and the
// oracle's final_changes) print every order with all fourteen, unset ones
// null. Order's JSON encoding is that record shape; DB's (Export) is the
// file shape, which omits unset optional keys. tau2 does not tell absent and
// null apart, and neither does the schema.
package retaildb
