// Package plugins is the home of weft's plugin protocol and its built-in
// plugins.
//
//   - proto/weft/plugin/v1/plugin.proto: the versioned gRPC protocol
//     (weft.plugin.v1): plugin services Harness, Verifier, Attributor; host
//     services Model, Env, User, State. Its Go code is generated into
//     sdk/plugin/pluginpb (make proto); this package's test fails when that
//     code is stale.
//   - harness/: the built-in harnesses react, hermes and native.
//   - builtin/: the built-ins by name, for the launcher.
//   - host/: weft's side of the protocol: host services over policies and
//     MegaMCP sessions, the launcher (built-ins are the weft binary
//     re-executed as `weft plugin serve NAME`), episodes.
//
// The SDK plugin authors import is sdk/plugin (docs/plugins.md).
package plugins
