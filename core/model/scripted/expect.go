package scripted

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/task"
)

// OverallCheckpoint is the name of an episode's last checkpoint (the
// task's own checks); it equals core/verify's Overall.
const OverallCheckpoint = "overall"

// Classes of planted faults (FaultOutcome.Class): what the fault does to
// the calls the checks look at, which decides the checkpoints it must and
// may fail. The rule (docs/certification.md, "Planted faults and their
// checkpoints"):
//
//   - ClassLostWrite: a state-changing call of atomic task k is dropped
//     (skip_step, early_stop). Must fail: k (when it has a changed_rows
//     check) and the overall checkpoint (when it has a state_equal
//     check). May fail: every other atomic task with a changed_rows check
//     whose state-changing calls name one of the same entities (an
//     argument value ending in "id" in common): an earlier one that sets
//     a value k sets again is checked against the reference's final
//     value, and a later one may act on a row k left different.
//   - ClassChangedWrite: a state-changing call of atomic task k is sent
//     with one argument changed (wrong_argument). Must fail: the overall
//     checkpoint (the state differs from the reference's: a refused call
//     leaves k's change out, an accepted one writes another value or
//     row). May fail: k, and the tasks ClassLostWrite may fail. k fails
//     when the changed member reaches a value the reference step changes
//     (or the module refuses the call); a member that lands in a column
//     the reference step leaves as it was (country "USA" -> "QSA" when the
//     new address keeps the country, a payment id on a change that costs
//     nothing) is not among the values k's changed_rows check looks at.
//     Which case holds is the module's business and not in the task file.
//   - ClassLostRequiredCall: a call a required_call check needs is dropped
//     or changed on a compared argument, and no other call the policy
//     makes satisfies the check. Must fail: the check's checkpoint.
//   - ClassCoveredCall: as ClassLostRequiredCall, but another call of the
//     episode (a repeat of the same lookup in another atomic task, an
//     extra call) still satisfies every check the call satisfied. Fails
//     nothing.
//   - ClassFreeCall: a dropped or changed call that is neither
//     state-changing nor needed by a required_call check (a lookup whose
//     result the scripted policy does not use), or a wrong argument on a
//     member no check compares. Fails nothing.
//   - ClassRejectedCall: hallucinated_tool (no such tool) and
//     malformed_call (not a call the harness can run); the correct call
//     follows. Fails nothing.
//   - ClassRepeatedRead: extra_call repeating a call that is not
//     state-changing. Fails nothing.
//   - ClassRepeatedWrite: extra_call repeating a state-changing call.
//     Must fail nothing; may fail k and the overall checkpoint (the module
//     refuses most repeats, but a tool that is not idempotent changes the
//     state again).
//   - early_stop also drops every Say after it, so every checkpoint with a
//     communicate check must fail (ClassLostWrite or ClassLostRequiredCall
//     for the calls, recorded once per dropped call).
//
// An episode's expected failed set is then the union of its faults' Must
// (after the covering rule, which looks at all the calls the policy makes)
// and it matches when Must ⊆ failed ⊆ Must ∪ May.
const (
	ClassLostWrite        = "lost_write"
	ClassChangedWrite     = "changed_write"
	ClassLostRequiredCall = "lost_required_call"
	ClassCoveredCall      = "covered_call"
	ClassFreeCall         = "free_call"
	ClassRejectedCall     = "rejected_call"
	ClassRepeatedRead     = "repeated_read"
	ClassRepeatedWrite    = "repeated_write"
)

// FaultOutcome is one planted fault with its class and the checkpoints
// it must and may fail (names: atomic task ids and OverallCheckpoint,
// sorted).
type FaultOutcome struct {
	Fault Fault    `json:"fault"`
	Class string   `json:"class"`
	Must  []string `json:"must,omitempty"`
	May   []string `json:"may,omitempty"`
}

// Expectation is what an episode's planted faults should do to its
// checkpoints.
type Expectation struct {
	Faults []FaultOutcome `json:"faults"`
	// Must and May are the union over Faults (May without Must's names).
	Must []string `json:"must,omitempty"`
	May  []string `json:"may,omitempty"`
}

// Expect classifies the planted faults of an episode of t under view
// (the policy's script is ScriptForView(t, view); faults are its
// Policy.Faults) and derives the checkpoints they must and may fail by
// the rule of the Class* constants. Errors: those of ScriptForView, a
// fault whose Step is not a step of that script, a check whose arguments
// are not a JSON object.
func Expect(t *task.Task, view string, faults []Fault) (*Expectation, error) {
	sc, err := ScriptForView(t, view)
	if err != nil {
		return nil, err
	}
	x := &expecter{t: t, steps: sc.Steps}
	if err := x.index(); err != nil {
		return nil, err
	}
	for _, f := range faults {
		if f.Step < 0 || f.Step >= len(sc.Steps) {
			return nil, fmt.Errorf("scripted: Expect: task %s: fault %s at step %d of a %d-step script", t.ID, f.Kind, f.Step, len(sc.Steps))
		}
	}
	// The calls the policy makes: the script's tool steps, less the
	// dropped ones, with changed arguments, plus the extra calls.
	made := make([]call, 0, len(sc.Steps))
	dropped := map[int]bool{}
	changed := map[int]json.RawMessage{}
	stop := len(sc.Steps)
	var extras []call
	for _, f := range faults {
		switch f.Kind {
		case FaultSkipStep:
			dropped[f.Step] = true
		case FaultWrongArgument:
			changed[f.Step] = f.Arguments
		case FaultEarlyStop:
			stop = min(stop, f.Step)
		case FaultExtraCall:
			extras = append(extras, call{f.Tool, f.Arguments})
		}
	}
	for i, s := range sc.Steps {
		if s.Tool == "" || dropped[i] || i >= stop {
			continue
		}
		args := s.Arguments
		if a, ok := changed[i]; ok {
			args = a
		}
		made = append(made, call{s.Tool, args})
	}
	made = append(made, extras...)
	exp := &Expectation{}
	must, may := set{}, set{}
	outcome := func(f Fault) FaultOutcome {
		o := FaultOutcome{Fault: f}
		switch f.Kind {
		case FaultHallucinatedTool, FaultMalformedCall:
			o.Class = ClassRejectedCall
		case FaultExtraCall:
			o.Class = ClassRepeatedRead
			if x.write[f.Of] {
				o.Class = ClassRepeatedWrite
				o.May = x.lostWrite(f.Of, nil).sorted()
			}
		case FaultSkipStep, FaultWrongArgument:
			var sent json.RawMessage
			if f.Kind == FaultWrongArgument {
				sent = f.Arguments
			}
			o = x.lost(o, f.Step, sent, made)
		}
		return o
	}
	for _, f := range faults {
		if f.Kind != FaultEarlyStop {
			exp.Faults = append(exp.Faults, outcome(f))
			continue
		}
		// Every tool step from the stop on is dropped.
		o := FaultOutcome{Fault: f, Class: ClassFreeCall}
		m, y := set{}, set{}
		for i := f.Step; i < len(sc.Steps); i++ {
			if sc.Steps[i].Tool == "" || dropped[i] {
				continue
			}
			d := x.lost(FaultOutcome{}, i, nil, made)
			m.add(d.Must...)
			y.add(d.May...)
			if d.Class == ClassLostWrite || (d.Class == ClassLostRequiredCall && o.Class != ClassLostWrite) {
				o.Class = d.Class
			}
		}
		for _, cp := range x.communicate {
			m.add(cp)
		}
		o.Must, o.May = m.sorted(), y.minus(m).sorted()
		exp.Faults = append(exp.Faults, o)
	}
	for _, o := range exp.Faults {
		must.add(o.Must...)
		may.add(o.May...)
	}
	exp.Must, exp.May = must.sorted(), may.minus(must).sorted()
	return exp, nil
}

// Match compares an episode's failed checkpoints with the expectation:
// ok when Must ⊆ failed ⊆ Must ∪ May, exact when failed == Must.
// Problems names each checkpoint that breaks ok, with the faults that
// predict it (or none).
func (e *Expectation) Match(failed []string) (ok, exact bool, problems []string) {
	f := set{}
	f.add(failed...)
	must, may := set{}, set{}
	must.add(e.Must...)
	may.add(e.May...)
	for _, cp := range e.Must {
		if !f[cp] {
			problems = append(problems, fmt.Sprintf("checkpoint %s passed, but %s should fail it", cp, e.why(cp, true)))
		}
	}
	for _, cp := range f.sorted() {
		if !must[cp] && !may[cp] {
			problems = append(problems, fmt.Sprintf("checkpoint %s failed, but no planted fault predicts it (faults: %s)", cp, e.describe()))
		}
	}
	return len(problems) == 0, len(problems) == 0 && len(f) == len(must), problems
}

func (e *Expectation) why(cp string, must bool) string {
	var out []string
	for _, o := range e.Faults {
		list := o.May
		if must {
			list = o.Must
		}
		if slices.Contains(list, cp) {
			out = append(out, o.String())
		}
	}
	return strings.Join(out, "; ")
}

func (e *Expectation) describe() string {
	if len(e.Faults) == 0 {
		return "none"
	}
	var out []string
	for _, o := range e.Faults {
		out = append(out, o.String())
	}
	return strings.Join(out, "; ")
}

// String reads like "skip_step of step 3 (a2 get_order_details, lost_required_call)".
func (o FaultOutcome) String() string {
	f := o.Fault
	return fmt.Sprintf("%s of step %d (%s %s, %s)", f.Kind, f.Step, f.Atomic, f.Tool, o.Class)
}

type call struct {
	tool string
	args json.RawMessage
}

type required struct {
	cp      string
	check   task.Check
	want    map[string]any
	compare []string
}

type expecter struct {
	t     *task.Task
	steps []Step
	// write marks the script steps that change state: the non-lookup
	// calls of an atomic task with a changed_rows check.
	write map[int]bool
	// changedRows / stateEqual: the checkpoints with such a check.
	changedRows map[string]bool
	stateEqual  bool
	communicate []string
	required    []required
}

func (x *expecter) index() error {
	x.write, x.changedRows = map[int]bool{}, map[string]bool{}
	add := func(cp string, checks []task.Check) error {
		for _, c := range checks {
			switch c.Kind {
			case task.CheckChangedRows:
				x.changedRows[cp] = true
			case task.CheckStateEqual:
				if cp == OverallCheckpoint {
					x.stateEqual = true
				}
			case task.CheckCommunicate:
				if !slices.Contains(x.communicate, cp) {
					x.communicate = append(x.communicate, cp)
				}
			case task.CheckRequiredCall:
				r := required{cp: cp, check: c, compare: c.Compare}
				if len(c.Arguments) > 0 && string(c.Arguments) != "null" {
					if err := json.Unmarshal(c.Arguments, &r.want); err != nil || r.want == nil {
						return fmt.Errorf("scripted: Expect: task %s, checkpoint %s: required_call arguments are not a JSON object", x.t.ID, cp)
					}
				}
				x.required = append(x.required, r)
			}
		}
		return nil
	}
	for _, a := range x.t.Atomic {
		if err := add(a.ID, a.Checks); err != nil {
			return err
		}
	}
	if err := add(OverallCheckpoint, x.t.Checks); err != nil {
		return err
	}
	for i, s := range x.steps {
		if s.Tool != "" && x.changedRows[s.Atomic] && !readOnly(baseName(s.Tool)) {
			x.write[i] = true
		}
	}
	return nil
}

// lost classifies dropping script step i (sent nil) or sending it with the
// arguments sent instead, given all the calls the policy makes.
func (x *expecter) lost(o FaultOutcome, i int, sent json.RawMessage, made []call) FaultOutcome {
	s := x.steps[i]
	if x.write[i] {
		o.Class = ClassLostWrite
		must := set{}
		if x.changedRows[s.Atomic] && sent == nil {
			must.add(s.Atomic)
		}
		if sent != nil {
			o.Class = ClassChangedWrite
		}
		if x.stateEqual {
			must.add(OverallCheckpoint)
		}
		o.Must = must.sorted()
		o.May = x.lostWrite(i, sent).minus(must).sorted()
		return o
	}
	o.Class = ClassFreeCall
	must := set{}
	for _, r := range x.required {
		if !r.matches(s.Tool, s.Arguments) {
			continue
		}
		if sent != nil && r.matches(s.Tool, sent) {
			continue // the changed member is not compared
		}
		if o.Class == ClassFreeCall {
			o.Class = ClassCoveredCall
		}
		covered := false
		for _, c := range made {
			if r.matches(c.tool, c.args) {
				covered = true
				break
			}
		}
		if !covered {
			o.Class = ClassLostRequiredCall
			must.add(r.cp)
		}
	}
	o.Must = must.sorted()
	return o
}

// lostWrite is what may fail besides the faulted write's own checkpoint:
// the other atomic tasks with a changed_rows check whose state-changing
// calls share an entity with step i's call (or with sent, the arguments
// actually sent), plus i's own checkpoint and the overall one.
func (x *expecter) lostWrite(i int, sent json.RawMessage) set {
	s := x.steps[i]
	ids := entityValues(s.Arguments)
	for v := range entityValues(sent) {
		ids[v] = true
	}
	out := set{}
	if x.changedRows[s.Atomic] {
		out.add(s.Atomic)
	}
	if x.stateEqual {
		out.add(OverallCheckpoint)
	}
	for j, o := range x.steps {
		if j == i || !x.write[j] || o.Atomic == s.Atomic {
			continue
		}
		for v := range entityValues(o.Arguments) {
			if ids[v] {
				out.add(o.Atomic)
				break
			}
		}
	}
	return out
}

func (r required) matches(tool string, args json.RawMessage) bool {
	if tool != r.check.Tool {
		return false
	}
	if r.want == nil {
		return true
	}
	var got map[string]any
	if err := json.Unmarshal(args, &got); err != nil || got == nil {
		got = map[string]any{}
	}
	keys := r.compare
	if keys == nil {
		for k := range r.want {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		wv, wok := r.want[k]
		gv, gok := got[k]
		if wok != gok || !reflect.DeepEqual(wv, gv) {
			return false
		}
	}
	return true
}

// entityValues are the string values of the members whose name ends in
// "id" or "ids" (order_id, user_id, item_ids, ...), at any depth.
func entityValues(args json.RawMessage) map[string]bool {
	out := map[string]bool{}
	if len(args) == 0 {
		return out
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return out
	}
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				walk(k, e)
			}
		case []any:
			for _, e := range v {
				walk(key, e)
			}
		case string:
			k := strings.ToLower(key)
			if strings.HasSuffix(k, "id") || strings.HasSuffix(k, "ids") {
				out[v] = true
			}
		}
	}
	walk("", v)
	return out
}

// baseName strips a lifecycle group's "module__" prefix from a tool name.
func baseName(tool string) string {
	if i := strings.LastIndex(tool, "__"); i >= 0 {
		return tool[i+2:]
	}
	return tool
}

type set map[string]bool

func (s set) add(names ...string) {
	for _, n := range names {
		s[n] = true
	}
}

func (s set) minus(o set) set {
	out := set{}
	for n := range s {
		if !o[n] {
			out[n] = true
		}
	}
	return out
}

func (s set) sorted() []string {
	if len(s) == 0 {
		return nil
	}
	out := make([]string, 0, len(s))
	for n := range s {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
