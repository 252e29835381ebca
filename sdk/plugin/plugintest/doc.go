// Package plugintest runs weft plugins in process against fake host
// services, through the same gRPC adapters and go-plugin broker callbacks a
// real plugin process uses (over a local socket instead of a subprocess).
//
// RunHarness runs one episode of a Harness; Connect serves a harness,
// verifier or attributor for several calls. FakeModel (scripted
// GenerateResponses or a func), FakeEnv (tools as funcs) and FakeUser
// (scripted messages, then done) record what they receive; combine them
// into a plugin.HostSet.
package plugintest
