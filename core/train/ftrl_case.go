package train

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// FTRLRenderResult is the text FTRL's Code/utils/utils.py:call_function
// (line 171) makes of a tool's return value, the text its reward matches
// against: a str as is, a list or dict as json.dumps(v, ensure_ascii=False)
// (pyvalue.JSONDumps), anything else as Python's str(v) (True, None, 100.0, 1e-07).
func FTRLRenderResult(v pyvalue.Value) string {
	if v.Kind == pyvalue.List || v.Kind == pyvalue.Dict {
		return pyvalue.JSONDumps(v)
	}
	return pyvalue.ToStr(v)
}

// FTRLRenderJSON is FTRLRenderResult of a JSON document (a tool's result as
// JSON text), decoded in key order with Python's rules (pyvalue.JSONLoads). A JSON
// string renders as its contents.
func FTRLRenderJSON(doc string) (string, error) {
	v, err := pyvalue.JSONLoads(doc)
	if err != nil {
		return "", err
	}
	return FTRLRenderResult(v), nil
}

// FTRLErrorFeedback is the text FTRL's get_feedback (utils.py line 181)
// returns for a call that raised: "an error occured when call NAME: MSG"
// (FTRL's spelling), NAME being Python's str(name).
func FTRLErrorFeedback(name pyvalue.Value, msg string) string {
	return "an error occured when call " + pyvalue.ToStr(name) + ": " + msg
}

// FTRLCaseTool is one entry of a case's tools: a Python function that
// ignores its arguments and either returns Returns or raises an exception
// whose str() is Raises.
type FTRLCaseTool struct {
	Name    string
	Returns *pyvalue.Value
	Raises  *string
}

// FTRLCase is one line of the differential reward cases
// (examples/data/ftrl-reward/README.md): a response, the tools it ran
// against, the outputs FTRL's get_feedback produced, the reward arguments
// and the four scores and unsolved_set after compute_solve_f1 that FTRL's
// own code computed.
type FTRLCase struct {
	ID             string
	Response       string
	Tools          []FTRLCaseTool
	Feedback       []string
	UnsolvedBefore UnsolvedSet
	SolveRate      float64
	Answer         *string
	Scores         FTRLScores
	UnsolvedAfter  UnsolvedSet
}

// ftrlCaseKeys are the required keys of a case line.
var ftrlCaseKeys = []string{"id", "response", "tools", "feedback", "unsolved_set_before", "solve_rate", "answer", "scores", "unsolved_set_after_f1"}

// DecodeFTRLCase decodes one case line. The line must be one JSON object
// (Python's dialect: NaN and Infinity allowed, ints and floats kept apart)
// with every key of the format and no key twice at any depth; keys not in
// the format are ignored. Each error names the offending key.
func DecodeFTRLCase(line []byte) (FTRLCase, error) {
	v, err := pyvalue.Decode(string(line), pyvalue.Options{NoDupKeys: true})
	if err != nil {
		return FTRLCase{}, err
	}
	if v.Kind != pyvalue.Dict {
		return FTRLCase{}, fmt.Errorf("want a JSON object, got %s", v.Kind)
	}
	for _, k := range ftrlCaseKeys {
		if _, ok := v.Get(k); !ok {
			return FTRLCase{}, fmt.Errorf("missing key %q", k)
		}
	}
	get := func(k string) pyvalue.Value { x, _ := v.Get(k); return x }
	var c FTRLCase
	str := func(k string, x pyvalue.Value) (string, error) {
		if x.Kind != pyvalue.Str {
			return "", fmt.Errorf("%s: want a string, got %s", k, x.Kind)
		}
		return x.Str, nil
	}
	if c.ID, err = str("id", get("id")); err != nil {
		return FTRLCase{}, err
	}
	if c.Response, err = str("response", get("response")); err != nil {
		return FTRLCase{}, err
	}
	tools := get("tools")
	if tools.Kind != pyvalue.Dict {
		return FTRLCase{}, fmt.Errorf("tools: want an object, got %s", tools.Kind)
	}
	for _, it := range tools.Dict {
		spec := it.Value
		if spec.Kind != pyvalue.Dict || len(spec.Dict) != 1 {
			return FTRLCase{}, fmt.Errorf("tools[%q]: want {\"returns\": value} or {\"raises\": message}", it.Key)
		}
		t := FTRLCaseTool{Name: it.Key}
		switch x := spec.Dict[0]; x.Key {
		case "returns":
			r := x.Value
			t.Returns = &r
		case "raises":
			if x.Value.Kind != pyvalue.Str {
				return FTRLCase{}, fmt.Errorf("tools[%q].raises: want a string, got %s", it.Key, x.Value.Kind)
			}
			m := x.Value.Str
			t.Raises = &m
		default:
			return FTRLCase{}, fmt.Errorf("tools[%q]: unknown key %q (want returns or raises)", it.Key, x.Key)
		}
		c.Tools = append(c.Tools, t)
	}
	fb := get("feedback")
	if fb.Kind != pyvalue.List {
		return FTRLCase{}, fmt.Errorf("feedback: want a list of strings, got %s", fb.Kind)
	}
	c.Feedback = make([]string, 0, len(fb.List))
	for i, x := range fb.List {
		s, err := str(fmt.Sprintf("feedback[%d]", i), x)
		if err != nil {
			return FTRLCase{}, err
		}
		c.Feedback = append(c.Feedback, s)
	}
	if c.UnsolvedBefore, err = unsolvedFromPy(get("unsolved_set_before")); err != nil {
		return FTRLCase{}, fmt.Errorf("unsolved_set_before: %w", err)
	}
	if c.UnsolvedAfter, err = unsolvedFromPy(get("unsolved_set_after_f1")); err != nil {
		return FTRLCase{}, fmt.Errorf("unsolved_set_after_f1: %w", err)
	}
	if c.SolveRate, err = number("solve_rate", get("solve_rate")); err != nil {
		return FTRLCase{}, err
	}
	switch a := get("answer"); a.Kind {
	case pyvalue.None:
	case pyvalue.Str:
		s := a.Str
		c.Answer = &s
	default:
		return FTRLCase{}, fmt.Errorf("answer: want a string or null, got %s", a.Kind)
	}
	sc := get("scores")
	if sc.Kind != pyvalue.Dict {
		return FTRLCase{}, fmt.Errorf("scores: want an object, got %s", sc.Kind)
	}
	for _, f := range []struct {
		k string
		p *float64
	}{{"solve_f1", &c.Scores.F1}, {"solve_pr", &c.Scores.PR}, {"solve_rate", &c.Scores.Rate}, {"solve_precision", &c.Scores.Precision}} {
		x, ok := sc.Get(f.k)
		if !ok {
			return FTRLCase{}, fmt.Errorf("scores: missing key %q", f.k)
		}
		if *f.p, err = number("scores."+f.k, x); err != nil {
			return FTRLCase{}, err
		}
	}
	return c, nil
}

func number(k string, x pyvalue.Value) (float64, error) {
	switch x.Kind {
	case pyvalue.Float:
		return x.Float, nil
	case pyvalue.Int:
		f, err := parseIntFloat(x.Int)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", k, err)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%s: want a number, got %s", k, x.Kind)
}

func parseIntFloat(s string) (float64, error) {
	if len(s) > 20 {
		return 0, fmt.Errorf("int %s... too large", s[:20])
	}
	var f float64
	neg := false
	for i, c := range []byte(s) {
		if i == 0 && c == '-' {
			neg = true
			continue
		}
		f = f*10 + float64(c-'0')
	}
	if neg {
		f = -f
	}
	return f, nil
}

// ftrlExecLocals are call_function's local names; a tool named like one
// of them is shadowed by it (utils.py:call_function does exec(code) then
// eval(name), and locals() re-syncs the real locals over the definition).
var ftrlExecLocals = map[string]string{
	"code":      "'str' object is not callable",
	"name":      "'str' object is not callable",
	"arguments": "'dict' object is not callable",
	"kwargs":    "'dict' object is not callable",
	"predict":   "name 'predict' is not defined",
}

// ErrFTRLNotReproducible marks a call whose FTRL output depends on text the
// case format does not carry (the exec'd source of a tool named "code"
// called with non-object arguments).
var ErrFTRLNotReproducible = errors.New("FTRL's output for this call is not reproducible from the case")

// Call returns the text FTRL's get_feedback gives for one call against the
// case's tools (README rules 1-5): a name that is not a string or not a
// tool -> KeyError; a name shadowed by call_function's locals; arguments
// that are not an object -> "utils.utils.NAME() argument after ** must be
// a mapping, not TYPE"; a raising tool -> its message; a returning tool ->
// FTRLRenderResult.
func (c *FTRLCase) Call(call FTRLCall) (string, error) {
	name := call.Name
	var tool *FTRLCaseTool
	if name.Kind == pyvalue.Str {
		for i := range c.Tools {
			if c.Tools[i].Name == name.Str {
				tool = &c.Tools[i]
				break
			}
		}
	}
	if tool == nil {
		if !name.Hashable() {
			return FTRLErrorFeedback(name, "unhashable type: '"+name.Kind.String()+"'"), nil
		}
		return FTRLErrorFeedback(name, pyvalue.Repr(name)), nil // str(KeyError(name))
	}
	if msg, ok := ftrlExecLocals[name.Str]; ok {
		if call.Args.Kind != pyvalue.Dict {
			switch name.Str {
			case "predict":
			case "arguments":
				return FTRLErrorFeedback(name, pyvalue.ToStr(call.Args)+" argument after ** must be a mapping, not "+call.Args.Kind.String()), nil
			case "kwargs":
				return FTRLErrorFeedback(name, "{} argument after ** must be a mapping, not "+call.Args.Kind.String()), nil
			case "name":
				return FTRLErrorFeedback(name, "name argument after ** must be a mapping, not "+call.Args.Kind.String()), nil
			default:
				return "", ErrFTRLNotReproducible
			}
		}
		return FTRLErrorFeedback(name, msg), nil
	}
	if call.Args.Kind != pyvalue.Dict {
		return FTRLErrorFeedback(name, "utils.utils."+name.Str+"() argument after ** must be a mapping, not "+call.Args.Kind.String()), nil
	}
	if tool.Raises != nil {
		return FTRLErrorFeedback(name, *tool.Raises), nil
	}
	return FTRLRenderResult(*tool.Returns), nil
}

// Run is FTRLStep.Run over the case's tools (Call for each call).
func (c *FTRLCase) Run(_ context.Context, calls []FTRLCall) ([]string, error) {
	out := make([]string, len(calls))
	for i, call := range calls {
		s, err := c.Call(call)
		if err != nil {
			return nil, fmt.Errorf("call %d (%s): %w", i, call.NameString(), err)
		}
		out[i] = s
	}
	return out, nil
}

// FTRLCaseCheck is the outcome of scoring one case.
type FTRLCaseCheck struct {
	Pass bool
	// Diffs lists each disagreement with the recorded values, e.g.
	// "solve_f1 = 0.5, want 0.6666666666666666".
	Diffs  []string
	Result FTRLResult
	// Rendered holds weft's rendering of each call the case's feedback
	// records (FTRLCase.Call), and RenderDiffs the calls where it differs
	// from the recorded text; both only in FTRLCompatible.
	Rendered    []string
	RenderDiffs []string
}

// CheckFTRLCase scores c in mode m and compares the four scores (exactly,
// as float64 bits) and unsolved_set after the turn with the recorded ones.
// FTRLCompatible replays the recorded feedback (the i-th parsed call's
// output is Feedback[i]) and also renders every call from the case's tools
// to compare with it; FTRLDefault, whose parser can find other calls, runs
// them against the case's tools. An error means the case could not be
// scored at all (the feedback count differs from the parsed calls, an
// unhashable name).
func CheckFTRLCase(ctx context.Context, c *FTRLCase, m FTRLMode) (FTRLCaseCheck, error) {
	step := FTRLStep{Response: c.Response, Unsolved: c.UnsolvedBefore, SolveRate: c.SolveRate, Answer: c.Answer}
	if m == FTRLCompatible {
		step.Feedback = c.Feedback // replayed, as the README asks
	} else {
		step.Run = c.Run
	}
	r, err := FTRLScore(ctx, step, m)
	if err != nil {
		return FTRLCaseCheck{}, err
	}
	ck := FTRLCaseCheck{Result: r}
	for _, f := range []struct {
		k         string
		got, want float64
	}{{"solve_f1", r.Scores.F1, c.Scores.F1}, {"solve_pr", r.Scores.PR, c.Scores.PR}, {"solve_rate", r.Scores.Rate, c.Scores.Rate}, {"solve_precision", r.Scores.Precision, c.Scores.Precision}} {
		if math.Float64bits(f.got) != math.Float64bits(f.want) {
			ck.Diffs = append(ck.Diffs, fmt.Sprintf("%s = %s, want %s", f.k, pyvalue.FloatRepr(f.got), pyvalue.FloatRepr(f.want)))
		}
	}
	if !r.Unsolved.Equal(c.UnsolvedAfter) {
		got, _ := r.Unsolved.MarshalJSON()
		want, _ := c.UnsolvedAfter.MarshalJSON()
		ck.Diffs = append(ck.Diffs, fmt.Sprintf("unsolved_set after = %s, want %s", got, want))
	}
	if m == FTRLCompatible {
		for i, call := range r.Calls {
			s, err := c.Call(call)
			if err != nil {
				s = "<" + err.Error() + ">"
			}
			ck.Rendered = append(ck.Rendered, s)
			if s != c.Feedback[i] {
				ck.RenderDiffs = append(ck.RenderDiffs, fmt.Sprintf("feedback[%d] of %s: weft renders %q, FTRL gave %q", i, call.NameString(), s, c.Feedback[i]))
			}
		}
	}
	ck.Pass = len(ck.Diffs) == 0
	return ck, nil
}

// MaxFTRLCaseLine bounds one case line (bytes).
const MaxFTRLCaseLine = 16 << 20

// ReadFTRLCases reads a case file line by line and calls fn for each
// non-empty line with its 1-based number and the decoded case, or the
// decoding error (a line longer than MaxFTRLCaseLine is such an error, and
// reading goes on after it). It stops at the first error fn or the reader
// returns.
func ReadFTRLCases(r io.Reader, fn func(line int, c *FTRLCase, err error) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, MaxFTRLCaseLine)
		if err == io.EOF && len(line) == 0 && !tooLong {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("line %d: %w", n, err)
		}
		last := err == io.EOF
		switch {
		case tooLong:
			if e := fn(n, nil, fmt.Errorf("line longer than %d bytes", MaxFTRLCaseLine)); e != nil {
				return e
			}
		case len(line) == 0:
		default:
			c, derr := DecodeFTRLCase(line)
			var cp *FTRLCase
			if derr == nil {
				cp = &c
			}
			if e := fn(n, cp, derr); e != nil {
				return e
			}
		}
		if last {
			return nil
		}
	}
}

// readLine returns the next line without its "\n" (and a "\r" before it).
// A line over max bytes is consumed and reported as tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, e := br.ReadSlice('\n')
		if len(line)+len(frag) > max+2 {
			tooLong = true
			line = line[:0]
		} else if !tooLong {
			line = append(line, frag...)
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		if e != nil && e != io.EOF {
			return nil, false, e
		}
		if n := len(line); n > 0 && line[n-1] == '\n' {
			line = line[:n-1]
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
		}
		return line, tooLong, e
	}
}
