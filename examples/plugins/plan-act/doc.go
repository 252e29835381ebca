// Command plan-act is an example weft harness plugin built only against
// sdk/plugin. Its prompting idea: the model writes a short numbered plan
// alongside its first tool call, and the harness pins that plan into the
// system prompt of every later turn, so a long episode keeps its goal in
// view while the model acts through native function calling.
//
// Build it with
//
//	go build -o bin/plan-act ./examples/plugins/plan-act
//
// and check it with the conformance harness (see README.md). Settings, as
// a JSON object: {"pin_plan": false} turns the plan pinning off; unknown
// settings are refused.
package main
