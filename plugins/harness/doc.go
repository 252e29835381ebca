// Package harness holds weft's built-in harnesses, one package each:
// react (tau-bench's ReAct text protocol), hermes (Hermes/Qwen
// <tool_call> blocks) and native (OpenAI function calling with skills and
// tool filtering). Each implements sdk/plugin's Harness interface; the
// shared episode loop (limits, deadlines, recording, failure handling) is
// in internal/loop, so a harness is only its prompt rendering and its
// response parsing. plugins/builtin looks them up by name.
package harness
