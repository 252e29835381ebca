package train

import (
	"context"
	"math"
	"testing"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// FuzzDecodeFTRLCase feeds arbitrary lines to the case decoder and checks
// scoring a decoded case never panics and its result is consistent.
// Seed corpus: testdata/fuzz/FuzzDecodeFTRLCase.
func FuzzDecodeFTRLCase(f *testing.F) {
	f.Add([]byte(`{"id": "x", "response": "hi", "tools": {}, "feedback": [], "unsolved_set_before": {"f": ["1"]}, "solve_rate": 0.0, "answer": null, "scores": {"solve_f1": 0.0, "solve_pr": 0.0, "solve_rate": 0.0, "solve_precision": 0.0}, "unsolved_set_after_f1": {"f": ["1"]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		c, err := DecodeFTRLCase(line)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, m := range []FTRLMode{FTRLCompatible, FTRLDefault} {
			ck, err := CheckFTRLCase(context.Background(), &c, m)
			if err != nil {
				continue
			}
			r := ck.Result
			if r.Unsolved.Count() != c.UnsolvedBefore.Count()-len(r.Solved) {
				t.Fatalf("%v: count %d -> %d with %d solved", m, c.UnsolvedBefore.Count(), r.Unsolved.Count(), len(r.Solved))
			}
			if ck.Pass != (len(ck.Diffs) == 0) {
				t.Fatalf("pass %v with diffs %v", ck.Pass, ck.Diffs)
			}
		}
	})
}

// FuzzParseFTRLResponse checks the parser on arbitrary responses: no
// panic, every compatible call has a truthy name and arguments that
// json.loads back to the same text, every default call a string name.
// Seed corpus: testdata/fuzz/FuzzParseFTRLResponse.
func FuzzParseFTRLResponse(f *testing.F) {
	f.Add(`<tool_call>{"name": "f", "arguments": {}}</tool_call><|im_end|>`)
	f.Fuzz(func(t *testing.T, resp string) {
		for _, m := range []FTRLMode{FTRLCompatible, FTRLDefault} {
			p := ParseFTRLResponse(resp, m)
			for _, c := range p.Calls {
				if !c.Name.Truthy() || (m == FTRLDefault && c.Name.Kind != pyvalue.Str) {
					t.Fatalf("%v: bad name %#v", m, c.Name)
				}
				v, err := pyvalue.JSONLoads(c.Arguments)
				if err != nil || pyvalue.JSONDumps(v) != c.Arguments {
					t.Fatalf("%v: arguments %q do not round-trip: %v", m, c.Arguments, err)
				}
			}
			out := make([]string, len(p.Calls))
			for i := range out {
				out[i] = resp
			}
			r, err := FTRLScore(context.Background(), FTRLStep{Response: resp, Unsolved: UnsolvedSet{{Tool: "f", Answers: []string{"a", ""}}}, Feedback: out}, m)
			if err != nil {
				continue // unhashable names
			}
			if math.IsNaN(r.Scores.F1) || r.Scores.F1 < -0.5 || r.Scores.F1 > 2 {
				t.Fatalf("%v: F1 %v out of range", m, r.Scores.F1)
			}
		}
	})
}
