package synth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/interp"
	"github.com/weft-dev/weft/sdk/spec"
)

// ValidateOptions configures Validate. Zero values take the defaults.
type ValidateOptions struct {
	// CallTimeout bounds each validation call (default 2s, the serving
	// default of core/module). A call past it gives CodeBudget.
	CallTimeout time.Duration
	// MemoryBudget bounds the bytes a validation call may allocate
	// (default DefaultMemoryBudget). It is measured on the process's heap
	// allocation counter (runtime/metrics /gc/heap/allocs:bytes) while the
	// call runs, so it counts what the interpreter allocates natively;
	// validation runs its calls one at a time, but other goroutines of the
	// process count too (the budget is conservative). A call over it is
	// stopped (its thread cancelled) and gives CodeBudget. The step budget
	// is the interpreter's own (interp.DefaultMaxSteps, as when served).
	MemoryBudget int64
	// Synthesizer is recorded in the report.
	Synthesizer string
}

// DefaultMemoryBudget is the default per-call allocation budget: 256 MiB,
// the linear-memory cap of a module instance (core/module.Config).
const DefaultMemoryBudget = 256 << 20

// Validate runs every stage of Stages on s: interface, then (when the
// interface passed) normal, boundary, diff and readback calls through
// module.NewNativeServer on a fresh core/state store loaded with s's
// schema and seed, each call on its own fork of the seed state. It returns
// the report (Passed when there are no findings) or an error when
// validation itself could not run (ctx ended). A server that is wrong is a
// report with findings, never an error.
func Validate(ctx context.Context, s *spec.Server, opts ValidateOptions) (*Report, error) {
	r, _, err := validate(ctx, s, opts)
	return r, err
}

// validate is Validate, also returning the validator (its normal calls).
func validate(ctx context.Context, s *spec.Server, opts ValidateOptions) (*Report, *validator, error) {
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = 2 * time.Second
	}
	if opts.MemoryBudget <= 0 {
		opts.MemoryBudget = DefaultMemoryBudget
	}
	v := &validator{ctx: ctx, s: s, opts: opts, stageCalls: map[Stage]int{}, broken: map[string]bool{}}
	r := &Report{Format: ReportFormat, Server: s.Name, Version: s.Version, Synthesizer: opts.Synthesizer}
	if s.Program != "" {
		r.ProgramDigest = s.ProgramRef().Digest
	}
	defer v.close()
	ok := v.iface()
	if ok {
		v.normal()
		v.boundary()
		v.diffs()
		v.readback()
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	r.Findings = v.findings
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	r.Passed = len(r.Findings) == 0
	for _, st := range Stages {
		sr := StageReport{Stage: st, Calls: v.stageCalls[st], Status: StatusPassed}
		for _, f := range r.Findings {
			if f.Stage == st {
				sr.Findings++
			}
		}
		switch {
		case sr.Findings > 0:
			sr.Status = StatusFailed
		case !ok && st != StageInterface:
			sr.Status = StatusSkipped
		}
		r.Calls += sr.Calls
		r.Stages = append(r.Stages, sr)
	}
	return r, v, nil
}

type validator struct {
	ctx        context.Context
	s          *spec.Server
	opts       ValidateOptions
	findings   []Finding
	stageCalls map[Stage]int

	mod     *module.Module
	store   *state.Store
	seed    *state.Version
	tables  map[string]*seedTable // lower-case name
	outputs map[string]*jsonschema.Schema
	normals []*normalCall
	// broken are the tools whose call failed (internal error, budget):
	// later stages do not call them again.
	broken map[string]bool
}

func (v *validator) close() {
	if v.store != nil {
		_ = v.store.Close()
	}
}

func (v *validator) add(f Finding) { v.findings = append(v.findings, f) }

// seedTable is one table of the seed state: its columns, primary key and
// rows (export representation).
type seedTable struct {
	name    string
	columns []string
	key     []string
	rows    [][]any
}

func (t *seedTable) col(name string) int { return slices.Index(t.columns, name) }

// iface is the interface stage; false when later stages cannot run.
func (v *validator) iface() bool {
	s := v.s
	add := func(code Code, tool, field, format string, a ...any) {
		v.add(Finding{Stage: StageInterface, Code: code, Tool: tool, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	if err := s.Validate(); err != nil {
		var es spec.Errors
		if errors.As(err, &es) {
			for _, e := range es {
				add(CodeSpecInvalid, e.Tool, e.Field, "%s", e.Error())
			}
		} else {
			add(CodeSpecInvalid, "", "", "%v", err)
		}
		return false
	}
	fns, err := interp.Functions(s.Program)
	if err != nil {
		add(CodeProgramSyntax, "", "program", "server %q: %v", s.Name, err)
		return false
	}
	good := true
	for _, t := range s.Tools {
		params, ok := fns[t.Name]
		if !ok {
			add(CodeToolMissing, t.Name, "program", "server %q, tool %q: the program defines no function %s(...)", s.Name, t.Name, t.Name)
			good = false
			continue
		}
		if !v.checkParams(t, params) {
			good = false
		}
	}
	if !v.checkTables(fns) {
		good = false
	}
	v.store = state.NewStore()
	if _, err := v.store.Load(v.ctx, s.Schema); err != nil {
		add(CodeSpecInvalid, "", "schema", "server %q, field schema: the DDL does not load: %v", s.Name, err)
		return false
	}
	b := &module.Bundle{Schema: s.Schema, Seed: s.Seed}
	seed, err := b.SeedVersion(v.ctx, v.store)
	if err != nil {
		add(CodeSeedInvalid, "", "seed", "server %q, field seed: %v", s.Name, err)
		return false
	}
	v.seed = seed
	if err := v.loadSeedTables(); err != nil {
		add(CodeSeedInvalid, "", "seed", "server %q, field seed: %v", s.Name, err)
		return false
	}
	mod, err := module.NewNativeServer(s, module.Config{CallTimeout: v.opts.CallTimeout})
	if err != nil {
		add(CodeSpecInvalid, "", "", "%v", err)
		return false
	}
	v.mod = mod
	v.outputs = map[string]*jsonschema.Schema{}
	for _, t := range s.Tools {
		if len(t.OutputSchema) == 0 {
			continue
		}
		sch, err := compileSchema(t.OutputSchema)
		if err != nil {
			add(CodeSpecInvalid, t.Name, "output_schema", "server %q, tool %q, field output_schema: %v", s.Name, t.Name, err)
			good = false
			continue
		}
		v.outputs[t.Name] = sch
	}
	return good
}

// checkParams compares a tool's function parameters with its input
// schema: every schema property must be a parameter (else a call passing
// it fails), every parameter without a default must be a required
// property (else a call omitting it fails), and a parameter that is not a
// property can never be given.
func (v *validator) checkParams(t spec.Tool, params []interp.Param) bool {
	props, required := schemaProps(t.InputSchema)
	ok := true
	bad := func(field, format string, a ...any) {
		ok = false
		v.add(Finding{Stage: StageInterface, Code: CodeParamsMismatch, Tool: t.Name, Field: field,
			Message: fmt.Sprintf("server %q, tool %q, field %s: %s", v.s.Name, t.Name, field, fmt.Sprintf(format, a...))})
	}
	have := map[string]interp.Param{}
	for _, p := range params {
		have[p.Name] = p
	}
	for _, name := range sortedKeys(props) {
		if _, ok := have[name]; !ok {
			bad("input_schema.properties."+name, "the schema has argument %q but %s() has no such parameter", name, t.Name)
		}
	}
	for _, p := range params {
		if _, isProp := props[p.Name]; !isProp {
			bad("input_schema.properties."+p.Name, "%s() has parameter %q that the schema does not declare", t.Name, p.Name)
			continue
		}
		if p.Required && !slices.Contains(required, p.Name) {
			bad("input_schema.required", "%s() requires %q (no default) but the schema does not list it as required", t.Name, p.Name)
		}
	}
	return ok
}

// loadSeedTables reads every table of the seed state (columns, key, rows)
// through a diff from the empty schema.
func (v *validator) loadSeedTables() error {
	empty, err := v.store.Load(v.ctx, v.s.Schema)
	if err != nil {
		return err
	}
	v.tables = map[string]*seedTable{}
	for _, name := range v.seed.Tables() {
		v.tables[strings.ToLower(name)] = &seedTable{name: name}
	}
	for _, td := range state.Diff(empty, v.seed).Tables {
		t := &seedTable{name: td.Table, columns: td.Columns, key: td.PrimaryKey}
		for _, r := range td.Added {
			t.rows = append(t.rows, r.Values)
		}
		v.tables[strings.ToLower(td.Table)] = t
	}
	return nil
}

// outcome is what one validation call gave.
type outcome struct {
	args     json.RawMessage
	res      *module.Result
	err      error
	budget   string // why the call hit a budget ("" = it did not)
	code     string // tool error code
	after    *state.Version
	diff     *state.Changes
	refusal  bool // the arguments were refused by the input schema
	internal bool // an internal error (module bug) or other call failure
}

func (o *outcome) ok() bool { return o.err == nil && o.res != nil && !o.res.IsError }

func (o *outcome) toolErr() bool { return o.err == nil && o.res != nil && o.res.IsError }

// callJSON is the Finding.Call of a call: {"name", "arguments", "result"}
// where result is the CallToolResult or {"error": message}.
func (o *outcome) callJSON(tool string) json.RawMessage {
	c := struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Result    any             `json:"result"`
	}{Name: tool, Arguments: o.args}
	switch {
	case o.err != nil:
		c.Result = map[string]string{"error": o.err.Error()}
	case o.res != nil:
		c.Result = o.res.CallResult
	}
	b, _ := json.Marshal(c)
	return b
}

func (o *outcome) diffJSON() json.RawMessage {
	if o.diff == nil || o.diff.Empty() {
		return nil
	}
	b, _ := json.Marshal(o.diff)
	return b
}

var errMemoryBudget = errors.New("memory budget exceeded")

// call runs tool with args on a fresh fork of base, with the memory
// watchdog, and computes the diff of a successful call.
func (v *validator) call(stage Stage, base *state.Version, tool string, args json.RawMessage) *outcome {
	v.stageCalls[stage]++
	o := &outcome{args: args}
	ws := v.store.Fork(base)
	ctx, cancel := context.WithCancelCause(v.ctx)
	stop := watchMemory(ctx, v.opts.MemoryBudget, cancel)
	o.res, o.err = v.mod.Call(ctx, &module.Session{Workspace: ws}, tool, args)
	over := stop()
	cancel(nil)
	var ae *module.ArgumentError
	var ce *module.CallError
	switch {
	case over:
		o.budget = fmt.Sprintf("memory: the call allocated more than its %d-byte budget", v.opts.MemoryBudget)
		o.res, o.internal = nil, true
		if o.err == nil {
			o.err = errMemoryBudget
		}
	case errors.As(o.err, &ae):
		o.refusal = true
	case errors.As(o.err, &ce):
		o.internal = true
		switch {
		case ce.Code == abi.InternalSteps:
			o.budget = "steps: " + strings.TrimPrefix(ce.Message, "internal error: ")
		case errors.Is(ce.Kind, module.ErrDeadline):
			// Also a native call whose deadline cancelled the Starlark
			// thread (abi.InternalDeadline).
			o.budget = "time: " + ce.Message
		case errors.Is(ce.Kind, module.ErrMemoryLimit):
			o.budget = "memory: " + ce.Message
		}
	case o.err != nil:
		o.internal = true
	case o.res.IsError:
		o.code = errorCode(o.res)
	default:
		after, err := ws.Snapshot()
		if err != nil {
			o.err, o.internal = err, true
			return o
		}
		o.after = after
		o.diff = state.Diff(base, after)
	}
	return o
}

// budgetFinding reports a call that hit a budget; true when it did.
func (v *validator) budgetFinding(stage Stage, tool string, o *outcome) bool {
	if o.budget == "" {
		return false
	}
	v.add(Finding{Stage: stage, Code: CodeBudget, Tool: tool, Field: strings.SplitN(o.budget, ":", 2)[0],
		Call: o.callJSON(tool), Message: fmt.Sprintf("server %q, tool %q: the call ran out of its budget (%s); a server whose validation call hits a budget is not registered", v.s.Name, tool, o.budget)})
	return true
}

// deniedFinding reports statements the table policy refused; true when
// there were some.
func (v *validator) deniedFinding(stage Stage, tool string, o *outcome) bool {
	var denied []string
	var ce *module.CallError
	switch {
	case o.res != nil:
		denied = o.res.Denied
	case errors.As(o.err, &ce):
		denied = ce.Denied
	}
	if len(denied) == 0 {
		return false
	}
	code, field := CodeTableUndeclared, "reads"
	for _, d := range denied {
		if isWrite(d) {
			code, field = CodeWriteOutsideSet, "writes"
			if t := v.s.Tool(tool); t != nil && t.ReadOnly {
				code, field = CodeReadOnlyWrote, "read_only"
			}
		}
	}
	v.add(Finding{Stage: stage, Code: code, Tool: tool, Field: field, Call: o.callJSON(tool),
		Message: fmt.Sprintf("server %q, tool %q, field %s: the table policy refused %s", v.s.Name, tool, field, strings.Join(denied, "; "))})
	return true
}

func isWrite(stmt string) bool {
	f := strings.Fields(strings.ToLower(stmt))
	return len(f) > 0 && slices.Contains([]string{"insert", "update", "delete", "replace", "truncate", "drop", "alter", "create"}, f[0])
}

func errorCode(r *module.Result) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(r.StructuredContent, &e) == nil {
		return e.Error
	}
	return ""
}

func resultText(r *module.Result) string {
	for _, c := range r.Content {
		if c.Text != "" {
			return c.Text
		}
	}
	return ""
}

// watchMemory cancels ctx (cause errMemoryBudget) when the process heap
// allocations grow by more than budget bytes; stop ends the watch and
// reports whether it fired.
func watchMemory(ctx context.Context, budget int64, cancel context.CancelCauseFunc) (stop func() bool) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	start := read()
	done := make(chan struct{})
	var fired bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if int64(read()-start) > budget {
					mu.Lock()
					fired = true
					mu.Unlock()
					cancel(errMemoryBudget)
					return
				}
			}
		}
	}()
	return func() bool {
		close(done)
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		return fired
	}
}

func compileSchema(raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("schema.json")
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
