// Package archtest holds the import-boundary checks of the tree; it has no
// code besides its tests.
//
// The test runs `go list -deps` over weft's product packages (core/...,
// megamcp/..., plugins/..., internal/..., hosts/..., cmd/..., sdk/...;
// test files excluded, since tests may use the examples) and asserts three
// rules:
//
//   - no product package imports examples/... (directly or through another
//     package): domains are adapters outside the product
//     (docs/design/011-domain-adapters.md);
//   - sdk/... imports nothing host-side (core, hosts, megamcp, plugins,
//     internal): module and plugin authors depend on the SDK only;
//   - sdk/abi, once it exists, imports only the standard library: it is the
//     wire vocabulary both sides of the module ABI share.
//
// A violation is reported with the import chain that causes it, e.g.
// "internal/pipeline -> examples/modules/retail/retaildb".
package archtest
