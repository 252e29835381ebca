package tasks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// Reason is why certification rejected an atomic task or a task: a closed
// set (the Reason* constants; Reasons lists them).
type Reason string

// Rejection reasons.
const (
	// ReasonInvalidTask: the task does not validate (task.Validate) or
	// cannot be verified as written (verify.ErrBadTask).
	ReasonInvalidTask Reason = "invalid_task"
	// ReasonNoEnv: the task's modules cannot be resolved to an Env, or it
	// names an initial version certification cannot start from.
	ReasonNoEnv Reason = "no_env"
	// ReasonNoAtomic: the task has no atomic tasks (nothing to certify).
	ReasonNoAtomic Reason = "no_atomic_tasks"
	// ReasonReferenceFailed: a call of the reference to a state-changing
	// tool failed (tool error or failure): the reference does not run end
	// to end. Rejection.Call names it.
	ReasonReferenceFailed Reason = "reference_call_failed"
	// ReasonNondeterministic: two runs of the reference from the same
	// state with different session seeds gave different diffs or outputs.
	// Rejection.Call names the first call whose output differs (nil when
	// only the final states differ).
	ReasonNondeterministic Reason = "nondeterministic"
	// ReasonNoChecks: the atomic task has no checks.
	ReasonNoChecks Reason = "no_checks"
	// ReasonFailsOnReference: the checkpoint fails on the reference's own
	// run (final state, ledger, relayed outputs). Rejection.Check names
	// the first failing check.
	ReasonFailsOnReference Reason = "fails_on_reference"
	// ReasonPassesOnInitial: the checkpoint passes on the initial state
	// with an empty ledger and conversation: it does not tell done from
	// not done.
	ReasonPassesOnInitial Reason = "passes_on_initial"
	// ReasonDroppedStepUnnoticed: the checkpoint still passes when one
	// state-changing reference call is dropped. Rejection.Call names the
	// dropped call.
	ReasonDroppedStepUnnoticed Reason = "dropped_step_unnoticed"
	// ReasonReadOnlyUnverifiable: the reference changes no state and the
	// checkpoint has no required_call or communicate check.
	ReasonReadOnlyUnverifiable Reason = "read_only_unverifiable"
	// ReasonBindingNotFound: a binding names a value found nowhere in the
	// atomic task's initial state nor among the rows its reference adds.
	ReasonBindingNotFound Reason = "binding_not_found"
	// ReasonOverallFails: the task's overall checks fail on the whole
	// reference's run.
	ReasonOverallFails Reason = "overall_fails_on_reference"
)

// Reasons is the closed set of rejection reasons, in report order.
var Reasons = []Reason{
	ReasonInvalidTask, ReasonNoEnv, ReasonNoAtomic, ReasonReferenceFailed,
	ReasonNondeterministic, ReasonNoChecks, ReasonFailsOnReference,
	ReasonPassesOnInitial, ReasonDroppedStepUnnoticed,
	ReasonReadOnlyUnverifiable, ReasonBindingNotFound, ReasonOverallFails,
}

// FailedCall names a reference call a rejection blames.
type FailedCall struct {
	// Index is the call's 0-based position in the atomic task's
	// reference; TaskIndex its position in the task's whole reference
	// (the atomic tasks' references in order).
	Index     int             `json:"index"`
	TaskIndex int             `json:"task_index"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Error is the tool's error text or the failure, when the call failed.
	Error string `json:"error,omitempty"`
}

// Rejection is one reason an atomic task (or, with Atomic "", the task) is
// not certified.
type Rejection struct {
	Task   string      `json:"task"`
	Atomic string      `json:"atomic,omitempty"`
	Reason Reason      `json:"reason"`
	Detail string      `json:"detail"`
	Call   *FailedCall `json:"call,omitempty"`
	// Check is the 0-based index of the check to blame, when one is.
	Check *int `json:"check,omitempty"`
}

// Warning is a finding that does not reject: a read-only reference call
// that failed (tau2 gold solutions look up ids that do not exist; the call
// changes nothing and the task stays feasible).
type Warning struct {
	Task   string      `json:"task"`
	Atomic string      `json:"atomic,omitempty"`
	Detail string      `json:"detail"`
	Call   *FailedCall `json:"call,omitempty"`
}

// AtomicResult is the certification of one atomic task.
type AtomicResult struct {
	ID        string `json:"id"`
	Certified bool   `json:"certified"`
	// ReadOnly: the reference changes no state.
	ReadOnly bool `json:"read_only"`
	Calls    int  `json:"calls"`
	// Writes is the number of reference calls that changed the state
	// (each one dropped once); Rows the rows the reference changes.
	Writes     int         `json:"writes"`
	Rows       int         `json:"rows"`
	Rejections []Rejection `json:"rejections,omitempty"`
}

// TaskResult is the certification of one task: certified when it has
// atomic tasks, all of them are certified and its overall checks pass on
// the whole reference.
type TaskResult struct {
	ID         string         `json:"id"`
	Source     string         `json:"source,omitempty"`
	Certified  bool           `json:"certified"`
	Atomic     []AtomicResult `json:"atomic"`
	Rejections []Rejection    `json:"rejections,omitempty"`
	Warnings   []Warning      `json:"warnings,omitempty"`
}

// ReportFormat is the format of a certification report.
const ReportFormat = "weft.certification/v1"

// Report is the certification of a task set.
type Report struct {
	Format          string `json:"format"`
	Tasks           int    `json:"tasks"`
	TasksCertified  int    `json:"tasks_certified"`
	Atomic          int    `json:"atomic"`
	AtomicCertified int    `json:"atomic_certified"`
	// ReadOnlyAtomic counts atomic tasks whose reference changes no state
	// (certified or not).
	ReadOnlyAtomic int `json:"read_only_atomic"`
	// ByReason counts rejections by reason (a task or atomic task may
	// have several); every reason of Reasons is present.
	ByReason map[Reason]int `json:"by_reason"`
	Warnings int            `json:"warnings"`
	Results  []TaskResult   `json:"results"`
}

// Rejections returns every rejection of the report in task order.
func (r *Report) Rejections() []Rejection {
	var out []Rejection
	for _, t := range r.Results {
		out = append(out, t.Rejections...)
		for _, a := range t.Atomic {
			out = append(out, a.Rejections...)
		}
	}
	return out
}

// Resolver returns the Env of a task's modules.
type Resolver func(modules []string) (*Env, error)

// Options tunes Certify.
type Options struct {
	// Seeds are the session seeds of the two reference runs (zero: 1
	// and 2); they must differ for the determinism check to see
	// seed-dependent randomness.
	Seeds [2]uint64
	// Progress, when set, is called after each task with the number done
	// and the total.
	Progress func(done, total int)
	// Initial, when set, resolves a task's InitialVersion ("" included)
	// to the version of env's store its atomic task 1 starts from (e.g. a
	// grounded snapshot); nil: a task's own InitialState (imported into
	// env's store) or else the Env's seed, and only InitialVersion "".
	Initial func(t *task.Task, env *Env) (*state.Version, error)
	// Fresh turns off the reuse of certification (same verdicts, slower;
	// the peer of BenchmarkCertifyComposite and of the equality test):
	// every dropped-step variant reruns the whole reference from init_k
	// instead of resuming from the snapshot before the dropped call, and
	// every init_k's value index is built from a full export instead of
	// the task's first state plus the diff to init_k (the Env keeps the
	// indexes of the states it has seen across Certify calls).
	Fresh bool
}

// Certify certifies every task against the Env its modules resolve to and
// returns the report and the certified tasks (the input pointers, in input
// order). Per atomic task k (in task order), from init_k = the state after
// the references of atomic tasks 1..k-1 (the seed state for k = 1):
//
//  1. the reference runs twice from fresh forks of init_k, with session
//     seeds Seeds[0] and Seeds[1]; a failed call to a state-changing tool
//     rejects (reference_call_failed; a failed read-only call is a
//     Warning); different final states or outputs reject
//     (nondeterministic);
//  2. the checkpoint (verify.Verify over the atomic task alone: Initial =
//     init_k, Reference = the run's final state, ledger = the run's calls,
//     conversation = the outputs relayed, see Run.Messages) must pass on
//     the run (fails_on_reference), fail on init_k with an empty ledger
//     and conversation (passes_on_initial), and fail on each rerun with
//     one state-changing call dropped (dropped_step_unnoticed);
//  3. a reference that changes no state needs a required_call or
//     communicate check (read_only_unverifiable);
//  4. every binding value (a "*_ids" value split at commas) must appear
//     in init_k or in the rows the reference adds or changes
//     (binding_not_found).
//
// The task's overall checks must pass on the whole reference run
// (overall_fails_on_reference). Errors: ctx done, or a workspace failure;
// task faults are rejections, never errors.
func Certify(ctx context.Context, ts []*task.Task, resolve Resolver, opts Options) (*Report, []*task.Task, error) {
	if opts.Seeds == [2]uint64{} {
		opts.Seeds = [2]uint64{1, 2}
	}
	rep := &Report{Format: ReportFormat, ByReason: map[Reason]int{}}
	for _, r := range Reasons {
		rep.ByReason[r] = 0
	}
	var certified []*task.Task
	var idx *indexCache
	if opts.Fresh {
		idx = newIndexCache()
	}
	for i, t := range ts {
		tr, err := certifyTask(ctx, t, resolve, opts, idx)
		if err != nil {
			return nil, nil, err
		}
		rep.Results = append(rep.Results, tr)
		rep.Tasks++
		if tr.Certified {
			rep.TasksCertified++
			certified = append(certified, t)
		}
		for _, a := range tr.Atomic {
			rep.Atomic++
			if a.Certified {
				rep.AtomicCertified++
			}
			if a.ReadOnly {
				rep.ReadOnlyAtomic++
			}
			for _, rj := range a.Rejections {
				rep.ByReason[rj.Reason]++
			}
		}
		for _, rj := range tr.Rejections {
			rep.ByReason[rj.Reason]++
		}
		rep.Warnings += len(tr.Warnings)
		if opts.Progress != nil {
			opts.Progress(i+1, len(ts))
		}
	}
	return rep, certified, nil
}

func execCalls(cs []task.Call) []ExecCall {
	out := make([]ExecCall, len(cs))
	for i, c := range cs {
		out[i] = ExecCall{Tool: c.Tool, Arguments: c.Arguments}
	}
	return out
}

func certifyTask(ctx context.Context, t *task.Task, resolve Resolver, opts Options, idx *indexCache) (TaskResult, error) {
	tr := TaskResult{ID: t.ID, Source: t.Source, Atomic: []AtomicResult{}}
	reject := func(r Reason, detail string) TaskResult {
		tr.Rejections = append(tr.Rejections, Rejection{Task: t.ID, Reason: r, Detail: detail})
		return tr
	}
	if err := t.Validate(); err != nil {
		return reject(ReasonInvalidTask, err.Error()), nil
	}
	if t.InitialVersion != "" && opts.Initial == nil {
		return reject(ReasonNoEnv, fmt.Sprintf("initial version %q: certification starts from the group's seed state", t.InitialVersion)), nil
	}
	env, err := resolve(t.Modules)
	if err != nil {
		return reject(ReasonNoEnv, err.Error()), nil
	}
	if idx == nil {
		idx = env.index
		if idx == nil {
			idx = newIndexCache()
		}
	}
	from := env.Seed
	if opts.Initial != nil {
		v, err := opts.Initial(t, env)
		if err != nil {
			return reject(ReasonNoEnv, fmt.Sprintf("initial version %q: %v", t.InitialVersion, err)), nil
		}
		from = v
	} else if len(t.InitialState) > 0 {
		// A task carrying its own starting state (weft.state/v1: composed
		// tasks, BFCL's initial_config, files included) starts from it, as
		// weft run's import does.
		v, err := env.Store.Import(ctx, bytes.NewReader(t.InitialState))
		if err != nil {
			return reject(ReasonInvalidTask, fmt.Sprintf("initial_state does not import into the group's store: %v", err)), nil
		}
		from = v
	}
	start := from
	if len(t.Atomic) == 0 {
		reject(ReasonNoAtomic, "the task has no atomic tasks")
	}
	base := 0 // task index of the atomic task's first call
	var all []Call
	for _, k := range t.Order() {
		a := &t.Atomic[k]
		ar, run, err := certifyAtomic(ctx, env, t, a, start, from, base, opts, idx, &tr)
		if err != nil {
			return tr, err
		}
		tr.Atomic = append(tr.Atomic, ar)
		all = append(all, run.Calls...)
		from = run.Final
		base += len(a.Reference)
	}
	// Overall checks on the whole reference.
	whole := &Run{From: start, Final: from, Calls: all}
	if len(t.Checks) > 0 {
		ot := &task.Task{ID: t.ID, Brief: t.Brief, Checks: t.Checks}
		// The reference agent relays every output, then tells the user
		// every communicate text (as scripted.ScriptForView does); a text
		// no output holds is a Warning: the agent must work it out.
		msgs := whole.Messages()
		var texts []string
		for _, c := range t.Checks {
			if c.Kind != task.CheckCommunicate {
				continue
			}
			texts = append(texts, c.Text)
			grounded := false
			for _, m := range msgs {
				if strings.Contains(normText(m.Content), normText(c.Text)) {
					grounded = true
					break
				}
			}
			if !grounded {
				tr.Warnings = append(tr.Warnings, Warning{Task: t.ID, Detail: fmt.Sprintf("communicate text %q is in no reference call's output (the agent must work it out)", c.Text)})
			}
		}
		if len(texts) > 0 {
			msgs = append(msgs, verify.Message{Role: "assistant", Content: strings.Join(texts, "; ")})
		}
		res, err := verifyOn(ctx, ot, whole, whole.Final, whole.Ledger(), msgs)
		if err != nil {
			reject(ReasonInvalidTask, "overall checks: "+err.Error())
		} else if cp := res.Checkpoints[len(res.Checkpoints)-1]; cp.Score != 1 {
			i, cr := firstFailed(cp)
			tr.Rejections = append(tr.Rejections, Rejection{Task: t.ID, Reason: ReasonOverallFails, Check: &i,
				Detail: fmt.Sprintf("overall check %d (%s) fails on the whole reference: %s", i, cr.Kind, cr.Evidence)})
		}
	}
	tr.Certified = len(tr.Rejections) == 0 && len(tr.Atomic) > 0
	for _, a := range tr.Atomic {
		if !a.Certified {
			tr.Certified = false
		}
	}
	return tr, nil
}

func firstFailed(cp verify.Checkpoint) (int, verify.CheckResult) {
	for i, c := range cp.Checks {
		if !c.Passed {
			return i, c
		}
	}
	return 0, verify.CheckResult{}
}

// verifyOn scores t's checkpoints with Initial = run.From, Reference =
// ReferenceAfter(1) = run.Final and Final = final.
func verifyOn(ctx context.Context, t *task.Task, run *Run, final *state.Version, ledger []verify.LedgerCall, msgs []verify.Message) (*verify.Result, error) {
	ev := verify.NewStateEvidence(map[string]*state.Version{
		verify.Initial:           run.From,
		verify.ReferenceAfter(0): run.From,
		verify.ReferenceAfter(1): run.Final,
		verify.Reference:         run.Final,
		verify.Final:             final,
	})
	return verify.Verify(ctx, verify.Input{Task: t, Ledger: ledger, Messages: msgs}, ev)
}

func certifyAtomic(ctx context.Context, env *Env, t *task.Task, a *task.Atomic, start, from *state.Version, base int, opts Options, idx *indexCache, tr *TaskResult) (AtomicResult, *Run, error) {
	ar := AtomicResult{ID: a.ID, Calls: len(a.Reference)}
	rej := func(r Reason, detail string, call *FailedCall, check *int) {
		ar.Rejections = append(ar.Rejections, Rejection{Task: t.ID, Atomic: a.ID, Reason: r, Detail: detail, Call: call, Check: check})
	}
	calls := execCalls(a.Reference)
	exec1 := env.ExecSteps
	if opts.Fresh {
		exec1 = env.Exec
	}
	run1, err := exec1(ctx, from, opts.Seeds[0], calls)
	if err != nil {
		return ar, nil, err
	}
	run2, err := env.Exec(ctx, from, opts.Seeds[1], calls)
	if err != nil {
		return ar, nil, err
	}
	fc := func(i int, c Call) *FailedCall {
		f := &FailedCall{Index: i, TaskIndex: base + i, Tool: c.Tool, Arguments: c.Arguments}
		if c.Failed() {
			f.Error = c.Output
		}
		return f
	}
	// 1. End to end.
	for i, c := range run1.Calls {
		if !c.Failed() {
			continue
		}
		ro, _ := env.ReadOnly(c.Tool)
		if ro {
			tr.Warnings = append(tr.Warnings, Warning{Task: t.ID, Atomic: a.ID, Call: fc(i, c),
				Detail: fmt.Sprintf("read-only reference call %d (%s) failed: %s", base+i, c.Tool, c.Output)})
			continue
		}
		rej(ReasonReferenceFailed, fmt.Sprintf("reference call %d (%s) failed: %s", base+i, c.Tool, c.Output), fc(i, c), nil)
	}
	// Determinism.
	if run1.Final.Hash() != run2.Final.Hash() {
		var call *FailedCall
		for i := range run1.Calls {
			if run1.Calls[i].Output != run2.Calls[i].Output {
				call = fc(i, run1.Calls[i])
				break
			}
		}
		rej(ReasonNondeterministic, fmt.Sprintf("two runs with session seeds %d and %d end in different states (%d rows differ)",
			opts.Seeds[0], opts.Seeds[1], state.Diff(run1.Final, run2.Final).Count()), call, nil)
	} else {
		for i := range run1.Calls {
			if run1.Calls[i].Output != run2.Calls[i].Output {
				rej(ReasonNondeterministic, fmt.Sprintf("reference call %d (%s) answers differently with session seeds %d and %d",
					base+i, run1.Calls[i].Tool, opts.Seeds[0], opts.Seeds[1]), fc(i, run1.Calls[i]), nil)
				break
			}
		}
	}
	diff := state.Diff(from, run1.Final)
	ar.Rows = diff.Count()
	ar.ReadOnly = diff.Empty()
	var writes []int
	for i, c := range run1.Calls {
		if c.Changed {
			writes = append(writes, i)
		}
	}
	ar.Writes = len(writes)
	// 2. Checks.
	if len(a.Checks) == 0 {
		rej(ReasonNoChecks, "the atomic task has no checks", nil, nil)
	} else {
		one := &task.Task{ID: t.ID, Brief: t.Brief, Atomic: []task.Atomic{{ID: a.ID, Request: a.Request, Reference: a.Reference, Checks: a.Checks}}}
		score := func(final *state.Version, r *Run) (verify.Checkpoint, error) {
			var ledger []verify.LedgerCall
			var msgs []verify.Message
			if r != nil {
				ledger, msgs = r.Ledger(), r.Messages()
			}
			res, err := verifyOn(ctx, one, run1, final, ledger, msgs)
			if err != nil {
				return verify.Checkpoint{}, err
			}
			return res.Checkpoints[0], nil
		}
		// badCheck: a check that cannot be verified as written (verify
		// ErrBadTask) or whose evidence fails on this task's states (a
		// sql check's SQL erring: ErrEvidence) rejects the atomic task as
		// invalid_task; only ctx ending is an error.
		badCheck := func(err error, on string) error {
			if ctx.Err() != nil || !errors.Is(err, verify.ErrBadTask) && !errors.Is(err, verify.ErrEvidence) {
				return err
			}
			rej(ReasonInvalidTask, on+": "+err.Error(), nil, nil)
			return nil
		}
		cp, err := score(run1.Final, run1)
		if err != nil {
			if err := badCheck(err, "checks on the reference run"); err != nil {
				return ar, nil, err
			}
		} else {
			if cp.Score != 1 {
				i, cr := firstFailed(cp)
				rej(ReasonFailsOnReference, fmt.Sprintf("check %d (%s) fails on the reference run: %s", i, cr.Kind, cr.Evidence), nil, &i)
			}
			cp0, err := score(from, nil)
			if err != nil {
				if err := badCheck(err, "checks on the initial state"); err != nil {
					return ar, nil, err
				}
			} else if cp0.Score == 1 {
				rej(ReasonPassesOnInitial, fmt.Sprintf("all %d checks pass on the initial state with no calls made", len(a.Checks)), nil, nil)
			}
			if !ar.ReadOnly {
				for _, w := range writes {
					var rd *Run
					if run1.Before != nil {
						// Resume from the state before call w: the calls
						// before it are run1's (same state, same seed).
						rest, err := env.Exec(ctx, run1.Before[w], opts.Seeds[0], calls[w+1:])
						if err != nil {
							return ar, nil, err
						}
						rd = &Run{From: from, Final: rest.Final, Calls: append(slices.Clone(run1.Calls[:w]), rest.Calls...)}
					} else {
						dropped := make([]ExecCall, 0, len(calls)-1)
						dropped = append(dropped, calls[:w]...)
						dropped = append(dropped, calls[w+1:]...)
						if rd, err = env.Exec(ctx, from, opts.Seeds[0], dropped); err != nil {
							return ar, nil, err
						}
					}
					cpd, err := score(rd.Final, rd)
					if err != nil {
						if err := badCheck(err, fmt.Sprintf("checks without reference call %d", base+w)); err != nil {
							return ar, nil, err
						}
						break
					}
					if cpd.Score == 1 {
						rej(ReasonDroppedStepUnnoticed, fmt.Sprintf("the checkpoint still passes without reference call %d (%s)", base+w, run1.Calls[w].Tool), fc(w, run1.Calls[w]), nil)
					}
				}
			}
		}
		// 3. Read-only atomic tasks.
		if ar.ReadOnly && !hasCallCheck(a.Checks) {
			rej(ReasonReadOnlyUnverifiable, "the reference changes no state and no check is required_call or communicate", nil, nil)
		}
	}
	// 4. Bindings.
	if len(a.Bindings) > 0 {
		var in func(string) bool
		var err error
		if opts.Fresh {
			in, err = idx.present(from, from)
		} else {
			in, err = idx.present(start, from)
		}
		if err != nil {
			return ar, nil, err
		}
		added := valuesOf(diff)
		keys := make([]string, 0, len(a.Bindings))
		for k := range a.Bindings {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, v := range bindingValues(k, a.Bindings[k]) {
				if !in(v) && !added[v] {
					rej(ReasonBindingNotFound, fmt.Sprintf("binding %s=%q names nothing in the initial state", k, v), nil, nil)
				}
			}
		}
	}
	ar.Certified = len(ar.Rejections) == 0
	return ar, run1, nil
}

// normText is verify's communicate normalisation: lower case, no commas.
func normText(s string) string { return strings.ReplaceAll(strings.ToLower(s), ",", "") }

func hasCallCheck(cs []task.Check) bool {
	for _, c := range cs {
		if c.Kind == task.CheckRequiredCall || c.Kind == task.CheckCommunicate {
			return true
		}
	}
	return false
}

// bindingValues splits a "*_ids" binding (the tau2 converter joins lists
// with ",") into its ids.
func bindingValues(key, v string) []string {
	if strings.HasSuffix(key, "_ids") || strings.HasSuffix(key, "s") && strings.Contains(v, ",") {
		var out []string
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	return []string{v}
}

// indexCache holds the value index of each state by hash: for every
// value, the number of cells whose leaves (see of) hold it. Safe for
// concurrent use.
type indexCache struct {
	mu sync.Mutex
	m  map[state.Hash]map[string]int
}

func newIndexCache() *indexCache { return &indexCache{m: map[state.Hash]map[string]int{}} }

// present reports which values appear in v, from the index of base (built
// once by a full export) and the diff from base to v (O(changed rows)).
func (c *indexCache) present(base, v *state.Version) (func(string) bool, error) {
	counts, err := c.of(base)
	if err != nil {
		return nil, err
	}
	if base == v || base.Hash() == v.Hash() {
		return func(x string) bool { return counts[x] > 0 }, nil
	}
	delta := map[string]int{}
	for _, td := range state.Diff(base, v).Tables {
		for _, r := range td.Added {
			for _, x := range r.Values {
				countLeaves(delta, x, 1)
			}
		}
		for _, r := range td.Removed {
			for _, x := range r.Values {
				countLeaves(delta, x, -1)
			}
		}
		for _, r := range td.Changed {
			for _, col := range r.Columns {
				countLeaves(delta, col.Old, -1)
				countLeaves(delta, col.New, 1)
			}
		}
	}
	return func(x string) bool { return counts[x]+delta[x] > 0 }, nil
}

func countLeaves(m map[string]int, x any, d int) {
	set := map[string]bool{}
	addLeaves(set, x)
	for k := range set {
		m[k] += d
	}
}

// of returns the value counts of v (strings as they are, numbers in JSON
// form), JSON documents and JSON text in string cells walked to their
// leaves, object keys included; each cell counts a value once.
func (c *indexCache) of(v *state.Version) (map[string]int, error) {
	h := v.Hash()
	c.mu.Lock()
	m, ok := c.m[h]
	c.mu.Unlock()
	if ok {
		return m, nil
	}
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		return nil, err
	}
	var doc struct {
		Tables []struct {
			Rows [][]any `json:"rows"`
		} `json:"tables"`
	}
	d := json.NewDecoder(&buf)
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	m = map[string]int{}
	for _, t := range doc.Tables {
		for _, r := range t.Rows {
			for _, x := range r {
				countLeaves(m, x, 1)
			}
		}
	}
	c.mu.Lock()
	c.m[h] = m
	c.mu.Unlock()
	return m, nil
}

func valuesOf(d *state.Changes) map[string]bool {
	m := map[string]bool{}
	for _, t := range d.Tables {
		for _, r := range t.Added {
			for _, x := range r.Values {
				addLeaves(m, x)
			}
		}
		for _, r := range t.Changed {
			for _, c := range r.Columns {
				addLeaves(m, c.New)
			}
		}
	}
	return m
}

func addLeaves(m map[string]bool, x any) {
	switch v := x.(type) {
	case nil:
	case string:
		m[v] = true
		if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var j any
			d := json.NewDecoder(strings.NewReader(t))
			d.UseNumber()
			if d.Decode(&j) == nil {
				addLeaves(m, j)
			}
		}
	case map[string]any:
		for k, y := range v {
			m[k] = true
			addLeaves(m, y)
		}
	case []any:
		for _, y := range v {
			addLeaves(m, y)
		}
	default:
		m[fmt.Sprint(v)] = true
	}
}
