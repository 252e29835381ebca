// Package plugintest is weft's one set of fake host services for plugin
// tests, the kit the conformance suite (sdk/plugin/conformance), the
// built-in harnesses' tests and third-party plugins share.
//
// Fakes, each recording what it receives and safe for concurrent use:
// FakeModel (replies in order: a GenerateResponse, a Message, a content
// string or an error; or a Func; or Block until the deadline), FakeEnv
// (tools as ToolFuncs, ledger indices from LedgerBase, host failures at
// FailCall or FailList; NewOrderEnv is a two-tool order environment),
// FakeUser (messages in order, then done; a failure at FailAt). Host
// combines them into the plugin.Host of an episode.
//
// Running: Episode runs one episode of a Harness in process; RunHarness
// runs it through the same gRPC adapters and go-plugin broker callbacks a
// real plugin process uses (over a local socket instead of a
// subprocess); Connect serves a harness, verifier or attributor for
// several calls.
//
// Golden files and comparisons: Transcript renders an episode as a txtar
// archive (per turn the prompt, raw response and parsed calls; then the
// canonical messages and the termination), Golden compares it with a
// file or rewrites it (-update), Diff and DiffMessages compare protocol
// messages, Strip zeroes wall-clock durations, CheckSettingsSchema checks
// a harness's settings schema against its Go settings struct.
package plugintest
