package failure

import (
	"context"
	"errors"
)

// Kind is what went wrong, a stable snake_case word.
type Kind string

// Kinds of tool calls (core/module runtime errors, the "kind" of a failed
// ledger record).
const (
	// InvalidArguments: the arguments do not satisfy the tool's input
	// schema; the module did not run.
	InvalidArguments Kind = "invalid_arguments"
	// UnknownTool: no tool of that name.
	UnknownTool Kind = "unknown_tool"
	// Trap: the module trapped, panicked, exited or answered internalError.
	Trap Kind = "trap"
	// Deadline: a deadline passed (a tool call's, a harness's, the
	// scheduler's per-attempt one, a host call's).
	Deadline Kind = "deadline"
	// StepBudget: a synthesized server's program ran out of its per-call
	// interpreter step budget (sdk/interp): a loop or runaway computation
	// of the program, deterministic in the state and arguments, so running
	// it again fails the same way.
	StepBudget Kind = "step_budget"
	// Canceled: the caller canceled.
	Canceled Kind = "canceled"
	// MemoryLimit: the module needed more memory than its cap.
	MemoryLimit Kind = "memory_limit"
	// MalformedOutput: the module's answer is not a CallToolResult.
	MalformedOutput Kind = "malformed_output"
	// Internal: an unexpected failure with no better kind.
	Internal Kind = "internal"
	// InvalidModule: the wasm does not compile or its manifest is invalid.
	InvalidModule Kind = "invalid_module"
)

// Kinds of the MegaMCP server (admin API error codes, docs/api.md).
const (
	StaleGeneration Kind = "stale_generation"
	NoSuchSession   Kind = "no_such_session"
	NoSuchVersion   Kind = "no_such_version"
	NoSuchModule    Kind = "no_such_module"
	BadRequest      Kind = "bad_request"
	Ledger          Kind = "ledger"
	Closed          Kind = "closed"
)

// Kinds of model endpoints (core/model).
const (
	Unavailable Kind = "unavailable"
	Timeout     Kind = "timeout"
	RateLimited Kind = "rate_limited"
	Server      Kind = "server"
	BadResponse Kind = "bad_response"
)

// Kinds of plugins and host services.
const (
	// Exited: the plugin process is gone.
	Exited Kind = "exited"
	// Protocol: the peer does not speak the host's plugin protocol version.
	Protocol Kind = "protocol"
	// Start: the plugin process could not be started.
	Start Kind = "start"
	// OwnError: the plugin (or harness) reported its own error.
	OwnError Kind = "error"
	// NoEpisode: a host call named an episode not running on the host.
	NoEpisode Kind = "no_episode"
	// Exhausted: a scripted or capped service has no more answers.
	Exhausted Kind = "exhausted"
	// Failed: an executor stage failed (Component says which one).
	Failed Kind = "failed"
	// NoSuchView: the task has no such view.
	NoSuchView Kind = "no_such_view"
	// Unauthenticated: a host call carried no or a wrong bearer token.
	Unauthenticated Kind = "unauthenticated"
)

// Blame names the component a failure of a kind is laid at: the
// attribution class of an environment failure, or the infrastructure.
type Blame string

// Blames.
const (
	BlamePolicy         Blame = "policy"         // the agent's doing: part of the episode
	BlameEnvironment    Blame = "environment"    // a tool module or its runtime
	BlameInfrastructure Blame = "infrastructure" // endpoints, plugins, servers, the host
	BlameTask           Blame = "task"           // the task's own data
)

// Info documents a Kind.
type Info struct {
	Kind Kind
	// Meaning in one sentence.
	Meaning string
	// Infra: an infrastructure failure (the episode is not scored); false:
	// part of the episode (the model reads it and goes on).
	Infra bool
	// Retryable: running the episode again may succeed.
	Retryable bool
	Blame     Blame
}

var infos = []Info{
	{InvalidArguments, "the tool's arguments do not satisfy its input schema; the module did not run", false, false, BlamePolicy},
	{UnknownTool, "no tool of that name", false, false, BlamePolicy},
	{Trap, "the tool module trapped, panicked, exited or answered internalError", true, true, BlameEnvironment},
	{Deadline, "a deadline passed (tool call, harness, host call or the scheduler's per-attempt deadline)", true, true, BlameInfrastructure},
	{Canceled, "the caller canceled the work (not retried: the caller is gone)", true, false, BlameInfrastructure},
	{MemoryLimit, "the tool module needed more memory than its cap", true, true, BlameEnvironment},
	{MalformedOutput, "the tool module answered something that is not a CallToolResult", true, true, BlameEnvironment},
	{Internal, "an unexpected failure with no better kind", true, false, BlameInfrastructure},
	{InvalidModule, "the wasm does not compile, lacks the ABI or its manifest is invalid", true, false, BlameEnvironment},
	{StaleGeneration, "the request carried a stale session generation (the session was restored); nothing changed", true, true, BlameInfrastructure},
	{NoSuchSession, "the session id is unknown", true, true, BlameInfrastructure},
	{NoSuchVersion, "the version id (or version name) is unknown", true, false, BlameInfrastructure},
	{NoSuchModule, "a module reference does not resolve in the registry", true, false, BlameInfrastructure},
	{BadRequest, "a malformed request (bad JSON, missing field, a prompt over the context length)", true, false, BlameInfrastructure},
	{Ledger, "the ledger could not be written; the call was undone and not acknowledged", true, true, BlameInfrastructure},
	{Closed, "the server is shutting down", true, true, BlameInfrastructure},
	{Unavailable, "the service could not be reached or dropped the connection", true, true, BlameInfrastructure},
	{Timeout, "an endpoint attempt ran past its request timeout", true, true, BlameInfrastructure},
	{RateLimited, "the endpoint rate-limited the call (HTTP 429)", true, true, BlameInfrastructure},
	{Server, "the endpoint answered HTTP 5xx", true, true, BlameInfrastructure},
	{BadResponse, "the endpoint answered 2xx with a body that cannot be used", true, false, BlameInfrastructure},
	{Exited, "the plugin process is gone (crashed, killed or exited)", true, true, BlameInfrastructure},
	{Protocol, "the peer does not speak the host's plugin protocol (not a weft plugin, another protocol version, a missing method)", true, true, BlameInfrastructure},
	{Start, "the plugin process could not be started", true, true, BlameInfrastructure},
	{OwnError, "the plugin or harness reported its own error (e.g. invalid settings)", true, false, BlameInfrastructure},
	{NoEpisode, "a host call named an episode that is not running on the host", true, true, BlameInfrastructure},
	{Exhausted, "a scripted or capped service has no more answers", true, false, BlameInfrastructure},
	{Failed, "an executor stage failed (the component says which: reference, session, ledger, judge, verifier, attributor, harness)", true, true, BlameInfrastructure},
	{NoSuchView, "the task has no such view", true, false, BlameTask},
	{Unauthenticated, "a host call carried no or a wrong bearer token", true, false, BlameInfrastructure},
	{StepBudget, "a synthesized server's program ran out of its per-call interpreter step budget (a runaway loop: deterministic, so not retried)", true, false, BlameEnvironment},
}

var byKind = func() map[Kind]Info {
	m := make(map[Kind]Info, len(infos))
	for _, i := range infos {
		m[i.Kind] = i
	}
	return m
}()

// Kinds returns every documented Kind in declaration order.
func Kinds() []Info { return append([]Info(nil), infos...) }

// Info returns k's documentation; ok is false for an undocumented kind.
func (k Kind) Info() (Info, bool) {
	i, ok := byKind[k]
	return i, ok
}

// Known reports whether k is documented.
func (k Kind) Known() bool { _, ok := byKind[k]; return ok }

// Infra reports whether k is an infrastructure failure (unknown kinds are).
func (k Kind) Infra() bool {
	i, ok := byKind[k]
	return !ok || i.Infra
}

// Retryable reports whether running the episode again may succeed.
func (k Kind) Retryable() bool { return byKind[k].Retryable }

// Blame returns the component k is laid at (infrastructure when unknown).
func (k Kind) Blame() Blame {
	if i, ok := byKind[k]; ok {
		return i.Blame
	}
	return BlameInfrastructure
}

// InModule reports whether a tool call that failed with k failed inside
// its module though the call was well-formed: trap, deadline,
// step_budget, memory_limit, malformed_output and internal (attribution's
// environment evidence).
func (k Kind) InModule() bool {
	switch k {
	case Trap, Deadline, StepBudget, MemoryLimit, MalformedOutput, Internal:
		return true
	}
	return false
}

// Kinder is implemented by errors that know their Kind.
type Kinder interface {
	FailureKind() Kind
}

// Of classifies err: "" for nil; the Kind of the first error in err's
// chain implementing Kinder; Deadline and Canceled for context errors;
// Internal otherwise.
func Of(err error) Kind {
	if err == nil {
		return ""
	}
	var k Kinder
	if errors.As(err, &k) {
		return k.FailureKind()
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Deadline
	case errors.Is(err, context.Canceled):
		return Canceled
	}
	return Internal
}

// KindError is a sentinel error carrying a Kind: errors.Is matches it
// by identity, Of reads its Kind. Packages declare their Err* values with
// NewKindError so that wrapping errors classify without a switch.
type KindError struct {
	kind Kind
	msg  string
}

// NewKindError returns a sentinel error of kind k with text msg.
func NewKindError(k Kind, msg string) *KindError { return &KindError{k, msg} }

func (e *KindError) Error() string { return e.msg }

// FailureKind returns the error's Kind.
func (e *KindError) FailureKind() Kind { return e.kind }
