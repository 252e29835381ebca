package synth

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/spec"
)

// MaxRevisions is the most revision rounds Revise runs after the first
// answer (round 0): rounds 1 to 3.
const MaxRevisions = 3

// ReviseOptions configures Revise.
type ReviseOptions struct {
	Validate ValidateOptions
	// Rounds is the number of revision rounds allowed after the first
	// answer: 0 = MaxRevisions; more than MaxRevisions is MaxRevisions;
	// negative = none (validate the first answer only).
	Rounds int
	// Progress, when set, is called after each round.
	Progress func(Round)
}

// AnswerError is a synthesizer answer that is not a usable server (not
// JSON, not a weft.server/v1 object): Revise feeds it back to the next
// round as an interface finding (CodeSpecInvalid, field "answer").
type AnswerError struct {
	Synthesizer string
	Docs        string
	Round       int
	Excerpt     string // the start of the answer
	Err         error
}

func (e *AnswerError) Error() string {
	s := fmt.Sprintf("synth: %s synthesizer, docs %q, round %d: the answer is not a weft.server/v1 server: %v", e.Synthesizer, e.Docs, e.Round, e.Err)
	if e.Excerpt != "" {
		s += fmt.Sprintf(" (answer begins %q)", e.Excerpt)
	}
	return s
}

func (e *AnswerError) Unwrap() error { return e.Err }

func excerptOf(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// ErrNoServer is returned (wrapped) by Revise when no round gave a usable
// server.
var ErrNoServer = errors.New("no usable server")

// Revise synthesizes a server from docs and revises it: round 0 asks syn
// for a server and validates it; each revision round (Request.Round >= 1)
// passes the previous server and its findings back. It stops when a round
// passes, when a revision round brings no improvement over the best round
// so far (a later first failing stage, or the same stage with fewer
// findings), or after opts.Rounds revision rounds. It returns the best
// server and its report, whose Rounds record every round; a server that
// still has findings is returned with a report that did not pass (the
// caller decides; weft synth env registers only a passing one). The error
// is ctx's, the synthesizer's (any error but an *AnswerError ends
// revision), or ErrNoServer when no round gave a usable server.
func Revise(ctx context.Context, syn Synthesizer, docs Docs, opts ReviseOptions) (*spec.Server, *Report, error) {
	rounds := opts.Rounds
	switch {
	case rounds == 0 || rounds > MaxRevisions:
		rounds = MaxRevisions
	case rounds < 0:
		rounds = 0
	}
	vopts := opts.Validate
	if vopts.Synthesizer == "" {
		vopts.Synthesizer = syn.Name()
	}
	var (
		best     *spec.Server
		bestRep  *Report
		last     *Report
		prev     *spec.Server
		findings []Finding
		history  []Round
	)
	for round := 0; round <= rounds; round++ {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s, err := syn.Synthesize(ctx, &Request{Docs: docs, Round: round, Previous: prev, Findings: findings})
		var rep *Report
		rd := Round{Round: round}
		var ae *AnswerError
		switch {
		case err == nil && s == nil:
			err = &AnswerError{Synthesizer: syn.Name(), Docs: docs.Name, Round: round, Err: errors.New("no server returned")}
			fallthrough
		case errors.As(err, &ae):
			rd.Error = err.Error()
			rep = answerReport(docs.Name, vopts.Synthesizer, err)
			s = nil
		case err != nil:
			return nil, nil, err
		default:
			c := *s
			c.Source = &spec.Source{Docs: docs.Source, Synthesizer: syn.Name(), Rounds: round}
			if c.Source.Docs == "" {
				c.Source.Docs = docs.Name
			}
			s = &c
			if rep, err = Validate(ctx, s, vopts); err != nil {
				return nil, nil, err
			}
		}
		rd.Passed, rd.Findings, rd.FirstFailed = rep.Passed, rep.Findings, rep.FirstFailed()
		rd.Improved = s != nil && (bestRep == nil || better(rep, bestRep))
		if rd.Improved {
			best, bestRep = s, rep
		}
		last = rep
		history = append(history, rd)
		if opts.Progress != nil {
			opts.Progress(rd)
		}
		if rep.Passed || (round > 0 && !rd.Improved) {
			break
		}
		if s != nil {
			prev = s
		}
		findings = rep.Findings
	}
	if best == nil {
		last.Rounds = history
		return nil, last, fmt.Errorf("synth: %s synthesizer, docs %q: %w in %d round(s): %s", syn.Name(), docs.Name, ErrNoServer, len(history), history[len(history)-1].Error)
	}
	bestRep.Rounds = history
	return best, bestRep, nil
}

// answerReport is the report of an unusable answer: one interface
// finding, the other stages skipped.
func answerReport(docs, synthesizer string, err error) *Report {
	f := Finding{Stage: StageInterface, Code: CodeSpecInvalid, Field: "answer", Message: err.Error()}
	r := &Report{Format: ReportFormat, Server: docs, Synthesizer: synthesizer, Findings: []Finding{f}}
	for _, st := range Stages {
		sr := StageReport{Stage: st, Status: StatusSkipped}
		if st == StageInterface {
			sr.Status, sr.Findings = StatusFailed, 1
		}
		r.Stages = append(r.Stages, sr)
	}
	return r
}

// better reports whether a is an improvement on b: it passed where b did
// not, its first failing stage comes later, or the same stage fails with
// fewer findings.
func better(a, b *Report) bool {
	ai, bi := stageRank(a), stageRank(b)
	if ai != bi {
		return ai > bi
	}
	return len(a.Findings) < len(b.Findings)
}

func stageRank(r *Report) int {
	if r.Passed {
		return len(Stages)
	}
	return slices.Index(Stages, r.FirstFailed())
}

// NotPassedError is Register's error for a server that did not pass
// validation after revision: Report holds its findings and rounds.
type NotPassedError struct {
	Server string
	Report *Report
}

func (e *NotPassedError) Error() string {
	var codes []string
	h := e.Report.Histogram()
	for _, c := range e.Report.Codes() {
		codes = append(codes, fmt.Sprintf("%s %d", c, h[c]))
	}
	msg := fmt.Sprintf("synth: server %q did not pass validation after %d round(s): %d finding(s) (%s); nothing registered",
		e.Server, len(e.Report.Rounds), len(e.Report.Findings), strings.Join(codes, ", "))
	if len(e.Report.Findings) > 0 {
		msg += "; first: " + e.Report.Findings[0].Message
	}
	return msg
}

// Register synthesizes, validates and revises a server from docs
// (Revise) and, when it passed, stores it in reg as a server bundle on the
// registry's interpreter module (module.ResolveInterpreter), tagged
// name:version and name:latest. It returns the server, its report and the
// bundle digest; a server that did not pass is a *NotPassedError and
// nothing is stored.
func Register(ctx context.Context, syn Synthesizer, docs Docs, reg *module.Registry, opts ReviseOptions) (*spec.Server, *Report, string, error) {
	s, rep, err := Revise(ctx, syn, docs, opts)
	if err != nil {
		return nil, rep, "", err
	}
	if !rep.Passed {
		return s, rep, "", &NotPassedError{Server: s.Name, Report: rep}
	}
	interp, err := module.ResolveInterpreter(reg)
	if err != nil {
		return s, rep, "", err
	}
	b, err := module.ServerBundle(s, interp)
	if err != nil {
		return s, rep, "", err
	}
	d, err := reg.Put(b)
	return s, rep, d, err
}
