// Package plugin is the Go SDK of weft's plugin protocol (weft.plugin.v1):
// out-of-process harness, verifier and attributor plugins served with
// hashicorp/go-plugin over gRPC, and the host side that starts and calls
// them. It imports nothing of weft's host side.
//
// # Plugin side
//
// A plugin binary implements Harness, Verifier or Attributor and calls
// Serve from main:
//
//	func main() { plugin.Serve(&plugin.ServeConfig{Harness: myHarness{}}) }
//
// Each call that carries a host broker id (RunEpisodeRequest.HostBrokerId
// and the like) gets a Host whose services (Model, Env, User, State) call
// back into the host over one cached broker connection per broker id; the
// SDK fills in episode_id on every host request. A host service failure
// reaches the plugin as a *HostError.
//
// # Host side
//
// Start starts a plugin process (handshake: MagicCookieKey "WEFT_PLUGIN",
// ProtocolVersion 1); Client.Harness, Client.Verifier and
// Client.Attributor return clients implementing the same interfaces. A
// call with a Host registers it under the request's episode id for the
// call's duration; one host-services gRPC server per Client, started on
// the first such call, dispatches the plugin's callbacks by episode id.
// A *HostError a host service returns reaches the plugin with the same
// Service, Kind and Message; other errors arrive as Kind "internal"
// (context errors as "deadline" or "canceled"). When the plugin's own
// context has ended, a host call returns that context's error instead,
// even if the host reported the propagated deadline first.
//
// Plugin calls fail with a *PluginError (Kind "exited", matching
// ErrPluginExited, when the process is gone; "unavailable"; "protocol";
// "error" when the plugin method returned an error), or with the caller's
// context error.
//
// HostSet and the func adapters (ModelFunc, EnvFuncs, UserFunc, StateFunc,
// StateFuncs) build a Host from parts. Package plugintest runs plugins in process
// against fake host services.
//
// # Wire encoding of errors
//
// See status.go: a *HostError is a gRPC status (code Aborted, Unavailable
// or DeadlineExceeded) with a google.protobuf.Struct detail
// {"weft_error": "host_error", "service": ..., "kind": ...} and the
// message as status message; a plugin method's own error is code Unknown
// with detail {"weft_error": "plugin_error"}.
package plugin
