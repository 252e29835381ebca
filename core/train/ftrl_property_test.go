package train

import (
	"context"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

var (
	propTools   = []string{"get_weather", "find_book", "查询天气", "code", "Σ"}
	propAnswers = []string{"25", "unit, c", "Paris", "paris, france", "", " ", ",", "ΟΔΟΣ", "İstanbul", "a,b", "x, ", "东京", "null"}
	propOutputs = []string{"25 C unit", `{"temperature": 25, "unit": "C"}`, "Paris, France", "an error occured when call x: 'x'",
		"", "ΟΔΟΣ İstanbul", "ab", "null", "东京", "x"}
	propBlocks = []string{
		`<tool_call>{"name": %q, "arguments": {}}</tool_call>`,
		`<tool_call>tool_call>{"name": %q, "arguments": {"a": NaN}}</tool_call>`,
		"<tool_call>\n{\"name\": %q, \"arguments\": \"{}\"}\n",
		`<tool_call>{"name": 123, "arguments": {}}</tool_call>`,
		`<tool_call>{"name": %q, "arguments": {},}</tool_call>`,
		"Now: ", "<|im_end|>", "<|endoftext|>", " \x1c ", "The answer is Paris, France.", "</tool_call>",
	}
)

// genResponse builds a response from blocks that hit the parser's quirks.
func genResponse(t *rapid.T) string {
	n := rapid.IntRange(0, 6).Draw(t, "blocks")
	var b strings.Builder
	for i := 0; i < n; i++ {
		blk := rapid.SampledFrom(propBlocks).Draw(t, "block")
		if strings.Contains(blk, "%q") {
			name := rapid.SampledFrom(append(propTools, "unknown")).Draw(t, "name")
			blk = strings.Replace(blk, "%q", `"`+name+`"`, 1)
		}
		b.WriteString(blk)
	}
	return b.String()
}

// TestFTRLUnsolvedOnlyShrinksProperty runs random episodes (random
// unsolved_set, answers, responses and tool outputs) in both modes and
// checks after every step: each tool's answer list is the previous one
// with exactly the solved answers removed (so the set only shrinks),
// Count drops by len(Solved), solve_rate never falls, and the tool-call
// scores are 2q/(p+1), q²/p, q, q/p.
func TestFTRLUnsolvedOnlyShrinksProperty(t *testing.T) {
	var solved, withCalls, noCalls int
	rapid.Check(t, func(t *rapid.T) {
		var start UnsolvedSet
		for _, tool := range propTools {
			if rapid.Bool().Draw(t, "has_"+tool) {
				start = append(start, UnsolvedTool{Tool: tool, Answers: rapid.SliceOfN(rapid.SampledFrom(propAnswers), 1, 4).Draw(t, "answers")})
			}
		}
		if start.Count() == 0 {
			start = UnsolvedSet{{Tool: "get_weather", Answers: []string{"25"}}}
		}
		m := rapid.SampledFrom([]FTRLMode{FTRLCompatible, FTRLDefault}).Draw(t, "mode")
		ep, err := NewFTRLEpisode(start, nil, m)
		if err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 5 && !ep.Done(); step++ {
			before, rate := ep.Unsolved(), ep.SolveRate()
			resp := genResponse(t)
			calls := ParseFTRLResponse(resp, m).Calls
			outputs := make([]string, len(calls))
			for i := range outputs {
				outputs[i] = rapid.SampledFrom(propOutputs).Draw(t, "output")
			}
			r, err := ep.Step(context.Background(), resp, outputs)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			after := ep.Unsolved()
			if len(after) != len(before) {
				t.Fatalf("tools changed: %v -> %v", before, after)
			}
			solved += len(r.Solved)
			if len(calls) == 0 {
				noCalls++
				if !after.Equal(before) {
					t.Fatalf("a turn without calls changed the set: %v -> %v", before, after)
				}
				continue
			}
			withCalls++
			removed := map[string][]string{}
			for _, s := range r.Solved {
				removed[s.Tool] = append(removed[s.Tool], s.Answer)
			}
			for i, tb := range before {
				ta := after[i]
				if ta.Tool != tb.Tool || !isSubsequenceMinus(tb.Answers, ta.Answers, removed[tb.Tool]) {
					t.Fatalf("%s: %q -> %q, removed %q", tb.Tool, tb.Answers, ta.Answers, removed[tb.Tool])
				}
			}
			if after.Count() != before.Count()-len(r.Solved) {
				t.Fatalf("count %d -> %d with %d solved", before.Count(), after.Count(), len(r.Solved))
			}
			if ep.SolveRate() < rate {
				t.Fatalf("solve_rate fell: %v -> %v", rate, ep.SolveRate())
			}
			p, q := float64(len(calls)), float64(len(r.Solved))
			if want := (FTRLScores{F1: 2 * q / (p + 1), PR: q * q / p, Rate: q, Precision: q / p}); r.Scores != want {
				t.Fatalf("scores %+v, want %+v", r.Scores, want)
			}
		}
	})
	// The generator must reach both kinds of turn and real solves.
	if solved == 0 || withCalls == 0 || noCalls == 0 {
		t.Errorf("weak generator: %d solved over %d turns with calls, %d without", solved, withCalls, noCalls)
	}
	t.Logf("%d answers solved over %d turns with calls, %d turns without", solved, withCalls, noCalls)
}

// isSubsequenceMinus reports whether after is before with exactly the
// answers in removed taken out (each once, first occurrence first).
func isSubsequenceMinus(before, after, removed []string) bool {
	rest := append([]string(nil), before...)
	for _, a := range removed {
		found := false
		for i, b := range rest {
			if b == a {
				rest = append(rest[:i], rest[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if len(rest) != len(after) {
		return false
	}
	for i := range rest {
		if rest[i] != after[i] {
			return false
		}
	}
	return true
}
