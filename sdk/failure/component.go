package failure

import "fmt"

// Component is where a failure happened, a stable snake_case word.
type Component string

// Components.
const (
	Model      Component = "model"      // the policy endpoint (host Model service)
	Env        Component = "env"        // the episode's MegaMCP session (host Env service)
	User       Component = "user"       // the view's user (host User service)
	State      Component = "state"      // the episode's states (host State service)
	Module     Component = "module"     // a tool module's runtime
	MegaMCP    Component = "megamcp"    // the MegaMCP server
	Plugin     Component = "plugin"     // a plugin process or its connection
	Harness    Component = "harness"    // the harness's own doing
	Verifier   Component = "verifier"   // the verifier
	Attributor Component = "attributor" // the attributor
	Judge      Component = "judge"      // the rubric judge model
	Reference  Component = "reference"  // the task's reference replay
	Session    Component = "session"    // creating, restoring or reading the episode's session
	LedgerPart Component = "ledger"     // reading the session's ledger
	Task       Component = "task"       // the task itself
	Policy     Component = "policy"     // building the job's policy
	Scheduler  Component = "scheduler"  // the rollout scheduler
)

var components = []Component{Model, Env, User, State, Module, MegaMCP, Plugin, Harness,
	Verifier, Attributor, Judge, Reference, Session, LedgerPart, Task, Policy, Scheduler}

// Components returns every Component in declaration order.
func Components() []Component { return append([]Component(nil), components...) }

// Code joins via (the plugin that reported a failure, or ""), c and k into
// the one-word code reports show: "via_c_k" with the empty parts left out,
// the Scheduler component and the Failed kind never written ("deadline",
// "env_trap", "reference", "verifier_state_no_such_version").
func Code(via, c Component, k Kind) string {
	s := ""
	add := func(p string) {
		if p == "" {
			return
		}
		if s != "" {
			s += "_"
		}
		s += p
	}
	add(string(via))
	if c != Scheduler {
		add(string(c))
	}
	if k != Failed {
		add(string(k))
	}
	return s
}

// Error is a failure of a component: the one error type that carries both
// where and what without joining them into a string.
type Error struct {
	Component Component
	Kind      Kind
	Message   string
	Err       error // underlying error, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("%s: %s", e.Component, e.Kind)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// FailureKind returns e.Kind.
func (e *Error) FailureKind() Kind { return e.Kind }

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
