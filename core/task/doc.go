// Package task holds weft's task definitions.
//
// For now it holds the raw tau2-bench task shape (Tau2Task, loaded by
// LoadTau2 and LoadTau2File from a tau2 tasks.json) so that the offline
// scripted policy, the retail backend's tests and the demos can follow real
// benchmark tasks. weft's own task model (certified atomic tasks, composed
// tasks with entity bindings and a resettable initial state, the agentic and
// simulated-user views) lands here later and will build on, not replace,
// this loader.
package task
