// Package hermes is weft's Hermes/Qwen-style harness. The system prompt
// holds the tools inside <tools></tools>, one JSON function signature a
// line ({"type": "function", "function": {"name", "description",
// "parameters"}}), and asks for calls as
//
//	<tool_call>
//	{"name": "<tool>", "arguments": {...}}
//	</tool_call>
//
// blocks; a reply without a block is the message to the user. The results
// of a turn's calls go back as ONE user-role message holding one
// <tool_response>\n<content>\n</tool_response> block per call, in call
// order ("Error: " before the content of an is_error result). The model is
// asked for plugin.FormatHermes. Calls get ids "call_<turn>_<i>" (both
// 0-based; i counts the readable calls of the turn).
//
// Parsing is tolerant of the known failure modes:
//   - several blocks in one message: all run, in order;
//   - text before, between or after the blocks: kept as the message's
//     content in the canonical trajectory (without the blocks);
//   - an unclosed final <tool_call>: the block runs to the end of the text;
//   - arguments given as a JSON string holding an object, or under
//     "parameters": accepted; a ```json fence inside a block: accepted;
//   - <think>...</think> reasoning (also an unclosed <think>, and a
//     </think> without its opening tag, as Qwen3 templates produce): blocks
//     inside it are reasoning, not calls, unless there is no block outside
//     the reasoning at all; then the blocks inside it are used (Qwen-style
//     models sometimes put the real call there). Setting calls_in_think
//     "ignore" never uses them;
//   - a block whose JSON cannot be read is a format error for that block
//     only: the readable calls still run, and the feedback comes after
//     their results in the same user message. A reply whose blocks are all
//     unreadable, or with neither a block nor text outside the reasoning,
//     is a format-error turn (feedback, retry, counts toward max_turns).
//
// In the canonical trajectory an assistant message's content is its text
// outside the reasoning with the used blocks removed, its
// reasoning_content the reasoning (the response's own reasoning_content
// first), its tool_calls the parsed calls.
//
// Resuming (RunEpisodeRequest.History, capability "resume"): the
// history's assistant messages are rendered (Render) as the content, then
// a "<tool_call>\n{"name": ..., "arguments": ...}\n</tool_call>" block
// per call (compact arguments), newline-separated; reasoning is not
// rendered. Tool
// messages of the history go back as observations without the "Error: "
// mark (canonical tool messages carry no is_error). New call ids number
// the turns on past the history's ids, so they never repeat one of them.
//
// Settings (a JSON object; "" = defaults; unknown fields are an error):
//
//	calls_in_think  "fallback" (default) or "ignore": whether <tool_call>
//	                blocks inside <think> are used when none is outside
package hermes
