package compose

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/synth/tasks"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// Options tunes Run. Zero fields take the defaults.
type Options struct {
	// Seed seeds the atomic pool's binding samples, the sampling and the
	// distractors.
	Seed uint64
	// Tasks is the number of composed tasks to make (default 100).
	Tasks int
	// Turns is the median number of atomic turns (atomic tasks) per
	// composed task (default 20); each task draws its count uniformly from
	// [Turns-Spread, Turns+Spread], at least 2.
	Turns  int
	Spread int // default Turns/4
	// GenSeeds is the number of binding seeds of the atomic pool per
	// server (default 6): tasks.Generate keeps one certified atomic task
	// per signature and seed.
	GenSeeds int
	// PerTool and Rounds are tasks.GenOptions' PerTool and MaxRounds of
	// the pool's generation (zero: its defaults).
	PerTool, Rounds int
	// Distractors per entity of context enrichment (default 2; -1: none).
	Distractors int
	// SharedEntities is the number of people bound in two servers' users
	// at once (same name and email; see shareEntities); 0: none.
	SharedEntities int
	// MaxAttempts bounds the samples tried (default 3 * Tasks).
	MaxAttempts int
	// Progress, when set, is told what is being done.
	Progress func(msg string)
}

func (o *Options) defaults() {
	if o.Tasks <= 0 {
		o.Tasks = 100
	}
	if o.Turns <= 0 {
		o.Turns = 20
	}
	if o.Spread <= 0 {
		o.Spread = o.Turns / 4
	}
	if o.GenSeeds <= 0 {
		o.GenSeeds = 6
	}
	if o.Distractors == 0 {
		o.Distractors = 2
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 3 * o.Tasks
	}
}

// ReportFormat is the format of a composition report.
const ReportFormat = "weft.synth-compose/v1"

// ServerPool is the atomic pool of one server.
type ServerPool struct {
	Server string `json:"server"`
	// Generated, Certified, Pruned and Kept sum tasks.Generate's reports
	// over the binding seeds; ByReason its rejections.
	Generated int                  `json:"generated"`
	Certified int                  `json:"certified"`
	Pruned    int                  `json:"pruned"`
	Kept      int                  `json:"kept"`
	ByReason  map[tasks.Reason]int `json:"by_reason"`
	// Pool is the distinct kept atomic tasks whose reference runs on the
	// composed group's seed.
	Pool int `json:"pool"`
}

// Report says what Run did.
type Report struct {
	Format  string       `json:"format"`
	Seed    uint64       `json:"seed"`
	Servers []string     `json:"servers"`
	Turns   int          `json:"turns"`
	Pools   []ServerPool `json:"pools"`
	// Attempts is the composed tasks sampled; Composed those certified
	// and kept; RejectedBy counts the others by reason (certification
	// reasons, "no_candidates"), Rejections lists them in sample order.
	Attempts   int            `json:"attempts"`
	Composed   int            `json:"composed"`
	RejectedBy map[string]int `json:"rejected_by"`
	Rejections []Rejection    `json:"rejections,omitempty"`
	// AtomicTurns and ServersPerTask are distributions over the composed
	// tasks (value -> tasks); TurnsMedian the median atomic turns.
	AtomicTurns    map[int]int `json:"atomic_turns"`
	TurnsMedian    float64     `json:"turns_median"`
	ServersPerTask map[int]int `json:"servers_per_task"`
	// Edges are the After edges of all composed tasks; Roots the atomic
	// tasks with none (the parallel branches' starts).
	Edges int `json:"edges"`
	// CrossEdges are the Edges between atomic tasks of different servers.
	CrossEdges int `json:"cross_edges"`
	Roots      int `json:"roots"`
	// Coverage: the pool's tools used by at least one composed task.
	ToolsCovered  int            `json:"tools_covered"`
	ToolsPossible int            `json:"tools_possible"`
	ToolUses      map[string]int `json:"tool_uses"`
	// SharedEntities is the people bound in two servers' users;
	// SharedAtoms the pool's atomic tasks bound to one of them.
	SharedEntities int `json:"shared_entities"`
	SharedAtoms    int `json:"shared_atoms"`
	// Grounding sums the figures of the composed tasks' groundings.
	Grounding GroundStats `json:"grounding"`
	// StateBytes is the total size of the composed tasks' initial states.
	StateBytes int `json:"state_bytes"`
}

// Rejection is one rejected sample: the composed task it would have been
// and the first reason its re-certification gave (tasks.Rejection).
type Rejection struct {
	// Attempt is the sample's number, 1..Report.Attempts.
	Attempt int `json:"attempt"`
	// Task is the id the composed task would have had ("compose-0004";
	// the next sample takes it over).
	Task   string `json:"task"`
	Reason string `json:"reason"`
	// Atomic is the composed atomic task to blame ("a3"), "" for the task
	// as a whole; Source its origin in the pool ("server:atomic-source").
	Atomic string `json:"atomic,omitempty"`
	Source string `json:"source,omitempty"`
	Detail string `json:"detail,omitempty"`
	// Call is the failing reference call (index in the atomic task and
	// in the composed reference, tool, arguments, error), when one is to
	// blame; Check the 0-based index of the failing check of Atomic (or
	// of the task's overall checks with Atomic "").
	Call  *tasks.FailedCall `json:"call,omitempty"`
	Check *int              `json:"check,omitempty"`
	// Rejections is how many reasons certification gave in all (this is
	// the first).
	Rejections int `json:"rejections"`
}

// String is the rejection on one line: "sample 4 (compose-0004):
// reference_call_failed in a3 (server:source): call 2 (composite 17)
// tool {args}: error", parts left out when empty (the detail when a call
// is named: it says the same).
func (r Rejection) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sample %d (%s): %s", r.Attempt, r.Task, r.Reason)
	if r.Atomic != "" {
		fmt.Fprintf(&b, " in %s", r.Atomic)
		if r.Source != "" {
			fmt.Fprintf(&b, " (%s)", r.Source)
		}
	}
	if c := r.Call; c != nil {
		fmt.Fprintf(&b, ": call %d (composite %d) %s %s", c.Index, c.TaskIndex, c.Tool, c.Arguments)
		if c.Error != "" {
			fmt.Fprintf(&b, ": %s", c.Error)
		}
	}
	if r.Check != nil {
		fmt.Fprintf(&b, ": check %d", *r.Check)
	}
	if r.Detail != "" && r.Call == nil {
		fmt.Fprintf(&b, ": %s", r.Detail)
	}
	if r.Rejections > 1 {
		fmt.Fprintf(&b, " (+%d more reasons)", r.Rejections-1)
	}
	return b.String()
}

// Result is the composed tasks and the report.
type Result struct {
	Tasks  []*task.Task
	Report *Report
}

// atom is one atomic task of the pool, its tools renamed to the group's.
type atom struct {
	server int
	a      task.Atomic
	tool   string          // the tool its write (or read) is about
	writes map[string]bool // table|key of the rows its reference changes
	keys   map[string]bool // key values of those rows
	uses   map[string]bool // binding values and argument leaves
	src    string
	// person is the shared person (user_id) the atomic task is bound to,
	// "" when none.
	person   string
	personIn map[int]bool // the servers holding person
}

// Run composes tasks over servers (at least two; their names are the
// tasks' modules). Errors: fewer than two servers, a server that does not
// load, a context done; rejected samples are counted in the report.
func Run(ctx context.Context, servers []*spec.Server, opts Options) (*Result, error) {
	opts.defaults()
	if len(servers) < 2 {
		return nil, fmt.Errorf("compose: need at least two servers, got %d", len(servers))
	}
	progress := func(f string, a ...any) {
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf(f, a...))
		}
	}
	rep := &Report{Format: ReportFormat, Seed: opts.Seed, Turns: opts.Turns, RejectedBy: map[string]int{},
		AtomicTurns: map[int]int{}, ServersPerTask: map[int]int{}, ToolUses: map[string]int{}}
	// 1. The atomic pool per server, on the servers as given.
	gen := make([][]*task.Task, len(servers))
	for si, s := range servers {
		rep.Servers = append(rep.Servers, s.Name)
		sp := ServerPool{Server: s.Name, ByReason: map[tasks.Reason]int{}}
		senv, err := tasks.SpecEnv(ctx, module.Config{CallTimeout: tasks.CallTimeout}, s)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for g := 0; g < opts.GenSeeds; g++ {
			progress("atomic pool: %s seed %d/%d", s.Name, g+1, opts.GenSeeds)
			res, err := tasks.Generate(ctx, senv, []*spec.Server{s}, tasks.GenOptions{Seed: opts.Seed*1000 + uint64(g) + 1, PerTool: opts.PerTool, MaxRounds: opts.Rounds})
			if err != nil {
				return nil, err
			}
			sp.Generated += res.Report.Generated
			sp.Certified += res.Report.Certified
			sp.Pruned += res.Report.Pruned
			sp.Kept += res.Report.Kept
			for r, n := range res.Report.ByReason {
				sp.ByReason[r] += n
			}
			for _, t := range res.Tasks {
				if len(t.Atomic) != 1 {
					continue
				}
				k, _ := json.Marshal(t.Atomic[0].Reference)
				if seen[string(k)] {
					continue
				}
				seen[string(k)] = true
				gen[si] = append(gen[si], t)
			}
		}
		senv.Store.Close()
		rep.Pools = append(rep.Pools, sp)
	}
	// 2. Shared entities: people bound in server 0 and another server.
	grouped, sh, err := shareEntities(servers, gen, opts.SharedEntities)
	if err != nil {
		return nil, err
	}
	shared := map[string]map[int]bool{} // person id -> servers holding them
	for si, pairs := range sh {
		for _, pp := range pairs {
			if shared[pp[1].id] == nil {
				shared[pp[1].id] = map[int]bool{0: true}
			}
			shared[pp[1].id][si] = true
			rep.SharedEntities++
		}
	}
	// 3. The group over the (rewritten) servers; each atomic task renamed
	// to the group's tools and run on its seed.
	env, err := tasks.SpecEnv(ctx, module.Config{CallTimeout: tasks.CallTimeout}, grouped...)
	if err != nil {
		return nil, err
	}
	names := make([]*module.Manifest, len(env.Modules))
	for i, m := range env.Modules {
		names[i] = m.Manifest()
	}
	exposed := module.ToolNames(names)
	rename := make([]map[string]string, len(servers))
	for i, m := range names {
		rename[i] = map[string]string{}
		for j, t := range m.Tools {
			rename[i][t.Name] = exposed[i][j]
		}
	}
	var pool []*atom
	for si := range servers {
		for _, t := range gen[si] {
			a := t.Atomic[0]
			pid := ""
			if si == 0 {
				if id := a.Bindings["user_id"]; shared[id] != nil {
					pid = id
				}
			} else if pairs := sh[si]; pairs != nil {
				a, pid = rebind(a, pairs)
			}
			at, err := newAtom(ctx, env, si, a, rename[si], t)
			if err != nil {
				return nil, err
			}
			if at != nil {
				at.person = pid
				if pid != "" {
					at.personIn = shared[pid]
				}
				pool = append(pool, at)
				rep.Pools[si].Pool++
				if pid != "" {
					rep.SharedAtoms++
				}
			}
		}
	}
	toolSet := map[string]bool{}
	for _, a := range pool {
		toolSet[a.tool] = true
	}
	rep.ToolsPossible = len(toolSet)
	w, err := newWorld(ctx, env.Seed)
	if err != nil {
		return nil, err
	}
	uses := map[string]int{}
	var out []*task.Task
	var turns []int
	for attempt := 0; len(out) < opts.Tasks && attempt < opts.MaxAttempts; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rep.Attempts++
		rng := rand.New(rand.NewPCG(opts.Seed, uint64(attempt)))
		n := opts.Turns - opts.Spread + rng.IntN(2*opts.Spread+1)
		if n < 2 {
			n = 2
		}
		chosen := sample(pool, len(servers), n, uses, rng)
		if len(chosen) < 2 {
			rep.RejectedBy["no_candidates"]++
			rep.Rejections = append(rep.Rejections, Rejection{Attempt: rep.Attempts, Task: composedID(len(out)), Reason: "no_candidates",
				Detail: fmt.Sprintf("%d atomic task(s) sampled for %d turns; a composed task needs two", len(chosen), n)})
			continue
		}
		t, gs, rej, err := build(ctx, env, w, servers, chosen, len(out), opts, rng)
		if err != nil {
			return nil, err
		}
		if rej != nil {
			rej.Attempt = rep.Attempts
			rep.RejectedBy[rej.Reason]++
			rep.Rejections = append(rep.Rejections, *rej)
			continue
		}
		for _, a := range chosen {
			uses[a.tool]++
		}
		out = append(out, t)
		rep.Grounding.add(gs)
		rep.StateBytes += len(t.InitialState)
		rep.AtomicTurns[len(t.Atomic)]++
		turns = append(turns, len(t.Atomic))
		srv := map[int]bool{}
		for _, a := range chosen {
			srv[a.server] = true
		}
		rep.ServersPerTask[len(srv)]++
		for i, a := range t.Atomic {
			for _, b := range a.After {
				var j int
				fmt.Sscanf(b, "a%d", &j)
				if j >= 1 && chosen[j-1].server != chosen[i].server {
					rep.CrossEdges++
				}
			}
			rep.Edges += len(a.After)
			if len(a.After) == 0 {
				rep.Roots++
			}
		}
		progress("composed %d/%d (attempt %d)", len(out), opts.Tasks, attempt+1)
	}
	rep.Composed = len(out)
	for tool, n := range uses {
		rep.ToolUses[tool] = n
	}
	rep.ToolsCovered = len(uses)
	sort.Ints(turns)
	if k := len(turns); k > 0 {
		rep.TurnsMedian = float64(turns[(k-1)/2]+turns[k/2]) / 2
	}
	return &Result{Tasks: out, Report: rep}, nil
}

// newAtom renames a's tools for the group and runs its reference on the
// group's seed (nil when it does not run there).
func newAtom(ctx context.Context, env *tasks.Env, si int, a task.Atomic, rename map[string]string, t *task.Task) (*atom, error) {
	a.After = nil
	a.Reference = slices.Clone(a.Reference)
	for i := range a.Reference {
		a.Reference[i].Tool = rename[a.Reference[i].Tool]
	}
	a.Checks = slices.Clone(a.Checks)
	for i := range a.Checks {
		if a.Checks[i].Tool != "" {
			a.Checks[i].Tool = rename[a.Checks[i].Tool]
		}
	}
	run, err := env.Exec(ctx, env.Seed, 1, execCalls(a.Reference))
	if err != nil {
		return nil, err
	}
	at := &atom{server: si, a: a, writes: map[string]bool{}, keys: map[string]bool{}, uses: map[string]bool{}, src: t.ID}
	for _, c := range run.Calls {
		if c.Failed() {
			if ro, _ := env.ReadOnly(c.Tool); !ro {
				return nil, nil
			}
		}
	}
	tool, _ := t.Meta["tool"].(string)
	at.tool = rename[tool]
	if at.tool == "" {
		at.tool = a.Reference[len(a.Reference)-1].Tool
	}
	for _, td := range state.Diff(env.Seed, run.Final).Tables {
		var rows [][]any
		for _, r := range td.Added {
			rows = append(rows, r.Key)
		}
		for _, r := range td.Removed {
			rows = append(rows, r.Key)
		}
		for _, r := range td.Changed {
			rows = append(rows, r.Key)
		}
		for _, k := range rows {
			kb, _ := json.Marshal(k)
			at.writes[td.Table+"|"+string(kb)] = true
			for _, v := range k {
				at.keys[fmt.Sprint(v)] = true
			}
		}
	}
	for _, v := range a.Bindings {
		at.uses[v] = true
	}
	for _, c := range a.Reference {
		for _, l := range textLeaves(string(c.Arguments)) {
			at.uses[l] = true
		}
	}
	return at, nil
}

func execCalls(cs []task.Call) []tasks.ExecCall {
	out := make([]tasks.ExecCall, len(cs))
	for i, c := range cs {
		out[i] = tasks.ExecCall{Tool: c.Tool, Arguments: c.Arguments}
	}
	return out
}

// depends reports whether b, after a, depends on it: b writes a row a
// writes, names a row a changes, or is bound to the shared person a
// changed something for in another server.
func depends(a, b *atom) bool {
	if a.person != "" && a.person == b.person && a.server != b.server && len(a.writes) > 0 {
		return true
	}
	for k := range b.writes {
		if a.writes[k] {
			return true
		}
	}
	for v := range b.uses {
		if a.keys[v] {
			return true
		}
	}
	return false
}

// conflicts reports whether b repeats a's action on a row a changes (the
// second would fail: an order cancelled twice).
func conflicts(a, b *atom) bool {
	if a.tool != b.tool {
		return false
	}
	for k := range b.writes {
		if a.writes[k] {
			return true
		}
	}
	return false
}

// sample picks n atoms: one per server first, then coverage-aware (weight
// 1/(1+uses of the tool), tripled for an atom sharing an entity with one
// already chosen), never two conflicting ones.
func sample(pool []*atom, servers, n int, uses map[string]int, rng *rand.Rand) []*atom {
	var chosen []*atom
	taken := map[*atom]bool{}
	local := map[string]int{}
	pick := func(ok func(*atom) bool) bool {
		var cands []*atom
		var ws []float64
		total := 0.0
		for _, a := range pool {
			if taken[a] || !ok(a) {
				continue
			}
			bad := false
			for _, c := range chosen {
				if conflicts(c, a) {
					bad = true
					break
				}
			}
			if bad {
				continue
			}
			wgt := 1 / float64(1+uses[a.tool]+local[a.tool])
			for _, c := range chosen {
				if depends(c, a) {
					wgt *= 3
					break
				}
			}
			cands = append(cands, a)
			ws = append(ws, wgt)
			total += wgt
		}
		if len(cands) == 0 {
			return false
		}
		x := rng.Float64() * total
		i := 0
		for ; i < len(cands)-1; i++ {
			x -= ws[i]
			if x < 0 {
				break
			}
		}
		a := cands[i]
		taken[a] = true
		local[a.tool]++
		chosen = append(chosen, a)
		return true
	}
	for s := 0; s < servers && len(chosen) < n; s++ {
		s := s
		if !pick(func(a *atom) bool { return a.server == s }) {
			return nil
		}
	}
	for len(chosen) < n {
		if !pick(func(*atom) bool { return true }) {
			break
		}
	}
	// Interleave deterministically so branches of different servers mix.
	rng.Shuffle(len(chosen), func(i, j int) { chosen[i], chosen[j] = chosen[j], chosen[i] })
	// Follow-up reads: about half the writes are followed (later, not
	// necessarily next) by a read of the entity they changed, which
	// depends on them; they replace the last atoms so the count holds.
	var out []*atom
	extra := 0
	for i, a := range chosen {
		if i >= len(chosen)-extra {
			break
		}
		out = append(out, a)
		if len(a.writes) == 0 || rng.IntN(2) == 0 {
			continue
		}
		if f := followUp(pool, a, rng); f != nil && len(out) < len(chosen)-extra && !lastOfServer(out, chosen[i+1:len(chosen)-extra]) {
			out = append(out, f)
			extra++
		}
	}
	return out
}

// lastOfServer reports whether the last atom of rest, the one a follow-up
// read would replace, is the only atom of its server in kept and rest:
// dropping it would leave a "cross-server" task on fewer servers.
func lastOfServer(kept, rest []*atom) bool {
	drop := rest[len(rest)-1]
	for _, xs := range [][]*atom{kept, rest[:len(rest)-1]} {
		for _, x := range xs {
			if x.server == drop.server {
				return false
			}
		}
	}
	return true
}

// followUp returns a read of pool, of a's server, rebound to the entity a
// binds under the read's one binding name (get_order_details of the order
// a changed), or nil.
func followUp(pool []*atom, a *atom, rng *rand.Rand) *atom {
	var cands []*atom
	for _, r := range pool {
		if len(r.writes) > 0 || len(r.a.Bindings) != 1 {
			continue
		}
		for k := range r.a.Bindings {
			switch {
			case r.server == a.server:
				if v, ok := a.a.Bindings[k]; ok && a.keys[v] {
					cands = append(cands, r)
				}
			case k == "user_id" && a.person != "" && a.personIn[r.server]:
				// The same person's record in the other server.
				cands = append(cands, r)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	r := cands[rng.IntN(len(cands))]
	var key, old string
	for k, v := range r.a.Bindings {
		key, old = k, v
	}
	nv := a.a.Bindings[key]
	if r.server != a.server {
		nv = a.person
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	sub := func(raw json.RawMessage) json.RawMessage {
		if len(raw) == 0 {
			return raw
		}
		return json.RawMessage(strings.ReplaceAll(string(raw), q(old), q(nv)))
	}
	f := &atom{server: r.server, tool: r.tool, writes: map[string]bool{}, keys: map[string]bool{}, uses: map[string]bool{nv: true}, src: r.src + "@" + a.src}
	if r.server != a.server {
		f.person, f.personIn = a.person, a.personIn
	}
	f.a = r.a
	f.a.Bindings = map[string]string{key: nv}
	f.a.Request = strings.ReplaceAll(r.a.Request, old, nv)
	f.a.Reference = slices.Clone(r.a.Reference)
	for i := range f.a.Reference {
		f.a.Reference[i].Arguments = sub(f.a.Reference[i].Arguments)
	}
	f.a.Checks = slices.Clone(r.a.Checks)
	for i := range f.a.Checks {
		f.a.Checks[i].Arguments = sub(f.a.Checks[i].Arguments)
	}
	f.a.Rubric = nil
	return f
}

// composedID is the id of the composed task at 0-based index idx.
func composedID(idx int) string { return fmt.Sprintf("compose-%04d", idx+1) }

// certify is tasks.Certify (a test wraps it to break a composite).
var certify = tasks.Certify

// build turns chosen atoms into a grounded, certified composed task; a
// non-nil Rejection (Attempt unset) rejects the sample.
func build(ctx context.Context, env *tasks.Env, w *world, servers []*spec.Server, chosen []*atom, idx int, opts Options, rng *rand.Rand) (*task.Task, GroundStats, *Rejection, error) {
	id := composedID(idx)
	t := &task.Task{ID: id, Source: "weft-synth-compose:" + id}
	for _, s := range servers {
		t.Modules = append(t.Modules, s.Name)
	}
	var briefs []string
	var calls []task.Call
	var values [][]string
	var sources []string
	for i, a := range chosen {
		at := a.a
		at.ID = fmt.Sprintf("a%d", i+1)
		for j := 0; j < i; j++ {
			if depends(chosen[j], a) {
				at.After = append(at.After, fmt.Sprintf("a%d", j+1))
			}
		}
		t.Atomic = append(t.Atomic, at)
		briefs = append(briefs, fmt.Sprintf("%d. %s", i+1, at.Request))
		calls = append(calls, at.Reference...)
		var vs []string
		for v := range a.uses {
			vs = append(vs, v)
		}
		sort.Strings(vs)
		values = append(values, vs)
		sources = append(sources, servers[a.server].Name+":"+a.src)
	}
	t.Brief = "I have several requests:\n" + strings.Join(briefs, "\n")
	t.Checks = []task.Check{{Kind: task.CheckStateEqual, Note: "the final state equals the composite reference's"}}
	full, err := env.Exec(ctx, env.Seed, 1, execCalls(calls))
	if err != nil {
		return nil, GroundStats{}, nil, err
	}
	var outputs []string
	for _, c := range full.Calls {
		if !c.Failed() {
			outputs = append(outputs, textLeaves(c.Output)...)
		}
	}
	rerun := func(v *state.Version) ([]string, error) {
		run, err := env.Exec(ctx, v, 1, execCalls(calls))
		if err != nil {
			return nil, err
		}
		var out []string
		for _, c := range run.Calls {
			if ro, _ := env.ReadOnly(c.Tool); ro {
				out = append(out, c.Output)
			}
		}
		return out, nil
	}
	dist := opts.Distractors
	if dist < 0 {
		dist = 0
	}
	v, gs, err := w.ground(ctx, env.Store, groundInput{values: values, outputs: outputs, rerun: rerun}, dist, rng)
	if err != nil {
		return nil, gs, nil, err
	}
	rep, _, err := certify(ctx, []*task.Task{t}, func([]string) (*tasks.Env, error) { return env, nil },
		tasks.Options{Initial: func(*task.Task, *tasks.Env) (*state.Version, error) { return v, nil }})
	if err != nil {
		return nil, gs, nil, err
	}
	if rep.TasksCertified != 1 {
		rs := rep.Rejections()
		if len(rs) == 0 {
			return nil, gs, &Rejection{Task: id, Reason: "not_certified", Detail: "certification rejected the task without a reason"}, nil
		}
		r := rs[0]
		rej := &Rejection{Task: id, Reason: string(r.Reason), Atomic: r.Atomic, Detail: r.Detail, Call: r.Call, Check: r.Check, Rejections: len(rs)}
		var k int
		if _, err := fmt.Sscanf(r.Atomic, "a%d", &k); err == nil && k >= 1 && k <= len(sources) {
			rej.Source = sources[k-1]
		}
		return nil, gs, rej, nil
	}
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		return nil, gs, nil, err
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		return nil, gs, nil, err
	}
	t.InitialState = compact.Bytes()
	t.Meta = map[string]any{
		"generator":    "weft.synth.compose",
		"atomic_turns": len(t.Atomic),
		"sources":      sources,
		"grounding":    gs,
	}
	return t, gs, nil, nil
}
