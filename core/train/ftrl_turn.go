package train

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// FTRLState is what FTRL's reward knows about a sample before a turn: its
// unsolved_set, solve_rate and final answer (nil for None).
type FTRLState struct {
	Unsolved  UnsolvedSet
	SolveRate float64
	Answer    *string
}

// FTRLParsedFromTurn reads a weft atomic turn as FTRL's reward reads a
// response: the calls are the turn's tool calls (Segment.Calls), in order,
// named by string, with their arguments decoded (Python's json.loads in
// FTRLCompatible; a JSON string holding JSON is decoded again) and
// re-rendered with json.dumps(ensure_ascii=False); a call whose arguments
// do not decode is left out, as FTRL's parser drops it. Content is the
// turn's text to the user (Segment.Content), stripped as m strips. The
// outputs are the contents of the turn's tool messages (Completion), the
// i-th tool message answering the i-th call ("" when there is none).
func FTRLParsedFromTurn(tr *TurnResult, m FTRLMode) (FTRLParsed, []string) {
	var results []string
	for _, msg := range tr.Completion {
		if msg.Role == "tool" {
			results = append(results, msg.Content)
		}
	}
	p := FTRLParsed{Content: m.strip(tr.Segment.Content)}
	var outputs []string
	for i, c := range tr.Segment.Calls {
		if c.Tool == "" {
			continue
		}
		args, err := m.loads(string(c.Arguments))
		if err != nil {
			continue
		}
		if args.Kind == pyvalue.Str {
			if args, err = m.loads(args.Str); err != nil {
				continue
			}
		}
		out := ""
		if i < len(results) {
			out = results[i]
		}
		p.Calls = append(p.Calls, FTRLCall{Name: pyvalue.StrValue(c.Tool), Arguments: pyvalue.JSONDumps(args), Args: args})
		outputs = append(outputs, out)
	}
	return p, outputs
}

// FTRLTurnScores scores a weft atomic turn with FTRL's reward.
//
// With st (an FTRL sample's state), it is exactly FTRL's per-step reward
// (FTRLScoreParsed over FTRLParsedFromTurn): the tool messages' text is
// matched against st.Unsolved, and the result carries the unsolved_set
// after the turn.
//
// With st nil — a weft task without FTRL data — the turn's atomic task is
// its only sub-question, judged by weft's verifier instead of text
// matching: q = 1 when the turn verified (tr.Reward == 1), t = 1 unsolved
// before the turn, and the final answer is correct when the turn verified.
// p is every call weft's harness recorded (Segment.Calls); the content
// branches are FTRL's. The result's Unsolved and Solved are then nil.
func FTRLTurnScores(ctx context.Context, tr *TurnResult, st *FTRLState, m FTRLMode) (FTRLResult, error) {
	parsed, outputs := FTRLParsedFromTurn(tr, m)
	if st != nil {
		return FTRLScoreParsed(ctx, parsed, FTRLStep{Unsolved: st.Unsolved, SolveRate: st.SolveRate, Answer: st.Answer, Feedback: outputs}, m)
	}
	if !m.valid() {
		return FTRLResult{}, fmt.Errorf("train.FTRLTurnScores: unknown %v", m)
	}
	q := 0
	if tr.Reward == 1 {
		q = 1
	}
	// p counts every call weft's harness recorded: the verifier judged the
	// turn with all of them.
	o := TurnOutcome{Calls: len(tr.Segment.Calls), Unsolved: 1, Content: parsed.Content}
	if o.Calls > 0 {
		o.NewlySolved = q
	} else {
		o.Correct = q == 1
	}
	res := FTRLResult{Content: parsed.Content, Calls: parsed.Calls, Feedback: outputs, Branch: o.branch()}
	res.Scores = o.scores()
	return res, nil
}
