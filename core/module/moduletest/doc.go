// Package moduletest is the harness tool-module authors use to prove a
// module matches a reference implementation: it replays recorded call
// sequences from the module's seed state and compares, call by call, the
// error classification and the JSON-equal output, then the final state
// through the module's export hook. `weft module test` is its command line.
//
// The cases format (JSON; docs/module-test.md, with the extra keys of the
// shared oracle formats that Read accepts) is:
//
//	{"source": "...", "cases": [
//	  {"id": "task-12",
//	   "calls": [{"name": tool, "arguments": {...}, "error": bool, "output": <JSON>}, ...],
//	   "final_changes": {"users"|...: {key: full record after the sequence}}}]}
//
// Comparison rules: the same success/error classification; on success the
// output equal to the first text content of the result parsed as JSON (or
// taken as a string when it is not JSON), with numbers equal by value
// (12.0 == 12) and floats within 1e-9 relative; error wording is free. After
// the last call, when the module has an export hook, the records whose
// export differs from the seed's equal final_changes and nothing else
// changed. Records are compared as the reference's data model sees them: an
// object key holding null equals an absent key (tau2's records print unset
// optional fields as null, its db.json leaves them out).
package moduletest
