// Package sqlhost exposes SQL to tool modules: the weft_sql_v1 host library
// of docs/abi.md. Handle implements the request/response JSON of the query
// function over a small Executor interface, enforcing the module's table
// policy before a statement runs; HostModule builds the wazero host module
// that routes a guest's query/take calls to the SQL handler of the call
// environment (hosts.Call) bound to the call's context. The request and
// response are the shared wire types of sdk/abi. The package imports nothing
// of core: the module runtime adapts a state unit of work to Executor and
// classifies its errors. The policy check here is a first gate on the
// statement text; the engine checks it again by scope (core/state.Sandbox),
// and an Executor reports its refusals as a *DeniedError.
package sqlhost
