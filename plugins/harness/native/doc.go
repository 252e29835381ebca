// Package native is weft's OpenAI function-calling harness with
// OpenClaw-style skills and tool filtering. The offered tools go in
// GenerateRequest.Tools (plugin.FormatNative) and the calls come from the
// response's tool_calls (a call without an id gets "call_<turn>_<i>", both
// 0-based); a response without tool calls is the message to the user, and
// an empty response (no tool calls, blank content) is a format-error turn.
// Results go back as tool messages (tool_call_id, name, content).
//
// Arguments that are not valid JSON are passed to Env exactly as the model
// wrote them (empty arguments as "{}"): the environment's schema
// validation answers with an is_error result the model can read, and the
// ledger records the bad call. The canonical trajectory keeps them as
// written too.
//
// Resuming (RunEpisodeRequest.History, capability "resume"): the
// history's messages go into the prompt as they are (assistant messages
// without reasoning_content, tool messages with the name of their call
// when theirs is empty). A model call id that is already used in the
// conversation is replaced by "call_<turn>_<i>" (turn numbers continue
// past the history), so ids stay unique; Turn.Response keeps the id the
// model gave.
//
// Skills are SKILL.md-like documents: a front matter between "---" lines
// with "name: ..." and "description: ..." (values may be quoted), then a
// markdown body. They come inline in settings and from skills_dirs (each
// directory's <sub>/SKILL.md files and its *.md files; the name defaults
// to the sub-directory's or file's name) and are added to the system
// prompt under "# Available skills": name, description and body
// (skills_mode "inline") or name, description and the file's path
// (skills_mode "path"; inline skills have no file and keep their body).
//
// Tool filtering: a tool is offered when the profile permits it, it
// matches one of allow (when allow is non-empty) and it matches none of
// deny; patterns are path.Match globs on the tool name. Profiles: "full"
// (the default) permits every tool, "readonly" the tools marked
// read_only; settings may define more. A call to a listed tool that is not
// offered, or to an unlisted name the globs reject, never reaches Env: it
// gets the is_error result "tool <name> is not allowed" (no ledger
// index). Other unlisted names go to Env, which reports unknown tools.
//
// Settings (a JSON object; "" = defaults; unknown fields are an error):
//
//	skills       [{"name", "description", "body"}]  inline skills
//	skills_dirs  [string]   directories to read skills from
//	skills_mode  string     "inline" (default) or "path"
//	allow        [string]   globs; non-empty = only matching tools
//	deny         [string]   globs; matching tools are never offered
//	profile      string     "full" (default), "readonly" or a profiles key
//	profiles     {name: {"allow": [string], "deny": [string],
//	              "read_only": bool}}  user-defined profiles
//
// Errors from RunEpisode: invalid settings, a bad glob, an unknown profile
// or one redefining "full" or "readonly", an unreadable skills directory or
// skill file, a skill without front matter, name or description, and two
// skills of the same name.
package native
