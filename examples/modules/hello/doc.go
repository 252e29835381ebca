// Command hello is a minimal weft tool module: notes in one table, plus two
// tools showing that the clock and the random stream are the session's
// deterministic ones. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o hello.wasm ./examples/modules/hello
//
// schema.sql holds the DDL of its table.
package main
