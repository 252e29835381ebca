package module

import (
	"fmt"

	"github.com/weft-dev/weft/sdk/failure"
)

// Errors of the module runtime. Every error Compile and Call return for a
// module or call problem wraps one of these, so callers test with errors.Is;
// each carries its sdk/failure Kind (failure.Of(err) classifies any error
// wrapping one: invalid_module, unknown_tool, invalid_arguments, trap,
// deadline, step_budget, canceled, memory_limit, malformed_output, closed).
var (
	// ErrInvalidModule: the wasm does not compile, lacks an ABI v1 export,
	// imports something the host does not provide, or its manifest is
	// invalid (*ModuleError).
	ErrInvalidModule = failure.NewKindError(failure.InvalidModule, "invalid tool module")
	// ErrUnknownTool: the manifest declares no tool of that name.
	ErrUnknownTool = failure.NewKindError(failure.UnknownTool, "unknown tool")
	// ErrInvalidArguments: the arguments do not satisfy the tool's input
	// schema (*ArgumentError); the module was not run.
	ErrInvalidArguments = failure.NewKindError(failure.InvalidArguments, "invalid tool arguments")
	// ErrTrap: the module trapped, panicked, exited or answered with an
	// internalError (*CallError).
	ErrTrap = failure.NewKindError(failure.Trap, "tool module trapped")
	// ErrDeadline: the call exceeded its deadline (the context's or
	// Config.CallTimeout) (*CallError).
	ErrDeadline = failure.NewKindError(failure.Deadline, "tool call deadline exceeded")
	// ErrStepBudget: a synthesized server's program ran out of its
	// interpreter step budget (internal error code abi.InternalSteps)
	// (*CallError). Not retryable: the same call fails the same way.
	ErrStepBudget = failure.NewKindError(failure.StepBudget, "tool call out of its step budget")
	// ErrCanceled: the caller's context was canceled during the call
	// (*CallError).
	ErrCanceled = failure.NewKindError(failure.Canceled, "tool call canceled")
	// ErrMemoryLimit: the module needed more memory than its cap
	// (*CallError).
	ErrMemoryLimit = failure.NewKindError(failure.MemoryLimit, "tool module memory limit exceeded")
	// ErrMalformedOutput: the response is not a CallToolResult
	// (*CallError).
	ErrMalformedOutput = failure.NewKindError(failure.MalformedOutput, "malformed tool module output")
	// ErrClosed: the Runtime was closed.
	ErrClosed = failure.NewKindError(failure.Closed, "module runtime closed")
)

// ModuleError is a module refused by Compile. It wraps ErrInvalidModule.
type ModuleError struct {
	Digest string // sha256:<hex> of the wasm
	Reason string
	Err    error // underlying error (wazero, JSON, schema), if any
}

func (e *ModuleError) Error() string {
	s := "module " + shortDigest(e.Digest) + ": " + ErrInvalidModule.Error() + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ModuleError) Is(target error) bool { return target == ErrInvalidModule }
func (e *ModuleError) Unwrap() error        { return e.Err }

func shortDigest(d string) string {
	if len(d) > 19 {
		return d[:19]
	}
	return d
}

// ArgumentError is a call whose arguments failed the tool's input schema.
// It wraps ErrInvalidArguments.
type ArgumentError struct {
	Tool    string
	Pointer string // JSON pointer of the failing value in the arguments ("" for the whole object)
	Message string
}

func (e *ArgumentError) Error() string {
	p := e.Pointer
	if p == "" {
		p = "/"
	}
	return fmt.Sprintf("tool %s: invalid arguments at %s: %s", e.Tool, p, e.Message)
}

func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArguments }

// CallError is an infrastructure failure of a tool call: Kind is ErrTrap,
// ErrDeadline, ErrStepBudget, ErrCanceled, ErrMemoryLimit or
// ErrMalformedOutput. The
// call's SQL writes were rolled back and the instance discarded.
type CallError struct {
	Tool    string
	Kind    error
	Message string   // what went wrong (trap message, internalError text, ...)
	Code    string   // an internalError answer's code (abi.Internal*), else ""
	Denied  []string // SQL statements the table policy refused during the call
	Err     error    // underlying wazero error, if any
}

func (e *CallError) Error() string {
	s := fmt.Sprintf("tool %s: %v", e.Tool, e.Kind)
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *CallError) Is(target error) bool { return target == e.Kind }
func (e *CallError) Unwrap() error        { return e.Err }

// FailureKind is failure.InvalidModule.
func (e *ModuleError) FailureKind() failure.Kind { return failure.InvalidModule }

// FailureKind is failure.InvalidArguments.
func (e *ArgumentError) FailureKind() failure.Kind { return failure.InvalidArguments }

// FailureKind is the Kind of e.Kind (trap, deadline, step_budget,
// canceled, memory_limit or malformed_output).
func (e *CallError) FailureKind() failure.Kind { return failure.Of(e.Kind) }
