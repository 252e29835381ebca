// Package megamcp will be the serving layer: MCP sessions and lifecycle
// groups, tool modules shared across sessions with private per-session state,
// the tool-call ledger, async checkpoints, generation fencing, MCP transports
// and the admin API. It lands with the MegaMCP serving work; nothing is
// implemented here yet.
package megamcp
