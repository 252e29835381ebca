// Command retail-seed converts tau2-bench retail's db.json into the seed state
// of the retail tool module: a weft.state/v1 export over retaildb's schema,
// which `weft module build` bundles as seed.json.
//
//	go run ./examples/modules/retail/retaildb/cmd/retail-seed \
//	    -db examples/data/tau2-retail/db.json -o build/retail-seed.json
package main
