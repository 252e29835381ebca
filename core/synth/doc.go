// Package synth synthesizes tool environments from documentation: a
// Synthesizer turns Docs (MCP tool definitions, business requirements)
// into a synthesized server (sdk/spec, weft.server/v1) that the shared
// interpreter runs; validation runs every server through closed stages
// (interface, normal, boundary, diff, readback) whose Findings carry a
// closed Code, and revision feeds them back to the synthesizer (at most 3
// rounds). Three synthesizers stand behind the one interface:
// deterministic (offline, documentation alone), scripted (recorded answers
// with seeded faults) and endpoint (an OpenAI-compatible model with
// structured output). Task certification and composition come with the
// later work. Guide: docs/synthesis.md; validation and revision:
// docs/design/022-validation-and-revision.md.
package synth
