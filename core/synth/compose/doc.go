// Package compose builds cross-server composed tasks from certified atomic
// tasks and grounds each in its own resettable initial state (decision
// record 026, docs/certification.md "Composition").
//
// Run generates a pool of certified atomic tasks per server
// (core/synth/tasks.Generate, several binding seeds), then per composed
// task samples atomic tasks across the servers with coverage-aware weights
// (the least-used tools first, a bonus for atomic tasks that share an
// entity with those already chosen), orders them as a DAG whose After edges
// come from read/write dependencies on shared entities (a row one writes
// that another writes or names), grounds the task in three rounds
// (Ground: entity initialization, relation completion, context enrichment
// with uniqueness checks) into a weft.state/v1 initial state, and
// re-certifies the composite reference on it with tasks.Certify. The
// lifecycle group is the task's servers; same-named tables stay apart
// through table namespaces (module.TableNamespaces).
//
// Everything is seeded: the same servers, seed and options give the same
// task file and initial states, byte for byte.
package compose
