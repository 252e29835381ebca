// Command convert turns tau2-bench airline's db.json into the seed state of
// the tau2-airline synthesized server (examples/servers/tau2-airline): a
// weft.state/v1 export over the server's schema.sql, one row per flight,
// flight date, user, payment method and reservation, each with its position
// in db.json's object so the server's export() prints db.json's order. It is
// the airline domain's own adapter to weft's generic seed format; weft never
// reads a tau2 db.json itself (docs/design/011-domain-adapters.md). Its
// output is committed as examples/servers/tau2-airline/seed.json (`make
// airline-seed`):
//
//	go run ./examples/servers/tau2-airline/convert \
//	    -db examples/data/tau2-airline/db.json \
//	    -schema examples/servers/tau2-airline/schema.sql \
//	    -o examples/servers/tau2-airline/seed.json
//
// Errors: a db.json that is not the airline shape (a record missing a
// member, a flight date of an unknown status) names the record.
package main
