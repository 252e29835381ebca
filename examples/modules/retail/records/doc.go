// Package records is the retail domain's data model read from its SQL
// tables (examples/modules/retail/retaildb/schema.sql), in tau2-bench's
// JSON shapes, shared by the module (the guest, compiled to Wasm) and the
// host-side retaildb: one reader of users, orders and products, used by
// the module's tools and export hook and by retaildb's Export functions.
// It imports only the standard library, so the guest stays small.
//
// ReadUsers, ReadOrders and ReadProducts run their statements through a
// Query (all records, or the one with Filter.ID, in the tables' pos
// order; rows whose id only matches under the collation are skipped, as
// Python's == would). The records' MarshalJSON write tau2's record shape
// (an order's seven optional keys as null when unset), an Order with
// FileShape set and a DBFile db.json's shape (unset optional keys left
// out); floats are written as Python's repr writes them (PyRepr), and
// PyRound2 is Python's round(x, 2).
package records
