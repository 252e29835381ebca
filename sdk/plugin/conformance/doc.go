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
package conformance
