package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// GenOptions tunes Generate.
type GenOptions struct {
	// Seed seeds every sampling draw: the same seed, servers and options
	// give the same tasks, byte for byte.
	Seed uint64
	// PerTool is the number of candidates per tool per round (default 6).
	PerTool int
	// MaxRounds bounds the regeneration rounds (default 5).
	MaxRounds int
	// Modules are the generated tasks' Task.Modules (default: the
	// servers' names).
	Modules []string
	// Writer writes the request text, brief and rubric of each kept task
	// (nil: Templates, deterministic).
	Writer RequestWriter
	// Progress, when set, is told about each round.
	Progress func(round int, msg string)
}

// GenReportFormat is the format of a generation report.
const GenReportFormat = "weft.synth-tasks/v1"

// GenReport says what Generate did.
type GenReport struct {
	Format  string   `json:"format"`
	Servers []string `json:"servers"`
	Seed    uint64   `json:"seed"`
	Rounds  int      `json:"rounds"`
	// Attempts counts sampled argument sets; Discarded those whose
	// target call failed when run (by error code, "failure:KIND" for a
	// failure without one), never certified; Generated the candidates
	// certified (Attempts - Discarded).
	Attempts    int            `json:"attempts"`
	Discarded   int            `json:"discarded"`
	DiscardedBy map[string]int `json:"discarded_by"`
	// Generated counts candidate atomic tasks; Certified those that
	// passed certification; Pruned certified ones dropped as duplicates
	// of a kept task's signature; Kept = Certified - Pruned.
	Generated int `json:"generated"`
	Certified int `json:"certified"`
	Pruned    int `json:"pruned"`
	Kept      int `json:"kept"`
	// KeptWrite and KeptRead split Kept by the atomic task's kind.
	KeptWrite int `json:"kept_write"`
	KeptRead  int `json:"kept_read"`
	// ByReason counts the candidates' certification rejections.
	ByReason map[Reason]int `json:"by_reason"`
	// Probes counts the error-branch probe calls (not tasks).
	Probes   int          `json:"probes"`
	Coverage Coverage     `json:"coverage"`
	PerRound []RoundStats `json:"per_round"`
	// Rejections lists every candidate's rejections (first 200).
	Rejections []Rejection `json:"rejections,omitempty"`
}

// RoundStats is one regeneration round.
type RoundStats struct {
	Round      int `json:"round"`
	Candidates int `json:"candidates"`
	Certified  int `json:"certified"`
	Kept       int `json:"kept"`
	NewCells   int `json:"new_cells"`
}

// Coverage is the coverage map: one cell per tool x access (read|write) x
// branch ("ok" or a declared error code); a cell is covered when a kept
// task's reference makes a successful call of the tool (branch ok) or a
// candidate or probe call of it answered that error code.
type Coverage struct {
	Cells    []CoverageCell `json:"cells"`
	Covered  int            `json:"covered"`
	Possible int            `json:"possible"`
}

// CoverageCell is one cell of the coverage map.
type CoverageCell struct {
	Tool    string `json:"tool"`
	Access  string `json:"access"`
	Branch  string `json:"branch"`
	Covered bool   `json:"covered"`
	// Tasks counts kept tasks whose reference covers the cell (ok only).
	Tasks int `json:"tasks"`
}

// GenResult is Generate's output.
type GenResult struct {
	Tasks  []*task.Task
	Report *GenReport
}

// RequestWriter writes the user-facing text of a generated task: its
// atomic request, its brief and its rubric items, from the task and its
// reference run (the calls with their outputs).
type RequestWriter interface {
	Write(ctx context.Context, t *task.Task, run *Run) error
}

// Templates is the deterministic RequestWriter: the request is
// task.RenderRequest of the task's last reference call (a fixed sentence
// per known tool, else "Please run TOOL with K: V, ..."), the brief the
// request, one rubric item naming the call.
type Templates struct{}

// Write implements RequestWriter.
func (Templates) Write(_ context.Context, t *task.Task, run *Run) error {
	a := &t.Atomic[0]
	last := a.Reference[len(a.Reference)-1]
	a.Request = task.RenderRequest(last)
	t.Brief = a.Request
	verb := "carries out"
	if t.Meta["kind"] == "read" {
		verb = "looks up and reports"
	}
	a.Rubric = []task.RubricItem{{ID: "r1", Criterion: fmt.Sprintf("The agent %s %s for exactly the entities the user names (%s), and tells the user the outcome.", verb, last.Tool, bindingText(a.Bindings))}}
	return nil
}

func bindingText(b map[string]string) string {
	if len(b) == 0 {
		return "none"
	}
	ks := make([]string, 0, len(b))
	for k := range b {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + " " + b[k]
	}
	return strings.Join(parts, ", ")
}

// schema is the part of a JSON Schema argument generation reads.
type schema struct {
	Type       any                `json:"type"`
	Enum       []any              `json:"enum"`
	Minimum    *float64           `json:"minimum"`
	Maximum    *float64           `json:"maximum"`
	Items      json.RawMessage    `json:"items"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Format     string             `json:"format"`
	Ref        string             `json:"$ref"`
	AnyOf      []*schema          `json:"anyOf"`
	OneOf      []*schema          `json:"oneOf"`
	Defs       map[string]*schema `json:"$defs"`
}

// resolve follows a "#/$defs/NAME" reference and takes the first
// non-null alternative of anyOf/oneOf.
func (s *schema) resolve(defs map[string]*schema, depth int) *schema {
	for depth < 8 {
		depth++
		switch {
		case s.Ref != "":
			d := defs[strings.TrimPrefix(s.Ref, "#/$defs/")]
			if d == nil {
				return &schema{}
			}
			s = d
		case len(s.AnyOf) > 0 || len(s.OneOf) > 0:
			alts := append(append([]*schema{}, s.AnyOf...), s.OneOf...)
			next := alts[0]
			for _, a := range alts {
				if a != nil && a.Type != "null" {
					next = a
					break
				}
			}
			if next == nil {
				return &schema{}
			}
			s = next
		default:
			return s
		}
	}
	return s
}

func (s *schema) typ() string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
	}
	if s.Properties != nil {
		return "object"
	}
	return "string"
}

type genTool struct {
	name   string // as the Env routes it
	server string // the server (module) it belongs to
	spec   spec.Tool
	schema *schema
	anchor string // the first required *_id argument ("" none)
}

// Generate generates certified atomic tasks for servers (whose modules
// env runs): per round, PerTool candidates per tool (a write tool: the
// read tools whose required arguments its bound arguments supply, then the
// write; a read tool alone), arguments sampled from the seed state around
// one anchor row (the row holding the first required *_id argument;
// other arguments from the same row's values when it has them, else from
// the whole seed, else from the schema), checked by Certify; certified
// candidates with a signature (tool multiset, diff shape) already kept are
// pruned. Error-branch probes (the anchor id replaced by one that does not
// exist) fill the coverage map's error cells. Rounds repeat, for the tools
// with an uncovered cell, until a round covers no new cell or MaxRounds.
// Kept tasks get their text from opts.Writer. Errors: a writer error, a
// workspace failure, ctx done.
func Generate(ctx context.Context, env *Env, servers []*spec.Server, opts GenOptions) (*GenResult, error) {
	if opts.PerTool <= 0 {
		opts.PerTool = 6
	}
	if opts.MaxRounds <= 0 {
		opts.MaxRounds = 5
	}
	if opts.Writer == nil {
		opts.Writer = Templates{}
	}
	mods := opts.Modules
	rep := &GenReport{Format: GenReportFormat, Seed: opts.Seed, ByReason: map[Reason]int{}, DiscardedBy: map[string]int{}}
	for _, r := range Reasons {
		rep.ByReason[r] = 0
	}
	var tools []*genTool
	for _, s := range servers {
		rep.Servers = append(rep.Servers, s.Name)
		if opts.Modules == nil {
			mods = append(mods, s.Name)
		}
		for _, t := range s.Tools {
			name := t.Name
			if _, ok := env.route[name]; !ok {
				name = s.Name + "__" + t.Name
			}
			if _, ok := env.route[name]; !ok {
				return nil, fmt.Errorf("tasks: server %s tool %s is not in the environment", s.Name, t.Name)
			}
			gt := &genTool{name: name, server: s.Name, spec: t, schema: &schema{}}
			if len(t.InputSchema) > 0 {
				if err := json.Unmarshal(t.InputSchema, gt.schema); err != nil {
					return nil, fmt.Errorf("tasks: server %s tool %s: input schema: %w", s.Name, t.Name, err)
				}
			}
			for _, r := range gt.schema.Required {
				if r == "id" || strings.HasSuffix(r, "_id") {
					gt.anchor = r
					break
				}
			}
			tools = append(tools, gt)
		}
	}
	ix, err := buildIndex(env.Seed)
	if err != nil {
		return nil, err
	}
	cov := newCoverage(tools)
	g := &generator{env: env, ix: ix, tools: tools, opts: opts, mods: mods}
	kept := map[string]bool{}
	perTool := map[string]int{}
	var out []*task.Task
	var runs []*Run
	pending := tools
	for round := 1; round <= opts.MaxRounds && len(pending) > 0; round++ {
		rs := RoundStats{Round: round}
		before := cov.covered()
		var cands []*task.Task
		var candRuns []*Run
		for _, gt := range pending {
			// Up to PerTool candidates whose reference runs, from at most
			// 4*PerTool sampled attempts: an attempt whose call fails is
			// discarded (its error code still counts for coverage).
			got := 0
			for i := 0; i < 4*opts.PerTool && got < opts.PerTool; i++ {
				rng := g.rng(gt.name, round, i)
				t := g.candidate(gt, rng)
				rep.Attempts++
				if t == nil {
					rep.Discarded++
					continue
				}
				run, err := env.Exec(ctx, env.Seed, 1, execCalls(t.Atomic[0].Reference))
				if err != nil {
					return nil, err
				}
				cov.observe(run, false)
				if last := run.Calls[len(run.Calls)-1]; last.Failed() {
					rep.Discarded++
					if last.ErrorCode != "" {
						rep.DiscardedBy[last.ErrorCode]++
					} else {
						rep.DiscardedBy["failure:"+last.Failure]++
					}
					continue
				}
				got++
				t.Meta["signature"] = signature(run)
				cands = append(cands, t)
				candRuns = append(candRuns, run)
			}
			if probe := g.probe(gt, g.rng(gt.name, round, -1)); probe != nil {
				run, err := env.Exec(ctx, env.Seed, 1, []ExecCall{*probe})
				if err != nil {
					return nil, err
				}
				rep.Probes++
				cov.observe(run, false)
			}
		}
		rs.Candidates = len(cands)
		rep.Generated += len(cands)
		crep, _, err := Certify(ctx, cands, func([]string) (*Env, error) { return env, nil }, Options{})
		if err != nil {
			return nil, err
		}
		for r, n := range crep.ByReason {
			rep.ByReason[r] += n
		}
		for _, rj := range crep.Rejections() {
			if len(rep.Rejections) < 200 {
				rep.Rejections = append(rep.Rejections, rj)
			}
		}
		for i, tr := range crep.Results {
			if !tr.Certified {
				continue
			}
			rs.Certified++
			t := cands[i]
			sig := t.Meta["signature"].(string)
			if kept[sig] {
				rep.Pruned++
				continue
			}
			kept[sig] = true
			tool := t.Meta["tool"].(string)
			perTool[tool]++
			t.ID = fmt.Sprintf("%s.%d", tool, perTool[tool])
			if err := opts.Writer.Write(ctx, t, candRuns[i]); err != nil {
				return nil, fmt.Errorf("tasks: writing task %s: %w", t.ID, err)
			}
			if err := t.Validate(); err != nil {
				return nil, fmt.Errorf("tasks: the writer left task %s invalid: %w", t.ID, err)
			}
			cov.observe(candRuns[i], true)
			out = append(out, t)
			runs = append(runs, candRuns[i])
			rs.Kept++
			if t.Meta["kind"] == "read" {
				rep.KeptRead++
			} else {
				rep.KeptWrite++
			}
		}
		rep.Certified += rs.Certified
		rs.NewCells = cov.covered() - before
		rep.PerRound = append(rep.PerRound, rs)
		rep.Rounds = round
		if opts.Progress != nil {
			opts.Progress(round, fmt.Sprintf("%d candidates, %d certified, %d kept, %d new coverage cells", rs.Candidates, rs.Certified, rs.Kept, rs.NewCells))
		}
		if rs.NewCells == 0 {
			break
		}
		pending = nil
		for _, gt := range tools {
			if !cov.complete(gt.name) {
				pending = append(pending, gt)
			}
		}
	}
	rep.Kept = len(out)
	rep.Coverage = cov.report()
	_ = runs
	return &GenResult{Tasks: out, Report: rep}, nil
}

type generator struct {
	defs map[string]*schema // the current tool's $defs
	// coherent: every argument from the anchor row (reads), not only ids.
	coherent bool
	env      *Env
	ix       *entityIndex
	tools    []*genTool
	opts     GenOptions
	mods     []string
}

func (g *generator) rng(tool string, round, i int) *rand.Rand {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d", tool, round, i)
	return rand.New(rand.NewPCG(g.opts.Seed, h.Sum64()))
}

func pick[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// candidate builds one candidate task for gt (nil when its arguments
// cannot be built).
func (g *generator) candidate(gt *genTool, rng *rand.Rand) *task.Task {
	var row *entityRow
	anchor := gt.anchor
	// A read takes all its arguments from one row (a lookup by name and
	// zip must name one user); without an id its anchor is the first
	// required argument the seed has values for.
	g.coherent = gt.spec.ReadOnly
	if anchor == "" && gt.spec.ReadOnly {
		for _, r := range gt.schema.Required {
			if len(g.ix.byKey[r]) > 0 {
				anchor = r
				break
			}
		}
	}
	if anchor != "" {
		rows := g.ix.top[anchor]
		if len(rows) == 0 {
			// The key lives inside a JSON document: any row holding it.
			for i := range g.ix.rows {
				if len(g.ix.rows[i].vals[anchor]) > 0 {
					rows = append(rows, i)
				}
			}
		}
		if len(rows) == 0 {
			return nil
		}
		row = &g.ix.rows[pick(rng, rows)]
	}
	g.defs = gt.schema.Defs
	args := map[string]any{}
	for _, p := range gt.schema.Required {
		ps := gt.schema.Properties[p]
		if ps == nil {
			ps = &schema{}
		}
		args[p] = g.value(ps, p, row, rng, 0)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	kind := "write"
	if gt.spec.ReadOnly {
		kind = "read"
	}
	bindings := map[string]string{}
	for k, v := range args {
		if k == "id" || strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "_ids") {
			switch x := v.(type) {
			case string:
				bindings[k] = x
			case []any:
				var parts []string
				for _, y := range x {
					if s, ok := y.(string); ok {
						parts = append(parts, s)
					}
				}
				if len(parts) > 0 {
					bindings[k] = strings.Join(parts, ",")
				}
			}
		}
	}
	var ref []task.Call
	var checks []task.Check
	if kind == "write" {
		ref = append(ref, g.feeding(gt, args)...)
		ref = append(ref, task.Call{Tool: gt.name, Arguments: raw})
		checks = []task.Check{{Kind: task.CheckChangedRows, Note: "the values the reference write sets hold"}}
	} else {
		ref = []task.Call{{Tool: gt.name, Arguments: raw}}
		cmp := make([]string, 0, len(args))
		for k := range args {
			cmp = append(cmp, k)
		}
		sort.Strings(cmp)
		checks = []task.Check{{Kind: task.CheckRequiredCall, Tool: gt.name, Arguments: raw, Compare: cmp, Note: "the agent looked it up"}}
	}
	if len(bindings) == 0 {
		bindings = nil
	}
	return &task.Task{
		ID: gt.name, Source: "weft-synth:" + strings.Join(g.mods, "+"), Modules: g.mods,
		Brief: task.RenderRequest(ref[len(ref)-1]),
		Atomic: []task.Atomic{{ID: "a1", Request: task.RenderRequest(ref[len(ref)-1]), Bindings: bindings,
			Reference: ref, Checks: checks}},
		Meta: map[string]any{"generator": "weft.synth.tasks", "tool": gt.name, "kind": kind},
	}
}

// feeding returns the read calls that feed a write's arguments: read tools
// of the write's own server (by name) whose required arguments are all
// bound scalars of args and whose declared reads overlap the write's
// tables; at most two. Table names are the server's own: in a group
// another server's "users" is another table (namespaced), and its reads
// would look up this server's ids there and fail.
func (g *generator) feeding(w *genTool, args map[string]any) []task.Call {
	tables := map[string]bool{}
	for _, t := range append(append([]string{}, w.spec.Reads...), w.spec.Writes...) {
		tables[strings.ToLower(t)] = true
	}
	var out []task.Call
	for _, r := range g.tools {
		if r.server != w.server || !r.spec.ReadOnly || len(r.schema.Required) == 0 || r.anchor == "" {
			continue
		}
		overlap := len(r.spec.Reads) == 0
		for _, t := range r.spec.Reads {
			if tables[strings.ToLower(t)] {
				overlap = true
			}
		}
		if !overlap {
			continue
		}
		ra := map[string]any{}
		ok := true
		for _, p := range r.schema.Required {
			v, found := args[p]
			if !found || !isScalar(v) {
				ok = false
				break
			}
			ra[p] = v
		}
		if !ok {
			continue
		}
		raw, _ := json.Marshal(ra)
		out = append(out, task.Call{Tool: r.name, Arguments: raw})
		if len(out) == 2 {
			break
		}
	}
	return out
}

// probe is gt called with its anchor id replaced by one the seed does not
// hold (the not-found branch); nil without an anchor.
func (g *generator) probe(gt *genTool, rng *rand.Rand) *ExecCall {
	if gt.anchor == "" {
		return nil
	}
	t := g.candidate(gt, rng)
	if t == nil {
		return nil
	}
	c := t.Atomic[0].Reference[len(t.Atomic[0].Reference)-1]
	var m map[string]any
	if json.Unmarshal(c.Arguments, &m) != nil {
		return nil
	}
	m[gt.anchor] = "no-such-" + gt.anchor
	raw, _ := json.Marshal(m)
	return &ExecCall{Tool: gt.name, Arguments: raw}
}

// value generates a value of schema s for argument name: from row's
// values for name (or its singular) when there are any, else from the
// whole seed's, else from the schema.
func (g *generator) value(s *schema, name string, row *entityRow, rng *rand.Rand, depth int) any {
	s = s.resolve(g.defs, 0)
	if len(s.Enum) > 0 {
		return pick(rng, s.Enum)
	}
	typ := s.typ()
	switch typ {
	case "array":
		item := &schema{}
		if len(s.Items) > 0 && s.Items[0] == '{' {
			_ = json.Unmarshal(s.Items, item)
		}
		return []any{g.value(item, singular(name), row, rng, depth+1)}
	case "object":
		m := map[string]any{}
		if depth < 4 {
			for _, p := range s.Required {
				ps := s.Properties[p]
				if ps == nil {
					ps = &schema{}
				}
				m[p] = g.value(ps, p, row, rng, depth+1)
			}
		}
		return m
	}
	// Ids come from the anchor row (the entities belong together); other
	// values from the whole seed, so that a write changes something.
	var cands []any
	keys := keysFor(name)
	if idLike(name) || g.coherent {
		for _, k := range keys {
			if row != nil && len(row.vals[k]) > 0 {
				cands = row.vals[k]
				break
			}
		}
	}
	if cands == nil {
		for _, k := range keys {
			if len(g.ix.byKey[k]) > 0 {
				cands = g.ix.byKey[k]
				break
			}
		}
	}
	var fit []any
	for _, c := range cands {
		if v, ok := convert(c, typ); ok && inRange(v, s) {
			fit = append(fit, v)
		}
	}
	if len(fit) > 0 {
		return pick(rng, fit)
	}
	switch typ {
	case "integer", "number":
		lo := 1.0
		if s.Minimum != nil {
			lo = *s.Minimum
		}
		hi := lo + 9
		if s.Maximum != nil && *s.Maximum < hi {
			hi = *s.Maximum
		}
		v := lo + float64(rng.IntN(int(hi-lo)+1))
		if typ == "integer" {
			return int64(v)
		}
		return v
	case "boolean":
		return rng.IntN(2) == 1
	}
	switch {
	case strings.Contains(name, "email"):
		return fmt.Sprintf("user%d@example.com", rng.IntN(1000))
	case strings.Contains(name, "date"):
		return fmt.Sprintf("2024-05-%02d", 1+rng.IntN(28))
	}
	return fmt.Sprintf("%s %d", strings.ReplaceAll(name, "_", " "), rng.IntN(1000))
}

func idLike(name string) bool {
	return name == "id" || name == "ids" || strings.HasSuffix(name, "_id") || strings.HasSuffix(name, "_ids")
}

// keysFor lists the index keys an argument's values may sit under: its
// name, its singular, and both without a "new_"/"old_"/"target_"/
// "current_" prefix ("new_item_ids" -> item_id).
func keysFor(name string) []string {
	out := []string{name, singular(name)}
	for _, p := range []string{"new_", "old_", "target_", "current_"} {
		if strings.HasPrefix(name, p) {
			b := strings.TrimPrefix(name, p)
			out = append(out, b, singular(b))
		}
	}
	return out
}

func convert(x any, typ string) (any, bool) {
	switch typ {
	case "integer":
		if n, ok := x.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, true
			}
		}
	case "number":
		if n, ok := x.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f, true
			}
		}
	case "boolean":
		b, ok := x.(bool)
		return b, ok
	case "string":
		if s, ok := x.(string); ok {
			return s, true
		}
	}
	return nil, false
}

func inRange(v any, s *schema) bool {
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case float64:
		f = x
	default:
		return true
	}
	return (s.Minimum == nil || f >= *s.Minimum) && (s.Maximum == nil || f <= *s.Maximum)
}

// signature is a run's tool multiset and diff shape: "tools|table:+a-r~c[cols];...".
func signature(run *Run) string {
	var tools []string
	for _, c := range run.Calls {
		tools = append(tools, c.Tool)
	}
	sort.Strings(tools)
	return strings.Join(tools, ",") + "|" + shape(state.Diff(run.From, run.Final))
}

func shape(d *state.Changes) string {
	var parts []string
	for _, t := range d.Tables {
		cols := map[string]bool{}
		for _, r := range t.Changed {
			for _, c := range r.Columns {
				cols[c.Column] = true
			}
		}
		cs := make([]string, 0, len(cols))
		for c := range cols {
			cs = append(cs, c)
		}
		sort.Strings(cs)
		parts = append(parts, fmt.Sprintf("%s:+%d-%d~%d[%s]", strings.ToLower(t.Table), len(t.Added), len(t.Removed), len(t.Changed), strings.Join(cs, ",")))
	}
	return strings.Join(parts, ";")
}

type coverage struct {
	cells map[[3]string]*CoverageCell
	order [][3]string
	tools map[string]bool
}

func newCoverage(tools []*genTool) *coverage {
	c := &coverage{cells: map[[3]string]*CoverageCell{}, tools: map[string]bool{}}
	for _, t := range tools {
		acc := "write"
		if t.spec.ReadOnly {
			acc = "read"
		}
		c.add(t.name, acc, "ok")
		for _, e := range t.spec.Errors {
			c.add(t.name, acc, e)
		}
	}
	return c
}

func (c *coverage) add(tool, acc, branch string) *CoverageCell {
	k := [3]string{tool, acc, branch}
	if x, ok := c.cells[k]; ok {
		return x
	}
	x := &CoverageCell{Tool: tool, Access: acc, Branch: branch}
	c.cells[k] = x
	c.order = append(c.order, k)
	return x
}

func (c *coverage) access(tool string) string {
	for _, acc := range []string{"write", "read"} {
		if _, ok := c.cells[[3]string{tool, acc, "ok"}]; ok {
			return acc
		}
	}
	return "write"
}

// observe marks the cells run's calls reach: error codes always, ok only
// for a kept task's run.
func (c *coverage) observe(run *Run, kept bool) {
	for _, call := range run.Calls {
		acc := c.access(call.Tool)
		switch {
		case call.ErrorCode != "":
			if x, ok := c.cells[[3]string{call.Tool, acc, call.ErrorCode}]; ok {
				x.Covered = true
			}
		case !call.Failed() && kept:
			if x, ok := c.cells[[3]string{call.Tool, acc, "ok"}]; ok {
				x.Covered = true
				x.Tasks++
			}
		}
	}
}

func (c *coverage) covered() int {
	n := 0
	for _, x := range c.cells {
		if x.Covered {
			n++
		}
	}
	return n
}

func (c *coverage) complete(tool string) bool {
	for _, k := range c.order {
		if k[0] == tool && !c.cells[k].Covered {
			return false
		}
	}
	return true
}

func (c *coverage) report() Coverage {
	keys := append([][3]string{}, c.order...)
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		if (a[2] == "ok") != (b[2] == "ok") {
			return a[2] == "ok"
		}
		return a[2] < b[2]
	})
	out := Coverage{Cells: []CoverageCell{}}
	for _, k := range keys {
		x := *c.cells[k]
		out.Cells = append(out.Cells, x)
		out.Possible++
		if x.Covered {
			out.Covered++
		}
	}
	return out
}
