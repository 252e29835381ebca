package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/verify"
	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/spec"
)

// CallTimeout is the per-call deadline certification runs tool calls
// with (weft synth tasks, certify and compose alike): long enough that a
// loaded machine does not turn a reference call into a deadline failure,
// so the same tasks give the same verdicts (module.Config.CallTimeout).
const CallTimeout = 30 * time.Second

// ErrInfra wraps the error Exec returns when a call failed for a reason
// that is no fault of the task (a deadline, the module unavailable or
// closed; failure.Kind blame infrastructure and retryable): such a call
// is never a certification verdict.
var ErrInfra = errors.New("tasks: infrastructure failure, not a verdict on the task")

// Env is one lifecycle group to run references on: the modules, the store
// holding their merged seed state, and the tool routing. A tool name two
// modules share is reachable only as "<module>__<tool>" (as megamcp names
// it); every other tool by its own name.
type Env struct {
	Store   *state.Store
	Seed    *state.Version
	Modules []*module.Module
	// Tables is how the modules keep their tables: namespaced when two of
	// them own a table of the same name (module.TableNamespaces); the seed
	// must then hold the namespaced tables (SpecEnv builds it so).
	Tables module.GroupTables

	route    map[string]routed
	readOnly map[string]bool
	names    []string
	// index caches the value index of versions by hash (binding checks);
	// shared by every Certify over this Env.
	index *indexCache
}

type routed struct {
	mod  *module.Module
	tool string
}

// NewEnv returns the Env of mods over seed (a version of store). Errors: no
// module, a nil seed.
func NewEnv(store *state.Store, seed *state.Version, mods ...*module.Module) (*Env, error) {
	if len(mods) == 0 {
		return nil, errors.New("tasks: an environment needs at least one module")
	}
	if store == nil || seed == nil {
		return nil, errors.New("tasks: an environment needs a store and a seed version")
	}
	e := &Env{Store: store, Seed: seed, Modules: mods, route: map[string]routed{}, readOnly: map[string]bool{}, index: newIndexCache()}
	mfs := make([]*module.Manifest, len(mods))
	for i, m := range mods {
		mfs[i] = m.Manifest()
	}
	tables, err := module.TableNamespaces(mfs)
	if err != nil {
		return nil, err
	}
	e.Tables = tables
	names := module.ToolNames(mfs)
	for i, m := range mods {
		for j, t := range mfs[i].Tools {
			name := names[i][j]
			e.route[name] = routed{m, t.Name}
			e.readOnly[name] = t.Annotations != nil && t.Annotations.ReadOnlyHint
			e.names = append(e.names, name)
		}
	}
	sort.Strings(e.names)
	return e, nil
}

// SpecEnv loads servers natively (module.NewNativeServer) into one new
// store, their seed states merged (module.GroupTables.Seed: namespaced
// when two servers own a table of the same name), as one Env. cfg is the
// modules' runtime config (zero: defaults).
func SpecEnv(ctx context.Context, cfg module.Config, servers ...*spec.Server) (*Env, error) {
	st := state.NewStore()
	var mods []*module.Module
	var seeds []*state.Version
	for _, s := range servers {
		m, err := module.NewNativeServer(s, cfg)
		if err != nil {
			return nil, err
		}
		b := &module.Bundle{Schema: s.Schema, Seed: s.Seed}
		v, err := b.SeedVersion(ctx, st)
		if err != nil {
			return nil, fmt.Errorf("server %s: seed: %w", s.Name, err)
		}
		mods = append(mods, m)
		seeds = append(seeds, v)
	}
	return GroupEnv(st, mods, seeds)
}

// GroupEnv is the Env of one lifecycle group: mods[i] with seed state
// seeds[i] (versions of store), the seeds merged under table namespaces
// when two modules own a table of the same name (module.TableNamespaces,
// GroupTables.Seed), as SpecEnv and weft synth tasks/certify/compose open
// a group. Errors: a module given twice (same manifest name), a namespace
// clash, seeds that still cannot be merged (the table named).
func GroupEnv(store *state.Store, mods []*module.Module, seeds []*state.Version) (*Env, error) {
	mfs := make([]*module.Manifest, len(mods))
	seen := map[string]bool{}
	for i, m := range mods {
		mfs[i] = m.Manifest()
		if seen[mfs[i].Name] {
			return nil, fmt.Errorf("tasks: module %q given twice in one group", mfs[i].Name)
		}
		seen[mfs[i].Name] = true
	}
	tables, err := module.TableNamespaces(mfs)
	if err != nil {
		return nil, err
	}
	seed, err := tables.Seed(seeds)
	if err != nil {
		return nil, fmt.Errorf("tasks: merging the seed states of %s: %w", strings.Join(moduleNames(mfs), ", "), err)
	}
	return NewEnv(store, seed, mods...)
}

func moduleNames(mfs []*module.Manifest) []string {
	out := make([]string, len(mfs))
	for i, m := range mfs {
		out[i] = m.Name
	}
	return out
}

// Tools returns the tool names of the Env, sorted.
func (e *Env) Tools() []string { return e.names }

// ReadOnly reports whether tool is declared read-only (MCP readOnlyHint)
// and whether the Env has it.
func (e *Env) ReadOnly(tool string) (readOnly, ok bool) {
	_, ok = e.route[tool]
	return e.readOnly[tool], ok
}

// Call is the outcome of one call of a Run.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Output    string          `json:"output,omitempty"`
	// IsError: a tool error result; Failure: the failure kind of a call
	// that failed before or in the module ("unknown_tool", "trap", ...).
	IsError bool   `json:"is_error,omitempty"`
	Failure string `json:"failure,omitempty"`
	// ErrorCode is the error code of a tool error whose structured
	// content is {"error": code, ...} (synthesized servers), else "".
	ErrorCode string `json:"error_code,omitempty"`
	// Changed: the call changed the state.
	Changed bool `json:"changed,omitempty"`
}

// Failed reports whether the call failed (tool error or failure).
func (c Call) Failed() bool { return c.IsError || c.Failure != "" }

// Run is one execution of a call sequence from a version.
type Run struct {
	From  *state.Version
	Final *state.Version
	Calls []Call
	// Before[i] is the state before call i (ExecSteps only; nil for
	// Exec): a dropped-step variant of the run resumes from it.
	Before []*state.Version
}

// Ledger returns the run's calls as verify ledger records.
func (r *Run) Ledger() []verify.LedgerCall {
	out := make([]verify.LedgerCall, len(r.Calls))
	for i, c := range r.Calls {
		out[i] = verify.LedgerCall{Index: uint64(i), Tool: c.Tool, Arguments: c.Arguments, IsError: c.IsError, ErrorKind: failure.Kind(c.Failure), Output: c.Output}
	}
	return out
}

// Messages returns the conversation of an agent that relays every
// successful call's output to the user, one assistant message per call:
// what a communicate check can find when its text is grounded in the tool
// outputs.
func (r *Run) Messages() []verify.Message {
	var out []verify.Message
	for _, c := range r.Calls {
		if !c.Failed() && c.Output != "" {
			out = append(out, verify.Message{Role: "assistant", Content: c.Output})
		}
	}
	return out
}

// Exec runs calls in order on a fresh fork of from in one session seeded
// with seed (virtual clock at module.DefaultEpoch). A call that fails is
// recorded and the run goes on (its unit of work was rolled back); an
// error is returned when the workspace cannot be used, ctx ends, or a
// call fails for an infrastructure reason (ErrInfra: a deadline, ...).
func (e *Env) Exec(ctx context.Context, from *state.Version, seed uint64, calls []ExecCall) (*Run, error) {
	return e.exec(ctx, from, seed, calls, false)
}

// ExecSteps is Exec that also keeps the state before each call in
// Run.Before (a snapshot each: O(tables), rows shared).
func (e *Env) ExecSteps(ctx context.Context, from *state.Version, seed uint64, calls []ExecCall) (*Run, error) {
	return e.exec(ctx, from, seed, calls, true)
}

func (e *Env) exec(ctx context.Context, from *state.Version, seed uint64, calls []ExecCall, steps bool) (*Run, error) {
	ws := e.Store.Fork(from)
	sess := &module.Session{Workspace: ws, Seed: seed, Tables: e.Tables.Names}
	run := &Run{From: from}
	prev := ws.Hash()
	for _, c := range calls {
		args := c.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		out := Call{Tool: c.Tool, Arguments: args}
		if steps {
			v, err := ws.Snapshot()
			if err != nil {
				return nil, err
			}
			run.Before = append(run.Before, v)
		}
		r, ok := e.route[c.Tool]
		if !ok {
			out.Failure = string(failure.UnknownTool)
			out.Output = fmt.Sprintf("unknown tool %q", c.Tool)
			run.Calls = append(run.Calls, out)
			continue
		}
		res, err := r.mod.Call(ctx, sess, r.tool, args)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			k := failure.Of(err)
			if k.Blame() == failure.BlameInfrastructure && k.Retryable() || errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("%w: call %s: %s: %w", ErrInfra, c.Tool, k, err)
			}
			out.Failure = string(k)
			if out.Failure == "" {
				out.Failure = "error"
			}
			out.Output = err.Error()
		} else {
			out.IsError = res.IsError
			out.Output = textOf(res.Content)
			if res.IsError && len(res.StructuredContent) > 0 {
				var ec struct {
					Error string `json:"error"`
				}
				if json.Unmarshal(res.StructuredContent, &ec) == nil {
					out.ErrorCode = ec.Error
				}
			}
		}
		h := ws.Hash()
		out.Changed = h != prev
		prev = h
		run.Calls = append(run.Calls, out)
	}
	v, err := ws.Snapshot()
	if err != nil {
		return nil, err
	}
	run.Final = v
	return run, nil
}

// ExecCall is one call to execute.
type ExecCall struct {
	Tool      string
	Arguments json.RawMessage
}

func textOf(cs []module.Content) string {
	var texts []string
	for _, c := range cs {
		if c.Type == "text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n")
}
