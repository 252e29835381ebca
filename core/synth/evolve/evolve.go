package evolve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/attribute"
	"github.com/weft-dev/weft/core/model/scripted"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/report"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/sdk/spec"
)

// Format is the format of an evolution report (Result as JSON).
const Format = "weft.evolve/v2"

// Server is one server of the system and the documentation it was
// synthesized from (nil Docs: hand-written or docs unknown; its tools are
// never re-synthesized).
type Server struct {
	Spec *spec.Server
	Docs *synth.Docs
}

// System is what evolves: servers and the tasks over them (each task's
// Modules name one server).
type System struct {
	Servers []*Server
	Tasks   []*task.Task
}

// Revisable classes (attribute.Class values; the policy is never revised).
var Revisable = []attribute.Class{attribute.ClassEnvironment, attribute.ClassTask, attribute.ClassVerifier}

// Options configures Run.
type Options struct {
	// Rounds of rollouts and revisions (default 3); one more rollout
	// pass measures the system after the last round.
	Rounds int
	// Budget caps the revisions tried per round (0 = no cap): a candidate
	// that is applied, rolled back or discarded counts.
	Budget int
	// Classes that may be revised (default Revisable); a finding of a
	// class not listed is counted and left as it is.
	Classes []attribute.Class
	// Synthesizer answers environment revisions (nil: synth.Deterministic
	// with seed 0).
	Synthesizer synth.Synthesizer
	// Faults and PolicySeed are the scripted policy's (core/model/scripted).
	Faults     scripted.Faults
	PolicySeed uint64
	// Episodes per task per round (default 2).
	Episodes int
	// Progress, when set, is told what each round does.
	Progress func(msg string)
}

// Statuses of a Revision.
const (
	// StatusApplied: the revision removed the symptom and nothing got
	// worse; the new version replaced the old one.
	StatusApplied = "applied"
	// StatusRolledBack: the revision removed the symptom but made things
	// worse (a task certified before no longer certifies, or a task whose
	// faithful episode passed now fails); the old version stays.
	StatusRolledBack = "rolled_back"
	// StatusDiscarded: the new version does not remove the symptom.
	StatusDiscarded = "discarded"
)

// Actions of a Revision.
const (
	ActionResynthesized = "resynthesized" // environment: the tool's function re-synthesized
	ActionRebound       = "rebound"       // task: an entity binding replaced
	ActionDropped       = "dropped"       // task: removed from the active set, with its reason
	ActionRegenerated   = "regenerated"   // verifier: a check regenerated from the reference's effect
)

// Revision is one revision tried, with the evidence that motivated it.
type Revision struct {
	Round int             `json:"round"`
	Class attribute.Class `json:"class"`
	// Component names what was revised: "server:S/tool:T" or
	// "task:ID/atomic:A" (with "/check:N" for a verifier revision).
	Component string `json:"component"`
	Action    string `json:"action"`
	Status    string `json:"status"`
	// Source says what found it: "certification", "attribution" or both.
	Source string `json:"source"`
	// Evidence is the failing call, its error, the state diff or the
	// certification rejection that motivated the revision.
	Evidence string `json:"evidence"`
	// Detail says what changed, or why it was rolled back or discarded.
	Detail string `json:"detail"`
	// From and To identify the versions: program digests for a server,
	// "ID@vN" for a task.
	From string `json:"from"`
	To   string `json:"to"`
	// Tasks are the task ids the finding came from.
	Tasks []string `json:"tasks"`
}

// Round is one round's figures: report.Round, the one type evolve.json
// and metrics.json share.
type Round = report.Round

// Result is an evolution run: one Round per round plus the final
// measurement, every revision tried, and the evolved system.
type Result struct {
	Format    string     `json:"format"`
	Rounds    []Round    `json:"rounds"`
	Revisions []Revision `json:"revisions"`
	// Dropped maps a dropped task's id to its reason.
	Dropped map[string]string `json:"dropped"`
	// System is the evolved system (servers and active tasks; not in JSON).
	System *System `json:"-"`
	// History holds every task version made, in order (not in JSON;
	// the pipeline writes it as a weft.tasks/v1 file per version).
	History []*task.Task `json:"-"`
	// Snapshots are the system after each revising round (not in JSON).
	Snapshots []*System `json:"-"`
}

// ErrOptions: Options or the System are unusable.
var ErrOptions = errors.New("evolve: bad options")

func (o *Options) defaults() error {
	if o.Rounds == 0 {
		o.Rounds = 3
	}
	if o.Episodes == 0 {
		o.Episodes = 2
	}
	if o.Classes == nil {
		o.Classes = Revisable
	}
	if o.Synthesizer == nil {
		o.Synthesizer = &synth.Deterministic{}
	}
	if o.Rounds < 1 || o.Episodes < 1 || o.Budget < 0 {
		return fmt.Errorf("%w: rounds %d, episodes %d, budget %d (want rounds and episodes >= 1, budget >= 0)", ErrOptions, o.Rounds, o.Episodes, o.Budget)
	}
	for _, c := range o.Classes {
		if !slices.Contains(Revisable, c) {
			return fmt.Errorf("%w: class %q cannot be revised (use %v; policy failures stay training signal)", ErrOptions, c, Revisable)
		}
	}
	return o.Faults.Validate()
}

func (o *Options) allowed(c attribute.Class) bool { return slices.Contains(o.Classes, c) }

// Run evolves sys for opts.Rounds rounds and returns the report; sys is
// not changed (the evolved system is Result.System). Each round: build the
// servers' environments, certify the active tasks, roll out opts.Episodes
// episodes per task of the scripted policy with faults plus one faithful
// episode, verify and attribute every failed checkpoint, collect the
// non-policy findings (attributions and certification rejections), and try
// a revision for each within the budget (see the package doc). Errors: bad
// options or system (ErrOptions), ctx done, a server that does not load,
// or a workspace failure; component faults are findings, never errors.
func Run(ctx context.Context, sys *System, opts Options) (*Result, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	cur, err := cloneSystem(sys)
	if err != nil {
		return nil, err
	}
	res := &Result{Format: Format, Rounds: []Round{}, Revisions: []Revision{}, Dropped: map[string]string{}}
	var prev *world
	for r := 1; r <= opts.Rounds+1; r++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := newWorld(ctx, cur)
		if err != nil {
			return nil, err
		}
		rd, err := w.measure(ctx, r, &opts)
		if err != nil {
			w.close()
			return nil, err
		}
		if prev != nil {
			rd.Regressed = regressed(prev, w)
			prev.close()
		}
		rd.Revise = r <= opts.Rounds
		if rd.Revise {
			revs, unrevised, err := w.revise(ctx, r, &opts, cur, res)
			if err != nil {
				w.close()
				return nil, err
			}
			for _, v := range revs {
				switch v.Status {
				case StatusApplied:
					rd.Applied[v.Class]++
				case StatusRolledBack:
					rd.RolledBack[v.Class]++
				case StatusDiscarded:
					rd.Discarded[v.Class]++
				}
			}
			rd.Findings, rd.Unrevised = len(w.findings), unrevised
			res.Revisions = append(res.Revisions, revs...)
			res.Snapshots = append(res.Snapshots, &System{Servers: slices.Clone(cur.Servers), Tasks: slices.Clone(cur.Tasks)})
		}
		if opts.Progress != nil {
			opts.Progress(fmt.Sprintf("round %d: %d tasks (%d certified), %d episodes, pass rate %.3f, non-policy tool error rate %.4f, %d findings, applied %v",
				r, rd.Tasks, rd.Certified, rd.Episodes, report.RateOr0(rd.PassRate), report.RateOr0(rd.ToolErrorRate), rd.Findings, rd.Applied))
		}
		res.Rounds = append(res.Rounds, *rd)
		prev = w
	}
	if prev != nil {
		prev.close()
	}
	res.System = cur
	return res, nil
}

// regressed lists the tasks (same id in both worlds, not dropped) that
// certified or whose faithful episode passed in a and do not in b.
func regressed(a, b *world) []string {
	out := []string{}
	for id, ok := range a.certified {
		if _, active := b.certified[id]; !active {
			continue
		}
		if (ok && !b.certified[id]) || (a.faithful[id] && !b.faithful[id]) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

func cloneSystem(sys *System) (*System, error) {
	if sys == nil || len(sys.Servers) == 0 {
		return nil, fmt.Errorf("%w: the system has no servers", ErrOptions)
	}
	out := &System{}
	names := map[string]bool{}
	for _, s := range sys.Servers {
		if s == nil || s.Spec == nil {
			return nil, fmt.Errorf("%w: a server without a spec", ErrOptions)
		}
		if names[s.Spec.Name] {
			return nil, fmt.Errorf("%w: two servers named %q", ErrOptions, s.Spec.Name)
		}
		names[s.Spec.Name] = true
		out.Servers = append(out.Servers, s)
	}
	for _, t := range sys.Tasks {
		if len(t.Modules) != 1 || !names[t.Modules[0]] {
			return nil, fmt.Errorf("%w: task %s: modules %v must name one server of the system", ErrOptions, t.ID, t.Modules)
		}
		out.Tasks = append(out.Tasks, t)
	}
	return out, nil
}

// cloneTask deep-copies a task through its JSON form.
func cloneTask(t *task.Task) (*task.Task, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	var c task.Task
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// newVersion is a deep copy of t with Version + 1 and the revision's
// evidence in Meta["revision"].
func newVersion(t *task.Task, round int, class attribute.Class, why string) (*task.Task, error) {
	c, err := cloneTask(t)
	if err != nil {
		return nil, err
	}
	c.Version = t.Version + 1
	if c.Meta == nil {
		c.Meta = map[string]any{}
	}
	c.Meta["revision"] = map[string]any{"round": round, "class": string(class), "from_version": t.Version, "why": why}
	return c, nil
}

func taskRef(t *task.Task) string { return fmt.Sprintf("%s@v%d", t.ID, t.Version) }

func programDigest(s *spec.Server) string { return spec.ProgramDigest(s.Program, s.ErrorCodes()) }

// moduleConfig is the runtime config of the native servers.
var moduleConfig = module.Config{}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
