// Package abi is the normative Go definition of the wire types of the weft
// tool-module ABI v1 (docs/abi.md): what a module and the host exchange as
// JSON. Both sides import it, the guest SDK (sdk/tool) and the host
// (core/module, hosts/sql), so nothing of the contract is mirrored by hand:
//
//   - the manifest a module returns from weft_v1_manifest (Manifest, Tool,
//     Tables, Resource, ResourceTemplate, Prompt);
//   - a call request and its answers (CallRequest; CallResult with Content
//     items; ResourceResult, PromptResult for the reserved requests
//     ResourceReadRequest and PromptGetRequest; Refusal, the error answer of
//     those; InternalError, the answer of a module bug; Answer, every member
//     an answer may hold, for decoding);
//   - the weft_sql_v1 request and response (SQLRequest with TypedValue
//     arguments, SQLResponse with SQLError), the SQL error kinds (Kind*) and
//     column types (Type*), and DecodeSQLResponse, a fast decoder for guests.
//
// Encodings are byte-compatible with ABI v1 as published: field names, key
// order and the omission rules are those of docs/abi.md, so modules
// compiled before this package existed (and modules in other languages,
// such as examples/modules/c-notes) keep working. Within v1 a type may gain
// optional fields; decoders ignore fields they do not know.
//
// The package imports only the standard library (a test checks it), so a
// guest built for wasip1 pulls in nothing of the host side.
package abi
