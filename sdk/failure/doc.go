// Package failure is weft's one failure vocabulary: what went wrong (Kind)
// and where (Component), from the tool-module runtime through MegaMCP, the
// plugin protocol, the rollout scheduler and attribution.
//
// Domain error types implement Kinder (FailureKind() Kind); Of classifies
// any error with it (context errors too), so there is one classify
// function instead of a switch per layer. Every Kind is documented in
// Kinds (meaning, whether it is an infrastructure failure or part of the
// episode, whether retrying the episode may help, and which component is
// to blame); docs/episodes.md lists the same kinds, checked by a test.
//
// The stable strings are the snake_case Kind and Component values (ledger
// records, admin API error codes and the plugin protocol's enums use the
// same names). Code joins a component and a kind into the one-word code
// rollout outcomes and reports have always shown ("env_trap",
// "plugin_exited", "harness_deadline", "deadline"), but only for display
// and JSON: code never parses kinds out of strings it did not build.
//
// The package imports only the standard library, so tool SDKs, plugin
// SDKs and the host share it.
package failure
