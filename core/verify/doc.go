// Package verify will score episodes: executable checks and rubrics evaluated
// at K checkpoints (R = mean of r_k), with privileged access to the initial
// state, final state, diff and tool-call ledger that the agent never sees. It
// lands with the tasks and verification work; nothing is implemented here yet.
package verify
