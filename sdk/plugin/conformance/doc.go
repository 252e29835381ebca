// Package conformance is weft's one plugin conformance suite: the checks a
// third party runs against its own harness plugin before handing it to
// weft, and the checks weft's built-in harnesses pass. It imports nothing
// host-side; its fake host services are sdk/plugin/plugintest's.
//
// Two ways to run it: Run(t, h, opts) in a Go test (each check a subtest),
// and RunHarness(ctx, h, opts), a Report (the form `weft plugin
// conformance [--json]` prints). h is a plugin.Harness in process, or the
// *plugin.HarnessClient of a launched plugin binary in any language.
//
// RunHarness drives the harness through a fixed set of episodes (16
// checks, the Check* constants in order) against a scripted model that
// answers in the harness's declared output format (native tool_calls,
// Hermes <tool_call> blocks or ReAct Thought/Action text; a custom format
// needs Options.Model), a two-tool environment (echo, lookup_order, ledger
// indices from 7000) and a user that opens the conversation and finishes
// after one reply.
//
// The checks follow the episode protocol the host relies on (see
// plugin.Harness): the opening message comes from User.Next (a user done
// at once ends the episode with no turn), every Generate is one Turn whose
// Prompt is exactly what the model received, tool calls go through
// Env.CallTool with unique call ids, their results go back to the model,
// unparseable output is a format-error turn, the limits end the episode
// with their terminations, and a host service error (Generate, CallTool,
// ListTools, User.Next) ends it with resp.Failure set and a nil error.
//
// A harness that declares plugin.CapabilityResume is also resumed from a
// three-message history (user, assistant with an echo call of id
// "call_0_0", its tool result) with a follow-up user message: its
// canonical messages must be the system message then exactly the history,
// the first prompt must hold the history (the user text and the tool
// result) and the follow-up, the first User.Next must get the history, the
// history's call must not run again and the new call's id must differ from
// the history's. Without the capability that check is skipped.
//
// Run adds two groups when their scripts are given in the harness's own
// format: Options.Script, thirteen scripted episodes against
// plugintest.NewOrderEnv with exact counts; Options.Resume, prompt-stable
// resuming (a resumed run's prompts equal the original run's), format-error
// turns dropped from a history, and an invalid history refused before any
// host call.
package conformance
