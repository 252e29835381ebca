package train

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// FTRLMode selects how closely FTRLScore follows FTRL's reference code.
// Both modes use the same branches and formulas (FTRLReward); they differ
// only in how a response is cut into content and tool calls and how text is
// normalised before matching. docs/ftrl.md lists every difference.
type FTRLMode int

const (
	// FTRLCompatible reproduces FTRL's Python code bit for bit, quirks
	// included (bytedance/FTRL at 3ea979b4, Code/verl/utils/reward_score/
	// tool.py, Code/utils/utils.py, Code/utils/parse_output.py): the
	// suffix tokens are removed once each, in a fixed order; the
	// <tool_call> tag is removed with str.lstrip (a character set);
	// white space is Python's str.isspace; lower-casing is Python's
	// str.lower (İ -> i̇, final sigma); the tool-call JSON is Python's
	// json.loads (NaN, Infinity, 1e400 accepted); non-string names count
	// as calls that never match. Checked on every case of
	// examples/data/ftrl-reward.
	FTRLCompatible FTRLMode = iota
	// FTRLDefault is weft's own reading of the same reward, for rollouts
	// scored by weft: every trailing run of <|im_end|>/<|endoftext|> is
	// removed, the tag is removed as a prefix, white space is Unicode
	// White_Space, lower-casing is context-free (Go's strings.ToLower),
	// the tool-call JSON is RFC 8259 (no NaN/Infinity, no out-of-range
	// numbers) and a call's name must be a string.
	FTRLDefault
)

// ftrlQuirk is one FTRL behaviour FTRLDefault deliberately does not copy.
// docs/ftrl.md names each; TestFTRLDefaultDifferencesPerQuirk attributes
// every case where the modes disagree to exactly one of them.
type ftrlQuirk uint

const (
	quirkSuffixOnce ftrlQuirk = 1 << iota // <|endoftext|> then <|im_end|>, once each
	quirkLStripSet                        // lstrip('<tool_call>') strips a character set
	quirkPySpace                          // str.strip() also strips U+001C..U+001F
	quirkPyLower                          // str.lower(): İ -> i̇, final sigma
	quirkPyJSON                           // json.loads: NaN, Infinity, 1e400, int digit limit
	quirkAnyName                          // a truthy non-string name is a call
	quirkAll        = quirkSuffixOnce | quirkLStripSet | quirkPySpace | quirkPyLower | quirkPyJSON | quirkAnyName
)

var ftrlQuirkNames = []struct {
	q    ftrlQuirk
	name string
}{
	{quirkSuffixOnce, "suffix-once"}, {quirkLStripSet, "lstrip-set"}, {quirkPySpace, "py-space"},
	{quirkPyLower, "py-lower"}, {quirkPyJSON, "py-json"}, {quirkAnyName, "any-name"},
}

// ftrlCustom marks an FTRLMode built from a quirk set (tests only):
// FTRLMode(ftrlCustom | quirks).
const ftrlCustom FTRLMode = 1 << 16

func (m FTRLMode) quirks() ftrlQuirk {
	switch {
	case m == FTRLCompatible:
		return quirkAll
	case m&ftrlCustom != 0:
		return ftrlQuirk(m&^ftrlCustom) & quirkAll
	}
	return 0
}

func (m FTRLMode) has(q ftrlQuirk) bool { return m.quirks()&q != 0 }

func (m FTRLMode) valid() bool {
	return m == FTRLCompatible || m == FTRLDefault || m&ftrlCustom != 0 && ftrlQuirk(m&^ftrlCustom)&^quirkAll == 0
}

func (m FTRLMode) String() string {
	switch m {
	case FTRLCompatible:
		return "compatible"
	case FTRLDefault:
		return "default"
	}
	return fmt.Sprintf("FTRLMode(%d)", int(m))
}

// ParseFTRLMode maps "compatible" and "default" to their FTRLMode.
func ParseFTRLMode(s string) (FTRLMode, error) {
	switch s {
	case "compatible":
		return FTRLCompatible, nil
	case "default":
		return FTRLDefault, nil
	}
	return 0, fmt.Errorf("unknown FTRL mode %q: use compatible or default", s)
}

// FTRLCall is one tool call parsed out of a response.
type FTRLCall struct {
	// Name is the call's "name" value as JSON gave it. In FTRLCompatible
	// it can be any truthy value (123, 1.5, true); only a pyvalue.Str can ever
	// match an unsolved_set entry. In FTRLDefault it is always a pyvalue.Str.
	Name pyvalue.Value
	// Arguments is json.dumps(arguments, ensure_ascii=False) of the parsed
	// arguments, as FTRL passes them on (an arguments string holding JSON
	// is decoded first, so it can be a non-object: "null", "[1, 2]").
	Arguments string
	// Args is the parsed arguments value.
	Args pyvalue.Value
}

// NameString is the call's name as FTRL's messages print it (Python's
// str(name)).
func (c FTRLCall) NameString() string { return pyvalue.ToStr(c.Name) }

// FTRLParsed is a response cut into content and calls.
type FTRLParsed struct {
	// Content is the text the no-call branches look at: the stripped
	// response when no call was parsed (so it still holds a broken
	// <tool_call> block), else the text before the first <tool_call>.
	Content string
	// Calls are the parsed calls, in order; empty when none parsed.
	Calls []FTRLCall
}

const (
	ftrlToolOpen  = "<tool_call>"
	ftrlToolClose = "</tool_call>"
	ftrlEOT       = "<|endoftext|>"
	ftrlIMEnd     = "<|im_end|>"
)

func (m FTRLMode) strip(s string) string {
	if m.has(quirkPySpace) {
		return pyvalue.Strip(s)
	}
	return strings.TrimSpace(s)
}

func (m FTRLMode) lower(s string) string {
	if m.has(quirkPyLower) {
		return pyvalue.Lower(s)
	}
	return strings.ToLower(s)
}

// norm is FTRL's normalisation s.lower().replace(',', ”).strip().
func (m FTRLMode) norm(s string) string {
	return m.strip(strings.ReplaceAll(m.lower(s), ",", ""))
}

// stripSuffixTokens is what the reward does before parsing.
//
// FTRLCompatible (tool.py:compute_solve_f1, line 103):
// response.strip().removesuffix('<|endoftext|>').strip()
// .removesuffix('<|im_end|>').strip().
// FTRLDefault: strip, then remove either token and strip again until
// neither ends the text.
func (m FTRLMode) stripSuffixTokens(r string) string {
	r = m.strip(r)
	if m.has(quirkSuffixOnce) {
		r = m.strip(strings.TrimSuffix(r, ftrlEOT))
		return m.strip(strings.TrimSuffix(r, ftrlIMEnd))
	}
	for {
		switch {
		case strings.HasSuffix(r, ftrlEOT):
			r = m.strip(strings.TrimSuffix(r, ftrlEOT))
		case strings.HasSuffix(r, ftrlIMEnd):
			r = m.strip(strings.TrimSuffix(r, ftrlIMEnd))
		default:
			return r
		}
	}
}

// ParseFTRLResponse cuts a raw model response (special tokens kept, as
// FTRL's ToolRewardManager decodes with skip_special_tokens=False) into
// content and tool calls, as FTRL's reward does: the suffix tokens are
// removed (see FTRLMode), then Code/utils/parse_output.py:parse_qwen (line
// 23) runs: the text from the first <tool_call> on is split on
// </tool_call>; a piece counts only when, stripped, it starts with
// <tool_call>; the tag is removed, the rest stripped and decoded as JSON; it
// must be an object with a truthy "name" and an "arguments" key; arguments
// that are not an object must be a string holding JSON, which is decoded.
// Any failure drops that piece silently. With no call kept, Content is the
// whole stripped response.
func ParseFTRLResponse(response string, m FTRLMode) FTRLParsed {
	r := m.stripSuffixTokens(response)
	start := strings.Index(r, ftrlToolOpen)
	if start < 0 {
		return FTRLParsed{Content: m.strip(r)}
	}
	var calls []FTRLCall
	for _, piece := range strings.Split(r[start:], ftrlToolClose) {
		p := m.strip(piece)
		if p == "" || !strings.HasPrefix(p, ftrlToolOpen) {
			continue
		}
		if m.has(quirkLStripSet) {
			p = pyvalue.LStripSet(p, ftrlToolOpen)
		} else {
			p = strings.TrimPrefix(p, ftrlToolOpen)
		}
		if c, ok := m.parseCall(m.strip(p)); ok {
			calls = append(calls, c)
		}
	}
	if len(calls) == 0 {
		return FTRLParsed{Content: m.strip(r)}
	}
	return FTRLParsed{Content: m.strip(r[:start]), Calls: calls}
}

func (m FTRLMode) loads(s string) (pyvalue.Value, error) {
	if m.has(quirkPyJSON) {
		return pyvalue.JSONLoads(s)
	}
	return pyvalue.Decode(s, pyvalue.Options{Strict: true})
}

// parseCall is parse_qwen's body for one block.
func (m FTRLMode) parseCall(s string) (FTRLCall, bool) {
	v, err := m.loads(s)
	if err != nil || v.Kind != pyvalue.Dict { // tool_call.get fails on non-dicts
		return FTRLCall{}, false
	}
	name, _ := v.Get("name")
	if !name.Truthy() {
		return FTRLCall{}, false
	}
	if !m.has(quirkAnyName) && name.Kind != pyvalue.Str {
		return FTRLCall{}, false
	}
	args, ok := v.Get("arguments")
	if !ok {
		return FTRLCall{}, false
	}
	if args.Kind != pyvalue.Dict {
		if args.Kind != pyvalue.Str { // json.loads of a non-str raises TypeError
			return FTRLCall{}, false
		}
		if args, err = m.loads(args.Str); err != nil {
			return FTRLCall{}, false
		}
	}
	return FTRLCall{Name: name, Arguments: pyvalue.JSONDumps(args), Args: args}, true
}

// FTRLAnswerVerify is Code/utils/utils.py:answer_verify (line 26): every
// piece of gold split on ", " — each lower-cased, commas deleted, stripped —
// is a substring of output normalised the same way. The split comes before
// the normalisation, so "a,b" is one piece "ab" and a trailing ", " adds an
// empty piece (which matches anything).
func FTRLAnswerVerify(output, gold string, m FTRLMode) bool {
	pred := m.norm(output)
	for _, piece := range strings.Split(gold, ", ") {
		if !strings.Contains(pred, m.norm(piece)) {
			return false
		}
	}
	return true
}

// FTRLFinalAnswer is the no-call branch's answer test of tool.py
// (compute_solve_f1, line 127): norm(answer) is a substring of
// norm(content), norm(s) = s.lower().replace(',', ”).strip(). Unlike
// FTRLAnswerVerify it does not split on ", ". A nil answer never matches.
func FTRLFinalAnswer(content string, answer *string, m FTRLMode) bool {
	return answer != nil && strings.Contains(m.norm(content), m.norm(*answer))
}

// FTRLStep is one assistant turn to score.
type FTRLStep struct {
	// Response is the raw decoded turn (FTRL's `response` argument).
	Response string
	// Unsolved is unsolved_set before the turn. FTRLScore never mutates it.
	Unsolved UnsolvedSet
	// SolveRate is the sample's solve_rate (fraction solved before the turn);
	// only the exact value 1.0 matters.
	SolveRate float64
	// Answer is the task's final answer; nil is Python's None.
	Answer *string
	// Feedback holds the output text of each parsed call, in call order
	// (get_feedback's contents). It is used when Run is nil and must then
	// have one entry per parsed call.
	Feedback []string
	// Run executes the parsed calls and returns one output text per call,
	// in order: the text FTRL would see (see FTRLRenderResult). It is not
	// called when the response has no call.
	Run func(ctx context.Context, calls []FTRLCall) ([]string, error)
}

// FTRLScores are the four FTRL rewards of one turn.
type FTRLScores struct {
	F1        float64 `json:"solve_f1"`        // compute_solve_f1: 2q/(p+1)
	PR        float64 `json:"solve_pr"`        // compute_solve_pr: q²/p
	Rate      float64 `json:"solve_rate"`      // compute_solve_rate: q
	Precision float64 `json:"solve_precision"` // compute_solve_precision: q/p
}

// Get returns the score of variant v (SolveF1 -> F1, SolveP -> PR, SolveR ->
// Rate, SolvePrecision -> Precision).
func (s FTRLScores) Get(v Variant) float64 {
	switch v {
	case SolveF1:
		return s.F1
	case SolveP:
		return s.PR
	case SolveR:
		return s.Rate
	case SolvePrecision:
		return s.Precision
	}
	panic("train.FTRLScores.Get: unknown " + v.String())
}

// FTRLBranch names the branch of the reward a turn ended in.
type FTRLBranch string

// The branches of FTRL's reward, in the order they are tested.
const (
	BranchCalls         FTRLBranch = "calls"  // p > 0: the formulas
	BranchEmpty         FTRLBranch = "empty"  // -0.5
	BranchLeak          FTRLBranch = "leak"   // -0.3
	BranchAnswer        FTRLBranch = "answer" // 1/(1+unsolved_cnt)
	BranchSolvedAlready FTRLBranch = "solved" // 0.5
	BranchOther         FTRLBranch = "other"  // 0
)

// FTRLSolved is one expected answer a call's output solved.
type FTRLSolved struct {
	Call   int    // index into FTRLResult.Calls
	Tool   string // the unsolved_set key
	Answer string // the expected answer removed
}

// FTRLResult is a scored turn.
type FTRLResult struct {
	Scores   FTRLScores
	Branch   FTRLBranch
	Content  string     // FTRLParsed.Content
	Calls    []FTRLCall // the parsed calls (p = len(Calls))
	Feedback []string   // the output text of each call
	Solved   []FTRLSolved
	// Unsolved is unsolved_set after the turn: the input minus each solved
	// answer (the value FTRL leaves in its mutated argument).
	Unsolved UnsolvedSet
}

// ErrFTRLUnhashableName is returned for a call whose name is a non-empty
// list or object: FTRL's reward itself raises TypeError (unhashable type)
// on unsolved_set.get(name), so the turn has no FTRL reward.
var ErrFTRLUnhashableName = errors.New("tool call name is a list or object: FTRL's reward raises TypeError (unhashable type)")

// FTRLScore scores one turn with FTRL's four per-step rewards, as
// bytedance/FTRL's Code/verl/utils/reward_score/tool.py computes them
// (compute_solve_pr line 21, compute_solve_rate 60, compute_solve_f1 99,
// compute_solve_precision 138, split "train"), through FTRLReward:
//
//	t = unsolved_cnt = s.Unsolved.Count(), before matching
//	calls = ParseFTRLResponse(s.Response, m).Calls, p = len(calls)
//	p > 0: for each call i in order, the first answer a still in
//	       unsolved[name_i] with FTRLAnswerVerify(feedback_i, a) is
//	       removed and q += 1 (a name that is not a string never matches);
//	       F1 = 2q/(p+1), PR = q²/p, Rate = q, Precision = q/p
//	p = 0: content "" -> -0.5; content holds <tool_call>, </tool_call> or
//	       <tool_parsed_response> -> -0.3; FTRLFinalAnswer -> 1/(1+t);
//	       SolveRate == 1.0 -> 0.5; else 0 (all four equal)
//
// Each score is one IEEE division of small integers, so it equals Python's
// bit for bit. Errors: the feedback count differs from p, Run fails, or
// ErrFTRLUnhashableName; the step is then unscored and s is untouched.
func FTRLScore(ctx context.Context, s FTRLStep, m FTRLMode) (FTRLResult, error) {
	if !m.valid() {
		return FTRLResult{}, fmt.Errorf("train.FTRLScore: unknown %v", m)
	}
	return FTRLScoreParsed(ctx, ParseFTRLResponse(s.Response, m), s, m)
}

// FTRLScoreParsed is FTRLScore for a turn already cut into content and
// calls (s.Response is ignored): a turn weft's harness parsed itself, or
// calls parsed once with ParseFTRLResponse and run before scoring.
// parsed.Content should be stripped as the mode strips. Same formulas and
// errors as FTRLScore.
func FTRLScoreParsed(ctx context.Context, parsed FTRLParsed, s FTRLStep, m FTRLMode) (FTRLResult, error) {
	if !m.valid() {
		return FTRLResult{}, fmt.Errorf("train.FTRLScore: unknown %v", m)
	}
	res := FTRLResult{Content: parsed.Content, Calls: parsed.Calls}
	feedback := s.Feedback
	if len(parsed.Calls) > 0 {
		for i, c := range parsed.Calls {
			if !c.Name.Hashable() {
				return FTRLResult{}, fmt.Errorf("call %d: %w", i, ErrFTRLUnhashableName)
			}
		}
		if s.Run != nil {
			var err error
			if feedback, err = s.Run(ctx, parsed.Calls); err != nil {
				return FTRLResult{}, fmt.Errorf("running the turn's %d tool calls: %w", len(parsed.Calls), err)
			}
		}
		if len(feedback) != len(parsed.Calls) {
			return FTRLResult{}, fmt.Errorf("%d tool outputs for %d parsed tool calls", len(feedback), len(parsed.Calls))
		}
		res.Feedback = append([]string(nil), feedback...)
	}
	unsolved := s.Unsolved.Clone()
	o := TurnOutcome{
		Calls:           len(parsed.Calls),
		Unsolved:        unsolved.Count(),
		AllSolvedBefore: s.SolveRate == 1.0,
		Content:         parsed.Content,
	}
	for i, c := range parsed.Calls {
		if c.Name.Kind != pyvalue.Str {
			continue // unsolved_set.get(123) finds no string key
		}
		at := unsolved.index(c.Name.Str)
		if at < 0 {
			continue
		}
		answers := unsolved[at].Answers
		for j, a := range answers {
			if FTRLAnswerVerify(feedback[i], a, m) {
				unsolved[at].Answers = append(answers[:j:j], answers[j+1:]...)
				res.Solved = append(res.Solved, FTRLSolved{Call: i, Tool: c.Name.Str, Answer: a})
				break
			}
		}
	}
	o.NewlySolved = len(res.Solved)
	if o.Calls == 0 {
		o.Correct = FTRLFinalAnswer(parsed.Content, s.Answer, m)
	}
	res.Scores = o.scores()
	res.Branch = o.branch()
	res.Unsolved = unsolved
	return res, nil
}

// scores is the turn's four rewards, one per Variant (FTRLReward).
func (o TurnOutcome) scores() FTRLScores {
	return FTRLScores{
		F1:        FTRLReward(o, SolveF1),
		PR:        FTRLReward(o, SolveP),
		Rate:      FTRLReward(o, SolveR),
		Precision: FTRLReward(o, SolvePrecision),
	}
}

// branch names the branch FTRLReward takes for o.
func (o TurnOutcome) branch() FTRLBranch {
	switch {
	case o.Calls > 0:
		return BranchCalls
	case strings.TrimSpace(o.Content) == "":
		return BranchEmpty
	case LeaksToolMarkup(o.Content):
		return BranchLeak
	case o.Correct:
		return BranchAnswer
	case o.AllSolvedBefore:
		return BranchSolvedAlready
	}
	return BranchOther
}
