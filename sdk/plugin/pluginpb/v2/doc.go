// Package pluginv2 is the generated Go code of the weft plugin protocol
// version 2 (plugins/proto/weft/plugin/v2/plugin.proto; make proto),
// which sdk/plugin serves and aliases; see
// docs/design/010-plugin-protocol-v2.md.
package pluginv2
