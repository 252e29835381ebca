// Package pluginv2 is the generated Go code of the weft plugin protocol
// version 2 (plugins/proto/weft/plugin/v2/plugin.proto; make proto). The
// SDK still serves version 1 (sdk/plugin/pluginpb); see
// docs/design/010-plugin-protocol-v2.md for the switch.
package pluginv2
