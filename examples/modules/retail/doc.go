// Command retail is the tau2-bench retail customer-service domain
// (github.com/sierra-research/tau2-bench, MIT licence) as a weft tool
// module: the benchmark's 16 tools, with its tool and parameter names,
// implemented over the relational schema of retaildb/schema.sql.
//
// Build (a WASI reactor):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o retail.wasm ./examples/modules/retail
//
// The tools reproduce the reference implementation's behaviour, including
// its float arithmetic on money (sums in call order, Python's round(x, 2)
// on gift card balances and exchange price differences) and its quirks
// (see modifyPendingOrderItems). Tool results are the records in tau2's
// JSON shapes; lookups and rule violations are tool errors.
package main
