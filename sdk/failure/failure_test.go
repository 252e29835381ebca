package failure_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/weft-dev/weft/sdk/failure"
)

type domainErr struct{}

func (domainErr) Error() string             { return "domain" }
func (domainErr) FailureKind() failure.Kind { return failure.Trap }

func TestOf(t *testing.T) {
	sentinel := failure.NewKindError(failure.NoSuchSession, "no such session")
	cases := []struct {
		err  error
		want failure.Kind
	}{
		{nil, ""},
		{domainErr{}, failure.Trap},
		{fmt.Errorf("wrapped: %w", domainErr{}), failure.Trap},
		{fmt.Errorf("x: %w", sentinel), failure.NoSuchSession},
		{context.DeadlineExceeded, failure.Deadline},
		{fmt.Errorf("y: %w", context.Canceled), failure.Canceled},
		{errors.New("plain"), failure.Internal},
		{&failure.Error{Component: failure.Model, Kind: failure.Timeout}, failure.Timeout},
	}
	for _, c := range cases {
		if got := failure.Of(c.err); got != c.want {
			t.Errorf("Of(%v) = %q, want %q", c.err, got, c.want)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", sentinel), sentinel) {
		t.Error("errors.Is does not match a wrapped KindError")
	}
}

func TestKindsDocumented(t *testing.T) {
	seen := map[failure.Kind]bool{}
	for _, i := range failure.Kinds() {
		if seen[i.Kind] {
			t.Errorf("kind %q listed twice", i.Kind)
		}
		seen[i.Kind] = true
		if i.Meaning == "" || i.Blame == "" {
			t.Errorf("kind %q: meaning or blame missing", i.Kind)
		}
		if !i.Kind.Known() {
			t.Errorf("kind %q not Known", i.Kind)
		}
	}
	if failure.Kind("nope").Known() || !failure.Kind("nope").Infra() {
		t.Error("an unknown kind must be unknown and infrastructure")
	}
	if failure.InvalidArguments.Infra() || !failure.Trap.Infra() || !failure.Trap.Retryable() || failure.OwnError.Retryable() {
		t.Error("infra/retryable flags of invalid_arguments, trap or error are wrong")
	}
	var in []failure.Kind
	for _, i := range failure.Kinds() {
		if i.Kind.InModule() {
			in = append(in, i.Kind)
		}
	}
	if !failure.StepBudget.Infra() || failure.StepBudget.Retryable() || failure.StepBudget.Blame() != failure.BlameEnvironment || !failure.Deadline.Retryable() {
		t.Error("step_budget must be an environment failure that is not retried (unlike deadline)")
	}
	if fmt.Sprint(in) != "[trap deadline memory_limit malformed_output internal step_budget]" {
		t.Errorf("InModule kinds = %v", in)
	}
}

func TestCode(t *testing.T) {
	cases := []struct {
		via, c failure.Component
		k      failure.Kind
		want   string
	}{
		{"", failure.Env, failure.Trap, "env_trap"},
		{"", failure.Plugin, failure.Exited, "plugin_exited"},
		{"", failure.Scheduler, failure.Deadline, "deadline"},
		{"", failure.Reference, failure.Failed, "reference"},
		{"", failure.Harness, failure.OwnError, "harness_error"},
		{failure.Verifier, failure.State, failure.NoSuchVersion, "verifier_state_no_such_version"},
		{"", failure.Scheduler, failure.Internal, "internal"},
	}
	for _, c := range cases {
		if got := failure.Code(c.via, c.c, c.k); got != c.want {
			t.Errorf("Code(%q, %q, %q) = %q, want %q", c.via, c.c, c.k, got, c.want)
		}
	}
}
