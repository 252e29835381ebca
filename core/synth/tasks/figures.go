package tasks

import (
	"context"
	"sort"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/spec"
)

// SetFigures sums Generate over a set of servers (one Env each): the
// figures of docs/certification.md.
type SetFigures struct {
	Name string `json:"name"`
	// Servers given; Validated those passing synth.Validate (when the
	// set is validated first); Generated those Generate ran on.
	Servers   int `json:"servers"`
	Validated int `json:"validated"`
	Generated int `json:"generated_servers"`
	// WithTasks counts servers with at least one kept task.
	WithTasks   int            `json:"servers_with_tasks"`
	Attempts    int            `json:"attempts"`
	Discarded   int            `json:"discarded"`
	Candidates  int            `json:"candidates"`
	Certified   int            `json:"certified"`
	Pruned      int            `json:"pruned"`
	Kept        int            `json:"kept"`
	KeptWrite   int            `json:"kept_write"`
	KeptRead    int            `json:"kept_read"`
	Rounds      map[int]int    `json:"rounds"` // rounds run -> servers
	ByReason    map[Reason]int `json:"by_reason"`
	Covered     int            `json:"coverage_covered"`
	Possible    int            `json:"coverage_possible"`
	Errors      int            `json:"errors"`
	FirstErrors []string       `json:"first_errors,omitempty"`
}

// Figures generates tasks for every server of servers (validating each
// first when validate) with opts and sums the reports.
func Figures(ctx context.Context, name string, servers []*spec.Server, validate bool, opts GenOptions) *SetFigures {
	f := &SetFigures{Name: name, Servers: len(servers), Rounds: map[int]int{}, ByReason: map[Reason]int{}}
	for _, r := range Reasons {
		f.ByReason[r] = 0
	}
	fail := func(err error) {
		f.Errors++
		if len(f.FirstErrors) < 5 {
			f.FirstErrors = append(f.FirstErrors, err.Error())
		}
	}
	for _, s := range servers {
		if validate {
			rep, err := synth.Validate(ctx, s, synth.ValidateOptions{})
			if err != nil {
				fail(err)
				continue
			}
			if !rep.Passed {
				continue
			}
			f.Validated++
		}
		env, err := SpecEnv(ctx, module.Config{}, s)
		if err != nil {
			fail(err)
			continue
		}
		res, err := Generate(ctx, env, []*spec.Server{s}, opts)
		env.Store.Close()
		if err != nil {
			fail(err)
			continue
		}
		r := res.Report
		f.Generated++
		if r.Kept > 0 {
			f.WithTasks++
		}
		f.Attempts += r.Attempts
		f.Discarded += r.Discarded
		f.Candidates += r.Generated
		f.Certified += r.Certified
		f.Pruned += r.Pruned
		f.Kept += r.Kept
		f.KeptWrite += r.KeptWrite
		f.KeptRead += r.KeptRead
		f.Rounds[r.Rounds]++
		for k, n := range r.ByReason {
			f.ByReason[k] += n
		}
		f.Covered += r.Coverage.Covered
		f.Possible += r.Coverage.Possible
	}
	return f
}

// SynthesizeToucan synthesizes every Toucan server of docs with the
// deterministic synthesizer (seed 0) and returns those that pass
// spec.Validate, sorted by name.
func SynthesizeToucan(ctx context.Context, docs []synth.Docs) []*spec.Server {
	d := &synth.Deterministic{}
	var out []*spec.Server
	for i := range docs {
		s, err := d.Synthesize(ctx, &synth.Request{Docs: docs[i]})
		if err != nil || s.Validate() != nil {
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
