// Package conformance is the plugin conformance harness: the checks a third
// party runs against its own harness plugin before handing it to weft.
//
// RunHarness drives a plugin.Harness (in process, or the *HarnessClient of a
// launched plugin binary) through a fixed set of episodes against fake host
// services built here: a scripted model that answers in the harness's
// declared output format (native tool_calls, Hermes <tool_call> blocks or
// ReAct Thought/Action text), a two-tool environment that records every call,
// and a user that opens the conversation and finishes after one reply. Each
// episode is one Check of the Report; TestHarness runs the same checks as
// subtests of a Go test.
//
// The checks follow the episode protocol the host relies on (see
// plugin.Harness): the opening message comes from User.Next, every Generate
// is one Turn whose Prompt is exactly what the model received, tool calls go
// through Env.CallTool with unique call ids, their results go back to the
// model, unparseable output is a format-error turn, the limits end the
// episode with their terminations, and a host service error ends it with
// resp.Failure set and a nil error.
//
// A harness that declares plugin.CapabilityResume is also resumed from a
// three-message history (user, assistant with an echo call of id
// "call_0_0", its tool result) with a follow-up user message: its
// canonical messages must be the system message then exactly the history,
// the first prompt must hold the history (the user text and the tool
// result) and the follow-up, the first User.Next must get the history, the
// history's call must not run again and the new call's id must differ from
// the history's. Without the capability that check is skipped.
package conformance
