// Package task holds weft's task definitions.
//
// A Task is a composed task: a DAG of Atomic tasks over one initial state,
// each one request with a reference solution (Calls) and executable Checks,
// plus the overall checks, a brief for the agentic view and an identity for
// the simulated user. Task files (format weft.tasks/v1, docs/tasks.md) are
// read by Load and LoadFile and written by Save; (*Task).Validate and
// (*Task).Order check and order the DAG. NewUser gives the user side of an
// episode under a view (agentic or simuser).
//
// The raw tau2-bench task shape (Tau2Task, from LoadTau2 and LoadTau2File)
// is kept as loaded; FromTau2 and ConvertTau2File turn tau2 tasks into
// composed tasks, one atomic task per state-changing gold action.
package task
