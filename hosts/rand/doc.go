// Package rand will give tool modules per-session seeded randomness as host
// functions, so replaying a session replays its random choices. It lands with
// the tool-module work; nothing is implemented here yet.
package rand
