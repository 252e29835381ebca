// Package tasks generates atomic tasks from a synthesized server's tool
// dependency graph and certifies weft.tasks/v1 tasks by execution against
// their servers (decision record 027, docs/certification.md).
//
// Certification (Certify) runs each atomic task's reference twice from a
// fresh fork of its initial state with two different session seeds and
// requires identical diffs and outputs; its checkpoint must pass on the
// reference's final state, fail on the initial state, and fail when any one
// state-changing reference call is dropped; a read-only atomic task must
// carry a required_call or communicate check; every binding must name an
// entity of the state. Each rejection has a Reason from a closed set and,
// where one is to blame, the failing call.
//
// Generation (Generate) builds one atomic task per write tool from the
// tools' input schemas and declared tables: the read tools whose outputs
// feed the write's *_id arguments, entity bindings sampled (seeded) from the
// seed state, request text from templates, checks changed_rows (write) or
// required_call (read); duplicates by signature are pruned and a coverage
// map (tool x read/write x error branch) drives regeneration rounds until
// coverage stops growing.
package tasks
