// Package wire converts between weft's host types and the plugin
// protocol v2 messages (sdk/plugin/pluginpb/v2): one converter pair per
// message, in one place, each round-trip tested.
//
//   - Value: Go JSON/SQL values (nil, bool, int64, float64, string,
//     []byte, []any, map[string]any) <-> *pluginv2.Value; JSON text <->
//     *pluginv2.Value (integers stay int64). Other SQL types
//     (decimal.Decimal, time.Time, unsigned and narrow integers) are sent
//     as their exact text or widened and come back as string / int64.
//   - Task: *task.Task <-> *pluginv2.Task (atomic tasks, checks of every
//     kind, rubric items, bindings, after-edges).
//   - Changes: *state.Changes <-> *pluginv2.Changes.
//   - LedgerCall: megamcp.Record <-> *pluginv2.LedgerCall.
//   - Checkpoint: verify.Checkpoint <-> *pluginv2.Checkpoint.
//   - Attribution: attribute.Attribution <-> *pluginv2.Attribution.
//   - Failure: (failure.Component, failure.Kind) <-> *pluginv2.Failure.
package wire
