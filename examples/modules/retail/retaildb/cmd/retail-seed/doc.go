// Command retail-seed converts tau2-bench retail's db.json into the seed state
// of the retail tool module: a weft.state/v1 export over retaildb's schema,
// which `weft module build` bundles as seed.json. It is the retail domain's
// adapter to weft's one generic seed format: weft itself never reads a
// tau2 db.json (docs/design/011-domain-adapters.md). Its output is
// committed as examples/data/tau2-retail/db.state.json (`make retail-seed`):
//
//	go run ./examples/modules/retail/retaildb/cmd/retail-seed \
//	    -db examples/data/tau2-retail/db.json -o examples/data/tau2-retail/db.state.json
package main
