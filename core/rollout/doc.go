// Package rollout will run episodes: a task view x a harness x a policy over
// one session, picked by the configured mix, under a scheduler with hard
// concurrency caps. It lands with the plugins/harnesses and rollout work;
// nothing is implemented here yet.
package rollout
