// Package attribute assigns each failed checkpoint of a verified episode to
// the component at fault: the policy, the environment (a tool module), the
// task (its reference solution) or the verifier (a check). In WEFT a failed
// checkpoint is a learning signal only when the policy is to blame; the
// other classes route the failure to the revision loop of the faulty
// component instead (Attribution.Revise names it).
//
// Attribute applies a fixed list of small rules to each failed checkpoint,
// first match wins:
//
//  1. environment: a ledger call of a tool the checkpoint needs failed
//     inside the module (trap, deadline, memory_limit, malformed_output,
//     internal);
//  2. task: the reference replay from the initial state has an error or an
//     infrastructure failure in the action of the checkpoint's atomic task
//     (for overall, of any), and every failed check depends on that step
//     (a required call of it; the agent's same call failing the same way;
//     a state the failing step explains: see referenceDependency);
//  3. verifier: every failed check of the checkpoint is contradicted by the
//     evidence (rows it lists as missing are in the final state, the ledger
//     holds the reference's state-changing calls and the final state has
//     their changes, the required call is in the ledger, the text is in an
//     agent message);
//  4. policy: anything else.
//
// The evidence text of each Attribution names the ledger indexes, reference
// calls and rows the decision rests on.
package attribute
