package train

import (
	"fmt"
	"strings"
)

// Variant selects the tool-call branch of the FTRL turn reward. The
// no-tool-call branch is the same for every variant.
type Variant int

// The FTRL reward variants, named as in the FTRL reference
// (bytedance/FTRL, Code/verl/utils/reward_score/tool.py: compute_solve_f1,
// compute_solve_pr, compute_solve_rate, compute_solve_precision). With q
// sub-questions newly solved by the turn's p > 0 calls:
const (
	SolveF1        Variant = iota // 2q/(p+1), the paper's default
	SolveP                        // q²/p ("solve-PR" in the reference)
	SolveR                        // q ("solve-rate")
	SolvePrecision                // q/p
)

func (v Variant) String() string {
	switch v {
	case SolveF1:
		return "solve-F1"
	case SolveP:
		return "solve-P"
	case SolveR:
		return "solve-R"
	case SolvePrecision:
		return "solve-precision"
	}
	return fmt.Sprintf("Variant(%d)", int(v))
}

// TurnOutcome is what the FTRL reward needs to know about one assistant
// turn. All counts are of sub-questions (the reference's per-tool lists of
// expected answers) or of tool calls.
type TurnOutcome struct {
	// Calls is p, the number of tool calls the turn made. Calls <= 0 means
	// the turn made no tool call and is scored by its text (as in the
	// reference, where an empty tool_calls list is falsy), so p = 0 never
	// reaches a division.
	Calls int
	// NewlySolved is q, the sub-questions this turn's calls solved that were
	// unsolved before it (each sub-question counted once).
	NewlySolved int
	// Unsolved is t, the sub-questions still unsolved when the turn starts
	// (the reference's unsolved_cnt, computed before the turn's calls).
	Unsolved int
	// AllSolvedBefore reports that every sub-question was solved before this
	// turn (the reference's solve_rate == 1).
	AllSolvedBefore bool
	// Content is the turn's text to the user.
	Content string
	// Correct reports that Content contains the final answer; AnswerMatches
	// is the reference's test.
	Correct bool
}

// LeakMarkers are the substrings that mark tool-call markup leaked into a
// text answer: exactly the FTRL reference's three (Qwen's tool-call tags and
// its tool-response tag).
var LeakMarkers = []string{"<tool_call>", "</tool_call>", "<tool_parsed_response>"}

// LeaksToolMarkup reports whether content contains any of LeakMarkers
// (case-sensitive, as in the reference).
func LeaksToolMarkup(content string) bool {
	for _, m := range LeakMarkers {
		if strings.Contains(content, m) {
			return true
		}
	}
	return false
}

// AnswerMatches is the FTRL reference's correctness test: after lower-casing
// both, deleting every comma and trimming surrounding white space, answer is
// a substring of content. An answer that normalises to "" matches anything,
// as in the reference.
func AnswerMatches(content, answer string) bool {
	norm := func(s string) string {
		return strings.TrimSpace(strings.ReplaceAll(strings.ToLower(s), ",", ""))
	}
	return strings.Contains(norm(content), norm(answer))
}

// FTRLReward is the per-turn reward of FTRL (Ye et al. 2025, "Feedback-Driven
// Tool-Use Improvements in Large Language Models via Automated Build
// Environments", arXiv:2508.08791), computed as the reference
// implementation does (bytedance/FTRL, Code/verl/utils/reward_score/tool.py).
// The result is unitless.
//
// With tool calls (p = o.Calls > 0, q = o.NewlySolved), by variant:
//
//	SolveF1:        2q/(p+1)
//	SolveP:         q²/p
//	SolveR:         q
//	SolvePrecision: q/p
//
// Without tool calls, the first branch that holds, in this order:
//
//  1. -0.5 if the content is empty (white space only counts as empty: the
//     reference strips the response before parsing it);
//  2. -0.3 if the content leaks tool-call markup (LeaksToolMarkup);
//  3. 1/(1+t) if the answer is correct (o.Correct), t = o.Unsolved;
//  4. 0.5 if every sub-question was already solved (o.AllSolvedBefore) — the
//     turn closes a solved task without repeating the answer;
//  5. 0 otherwise.
//
// A correct answer is checked before AllSolvedBefore, so a correct answer
// after everything was solved scores 1/(1+0) = 1, not 0.5. An unknown
// variant panics.
func FTRLReward(o TurnOutcome, v Variant) float64 {
	if o.Calls > 0 {
		p, q := float64(o.Calls), float64(o.NewlySolved)
		switch v {
		case SolveF1:
			return 2 * q / (p + 1)
		case SolveP:
			return q * q / p
		case SolveR:
			return q
		case SolvePrecision:
			return q / p
		}
		panic("train.FTRLReward: unknown " + v.String())
	}
	switch {
	case strings.TrimSpace(o.Content) == "":
		return -0.5
	case LeaksToolMarkup(o.Content):
		return -0.3
	case o.Correct:
		return 1 / (1 + float64(o.Unsolved))
	case o.AllSolvedBefore:
		return 0.5
	}
	return 0
}
