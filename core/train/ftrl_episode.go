package train

import (
	"context"
	"errors"
	"fmt"
)

// FTRLEpisode is FTRL's per-step accounting over one sample: the
// unsolved_set and solve_rate as FTRL's data sampler
// (Code/data_sample/data_sample.py:sample_process, line 29) carries them
// from prefix to prefix. Each turn's tool outputs remove the answers they
// solve (the same FTRLAnswerVerify loop the reward runs), and solve_rate
// becomes 1 - remaining/initial. The set only ever shrinks. A turn without
// tool calls ends the episode, as in the sampler. Not safe for concurrent
// use.
type FTRLEpisode struct {
	mode      FTRLMode
	answer    *string
	initial   int
	unsolved  UnsolvedSet
	solveRate float64
	steps     int
	done      bool
}

// NewFTRLEpisode starts an episode from the sample's unsolved_set, final
// answer (nil for None) and mode. solve_rate starts at 0. The set is
// copied. Errors: an empty set (the sampler's 1 - remaining/initial would
// divide by zero) or a repeated tool.
func NewFTRLEpisode(unsolved UnsolvedSet, answer *string, m FTRLMode) (*FTRLEpisode, error) {
	if err := unsolved.Validate(); err != nil {
		return nil, err
	}
	n := unsolved.Count()
	if n == 0 {
		return nil, errEmptyUnsolved
	}
	var a *string
	if answer != nil {
		s := *answer
		a = &s
	}
	return &FTRLEpisode{mode: m, answer: a, initial: n, unsolved: unsolved.Clone()}, nil
}

// Unsolved returns a copy of the current unsolved_set.
func (e *FTRLEpisode) Unsolved() UnsolvedSet { return e.unsolved.Clone() }

// SolveRate is the current solve_rate: 1 - Unsolved().Count()/initial count,
// computed as FTRL does (one float64 division, then the subtraction).
func (e *FTRLEpisode) SolveRate() float64 { return e.solveRate }

// Steps is the number of turns scored so far.
func (e *FTRLEpisode) Steps() int { return e.steps }

// Done reports that a turn without tool calls ended the episode.
func (e *FTRLEpisode) Done() bool { return e.done }

// ErrFTRLEpisodeDone is returned by Step after a turn without tool calls.
var ErrFTRLEpisodeDone = errors.New("FTRL episode already ended with a turn without tool calls")

// Step scores one turn with FTRLScore from the episode's current
// unsolved_set and solve_rate, then applies it: the answers the turn's
// outputs solved are removed and solve_rate is recomputed. outputs holds
// the output text of each call ParseFTRLResponse finds in response, in
// order (nil for a turn without calls). On error nothing changes.
func (e *FTRLEpisode) Step(ctx context.Context, response string, outputs []string) (FTRLResult, error) {
	if e.done {
		return FTRLResult{}, ErrFTRLEpisodeDone
	}
	r, err := FTRLScore(ctx, FTRLStep{
		Response:  response,
		Unsolved:  e.unsolved,
		SolveRate: e.solveRate,
		Answer:    e.answer,
		Feedback:  outputs,
	}, e.mode)
	if err != nil {
		return FTRLResult{}, fmt.Errorf("FTRL step %d: %w", e.steps, err)
	}
	e.steps++
	if len(r.Calls) == 0 {
		e.done = true
		return r, nil
	}
	e.unsolved = r.Unsolved.Clone()
	e.solveRate = 1 - float64(e.unsolved.Count())/float64(e.initial)
	return r, nil
}
