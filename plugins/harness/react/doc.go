// Package react is weft's ReAct harness, in the shape tau-bench uses: the
// tools are described in the system prompt (name, description and the
// JSON Schema of the parameters, one JSON object a line) and the model
// answers every turn with
//
//	Thought:
//	<one line of reasoning>
//	Action:
//	{"name": "<tool or respond>", "arguments": {...}}
//
// One action a turn. The action "respond" with {"content": text} is the
// message to the user; any other action is a tool call (id
// "call_<turn>_0") whose result goes back to the model as a user message
// "API output: <result>" ("API output: Error: <result>" for an is_error
// result). The model is asked for plugin.FormatReAct.
//
// Parsing is tolerant: the Action label is found case-insensitively (the
// first one followed by a readable call object wins), the JSON may be
// fenced in ```json, text may follow it, "Thought:" may be missing,
// arguments may be a JSON string holding an object. Anything else is a
// format-error turn: the model gets a user message saying what was wrong
// and how to answer, and tries again (it counts toward max_turns).
//
// In the canonical trajectory a tool turn is an assistant message whose
// content is the thought and whose tool_calls hold the call; a respond
// turn is an assistant message whose content is the message to the user
// and whose reasoning_content is the thought. Format-error turns appear
// only in Trajectory.Turns.
//
// Resuming (RunEpisodeRequest.History, capability "resume"): the
// history's assistant messages are rendered (Render) as the reply that
// parses back to them: "Thought:\n<thought>\nAction:\n" and the call
// object {"name": ..., "arguments": ...} with compact arguments (one
// Action line per call), or the respond action with {"content": ...}. Tool
// messages of the history go back as observations without the "Error: "
// mark (canonical tool messages carry no is_error). New call ids number
// the turns on past the history's ids, so they never repeat one of them.
//
// Settings (a JSON object; "" = defaults; unknown fields are an error):
//
//	observation_prefix  string  text before a tool result ("API output: ")
//	respond_action      string  action name of a message to the user
//	                            ("respond"; a tool of that name is shadowed)
package react
