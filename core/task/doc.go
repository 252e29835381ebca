// Package task will define tasks: certified atomic tasks, composed tasks
// (a cross-server DAG with entity bindings and a resettable initial state) and
// the two task views (agentic: the full brief; simuser: a simulated user that
// reveals one request at a time). It lands with the tasks and verification
// work; nothing is implemented here yet.
package task
