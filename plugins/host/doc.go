// Package host is weft's side of the plugin protocol: it serves the host
// services a plugin reaches back to (Model over a core/model.Policy, Env
// over a MegaMCP session so every tool call is ledgered, User for the
// task's view), starts the built-in harnesses as separate processes (the
// weft binary re-executed as `weft plugin serve NAME`), and runs one
// episode of a harness (Run).
//
// Failures that are not the policy's are typed and kept apart from the
// trajectory: a host service failure reaches the harness as a
// plugin.HostError and comes back as Result.Failure; a plugin process that
// dies comes back as a *plugin.PluginError.
package host
