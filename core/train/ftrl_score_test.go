package train

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func strp(s string) *string { return &s }

func callNames(p FTRLParsed) []string {
	out := []string{}
	for _, c := range p.Calls {
		out = append(out, c.NameString()+" "+c.Arguments)
	}
	return out
}

func TestParseFTRLResponse(t *testing.T) {
	falsy := `<tool_call>{"name": "", "arguments": {}}</tool_call><tool_call>{"name": 0, "arguments": {}}</tool_call><tool_call>{"name": "f"}</tool_call><tool_call>{"name": "g", "arguments": null}</tool_call>`
	for _, tt := range []struct {
		name, in            string
		compat, def         []string // "name arguments" per call
		compatCont, defCont string   // Content
	}{
		{"plain text", " Paris. <|im_end|>", []string{}, []string{}, "Paris.", "Paris."},
		{"one call, text before", "ok <tool_call>\n{\"name\": \"f\", \"arguments\": {\"b\": 1, \"a\": \"東\"}}\n</tool_call><|im_end|>",
			[]string{`f {"b": 1, "a": "東"}`}, []string{`f {"b": 1, "a": "東"}`}, "ok", "ok"},
		{"lstrip set", `<tool_call>tool_call>{"name": "f", "arguments": {}}</tool_call>`,
			[]string{"f {}"}, []string{}, "", `<tool_call>tool_call>{"name": "f", "arguments": {}}</tool_call>`},
		{"prefix junk dropped in both", `<tool_call>json{"name": "f", "arguments": {}}</tool_call>`,
			[]string{}, []string{}, `<tool_call>json{"name": "f", "arguments": {}}</tool_call>`, `<tool_call>json{"name": "f", "arguments": {}}</tool_call>`},
		{"suffix tokens in the other order", `<tool_call>{"name": "f", "arguments": {}}<|im_end|><|endoftext|>`,
			[]string{"f {}"}, []string{"f {}"}, "", ""},
		{"suffix tokens twice", `<tool_call>{"name": "f", "arguments": {}}<|endoftext|><|im_end|>`,
			[]string{}, []string{"f {}"}, `<tool_call>{"name": "f", "arguments": {}}<|endoftext|>`, ""},
		{"only tokens", "<|endoftext|><|im_end|>", []string{}, []string{}, "<|endoftext|>", ""},
		{"NaN arguments", `<tool_call>{"name": "f", "arguments": {"x": NaN, "y": 1e400}}</tool_call>`,
			[]string{`f {"x": NaN, "y": Infinity}`}, []string{}, "", `<tool_call>{"name": "f", "arguments": {"x": NaN, "y": 1e400}}</tool_call>`},
		{"number name", `<tool_call>{"name": 123, "arguments": {}}</tool_call>`,
			[]string{"123 {}"}, []string{}, "", `<tool_call>{"name": 123, "arguments": {}}</tool_call>`},
		{"falsy names and missing arguments", falsy,
			[]string{}, []string{}, falsy, falsy},
		{"arguments as JSON string", `<tool_call>{"name": "f", "arguments": "{\"a\": 1}"}</tool_call><tool_call>{"name": "g", "arguments": "[1, 2]"}</tool_call><tool_call>{"name": "h", "arguments": "nope"}</tool_call>`,
			[]string{`f {"a": 1}`, "g [1, 2]"}, []string{`f {"a": 1}`, "g [1, 2]"}, "", ""},
		{"text between blocks drops the next", `<tool_call>{"name": "f", "arguments": {}}</tool_call> Now: <tool_call>{"name": "g", "arguments": {}}</tool_call>`,
			[]string{"f {}"}, []string{"f {}"}, "", ""},
		{"unclosed last block parsed", "<tool_call>{\"name\": \"f\", \"arguments\": {}}\n", []string{"f {}"}, []string{"f {}"}, "", ""},
		{"duplicate keys, last wins", `<tool_call>{"name": "a", "arguments": {}, "name": "b"}</tool_call>`, []string{"b {}"}, []string{"b {}"}, "", ""},
		{"U+001C..U+001F only", "\x1c\x1d \x1e\x1f<|im_end|>", []string{}, []string{}, "", "\x1c\x1d \x1e\x1f"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := ParseFTRLResponse(tt.in, FTRLCompatible)
			d := ParseFTRLResponse(tt.in, FTRLDefault)
			if diff := cmp.Diff(tt.compat, callNames(c)); diff != "" {
				t.Errorf("compatible calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.def, callNames(d)); diff != "" {
				t.Errorf("default calls (-want +got):\n%s", diff)
			}
			if c.Content != tt.compatCont || d.Content != tt.defCont {
				t.Errorf("content = %q / %q, want %q / %q", c.Content, d.Content, tt.compatCont, tt.defCont)
			}
		})
	}
}

func TestFTRLScoreBranches(t *testing.T) {
	unsolved := UnsolvedSet{{Tool: "get_weather", Answers: []string{"25", "unit, c", "25"}}, {Tool: "find", Answers: []string{"Paris"}}}
	call := func(name string) string {
		return `<tool_call>{"name": "` + name + `", "arguments": {}}</tool_call>`
	}
	for _, tt := range []struct {
		name      string
		resp      string
		feedback  []string
		rate      float64
		answer    *string
		want      FTRLScores
		branch    FTRLBranch
		remaining int
	}{
		{"empty", " \n", nil, 1, strp("x"), FTRLScores{-0.5, -0.5, -0.5, -0.5}, BranchEmpty, 4},
		{"leak open", "sure <tool_call>{bad}</tool_call>", nil, 1, strp(""), FTRLScores{-0.3, -0.3, -0.3, -0.3}, BranchLeak, 4},
		{"leak close only", "done </tool_call>", nil, 0, nil, FTRLScores{-0.3, -0.3, -0.3, -0.3}, BranchLeak, 4},
		{"leak parsed response", "<tool_parsed_response> 25", nil, 0, nil, FTRLScores{-0.3, -0.3, -0.3, -0.3}, BranchLeak, 4},
		{"answer, 4 unsolved", "It is PARIS, France.", nil, 1, strp("paris france"), FTRLScores{0.2, 0.2, 0.2, 0.2}, BranchAnswer, 4},
		{"answer not split on ', '", "France, Paris", nil, 0, strp("Paris, France"), FTRLScores{}, BranchOther, 4},
		{"solved already", "bye", nil, 1, strp("Rome"), FTRLScores{0.5, 0.5, 0.5, 0.5}, BranchSolvedAlready, 4},
		{"one ulp below 1", "bye", nil, 0.9999999999999999, strp("Rome"), FTRLScores{}, BranchOther, 4},
		{"none answer", "bye", nil, 0, nil, FTRLScores{}, BranchOther, 4},
		{"2 of 3 calls", call("get_weather") + call("get_weather") + call("find"),
			[]string{`{"temperature": 25, "unit": "C"}`, `{"temperature": 25, "unit": "C"}`, "Lyon"}, 0, nil,
			FTRLScores{F1: 2 * 2.0 / 4, PR: 4.0 / 3, Rate: 2, Precision: 2.0 / 3}, BranchCalls, 2},
		{"cross-tool output not counted", call("find"), []string{"25"}, 0, nil, FTRLScores{}, BranchCalls, 4},
		{"unknown tool", call("nope"), []string{"Paris"}, 0, nil, FTRLScores{}, BranchCalls, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := unsolved.Clone()
			r, err := FTRLScore(context.Background(), FTRLStep{Response: tt.resp, Unsolved: in, SolveRate: tt.rate, Answer: tt.answer, Feedback: tt.feedback}, FTRLCompatible)
			if err != nil {
				t.Fatal(err)
			}
			if r.Scores != tt.want || r.Branch != tt.branch || r.Unsolved.Count() != tt.remaining {
				t.Errorf("got %+v %s %d, want %+v %s %d", r.Scores, r.Branch, r.Unsolved.Count(), tt.want, tt.branch, tt.remaining)
			}
			if !in.Equal(unsolved) {
				t.Errorf("FTRLScore mutated its input: %v", in)
			}
		})
	}
	// The solved answers, in call order, and the set after.
	r, err := FTRLScore(context.Background(), FTRLStep{Response: call("get_weather") + call("get_weather") + call("get_weather") + call("get_weather"), Unsolved: unsolved,
		Feedback: []string{"unit: C, 25", "25", "25", "25"}}, FTRLCompatible)
	if err != nil {
		t.Fatal(err)
	}
	wantSolved := []FTRLSolved{{0, "get_weather", "25"}, {1, "get_weather", "25"}}
	if diff := cmp.Diff(wantSolved, r.Solved); diff != "" {
		t.Errorf("solved (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(UnsolvedSet{{Tool: "get_weather", Answers: []string{"unit, c"}}, {Tool: "find", Answers: []string{"Paris"}}}, r.Unsolved); diff != "" {
		t.Errorf("unsolved after (-want +got):\n%s", diff)
	}
	if r.Scores != (FTRLScores{F1: 0.8, PR: 1, Rate: 2, Precision: 0.5}) {
		t.Errorf("scores %+v", r.Scores)
	}
}

func TestFTRLScoreErrors(t *testing.T) {
	unsolved := UnsolvedSet{{Tool: "f", Answers: []string{"x"}}}
	ctx := context.Background()
	two := `<tool_call>{"name": "f", "arguments": {}}</tool_call><tool_call>{"name": "f", "arguments": {}}</tool_call>`
	if _, err := FTRLScore(ctx, FTRLStep{Response: two, Unsolved: unsolved, Feedback: []string{"x"}}, FTRLCompatible); err == nil || err.Error() != "1 tool outputs for 2 parsed tool calls" {
		t.Errorf("short feedback: %v", err)
	}
	boom := errors.New("boom")
	_, err := FTRLScore(ctx, FTRLStep{Response: two, Unsolved: unsolved, Run: func(context.Context, []FTRLCall) ([]string, error) { return nil, boom }}, FTRLDefault)
	if !errors.Is(err, boom) || err.Error() != "running the turn's 2 tool calls: boom" {
		t.Errorf("run error: %v", err)
	}
	_, err = FTRLScore(ctx, FTRLStep{Response: `<tool_call>{"name": [1], "arguments": {}}</tool_call>`, Unsolved: unsolved, Feedback: []string{"x"}}, FTRLCompatible)
	if !errors.Is(err, ErrFTRLUnhashableName) {
		t.Errorf("unhashable name: %v", err)
	}
	if _, err := FTRLScore(ctx, FTRLStep{Response: "x"}, FTRLMode(7)); err == nil || err.Error() != "train.FTRLScore: unknown FTRLMode(7)" {
		t.Errorf("bad mode: %v", err)
	}
	if !unsolved.Equal(UnsolvedSet{{Tool: "f", Answers: []string{"x"}}}) {
		t.Errorf("input changed: %v", unsolved)
	}
	if _, err := ParseFTRLMode("strict"); err == nil || err.Error() != `unknown FTRL mode "strict": use compatible or default` {
		t.Errorf("ParseFTRLMode: %v", err)
	}
}

func TestFTRLAnswerVerify(t *testing.T) {
	for _, tt := range []struct {
		out, gold string
		compat    bool
		def       bool
	}{
		{"Temperature: 25 C", "25, c", true, true},
		{"a b", "a,b", false, false}, // one piece "ab"
		{"anything", "x, ", false, false},
		{"x", "x, ", true, true}, // trailing empty piece matches
		{"anything", ",", true, true},
		{"İstanbul", "istanbul", false, true},
		{"İstanbul", "i̇stanbul", true, false},
		{"ΟΔΟΣ", "Σ", false, true},
		{"Straße", "STRASSE", false, false},
		{`{"city": "東京"}`, "東京", true, true},
		{`{"city": "東京"}`, `\u6771`, false, false},
	} {
		if got := FTRLAnswerVerify(tt.out, tt.gold, FTRLCompatible); got != tt.compat {
			t.Errorf("compatible answer_verify(%q, %q) = %v", tt.out, tt.gold, got)
		}
		if got := FTRLAnswerVerify(tt.out, tt.gold, FTRLDefault); got != tt.def {
			t.Errorf("default answer_verify(%q, %q) = %v", tt.out, tt.gold, got)
		}
	}
}

func TestUnsolvedSetJSON(t *testing.T) {
	var u UnsolvedSet
	in := `{"z": ["東京", "a, b"], "a": []}`
	if err := u.UnmarshalJSON([]byte(in)); err != nil {
		t.Fatal(err)
	}
	out, _ := u.MarshalJSON()
	if string(out) != in {
		t.Errorf("round trip %s, want %s", out, in)
	}
	for _, tt := range []struct{ in, want string }{
		{`{"a": [], "a": []}`, `unsolved_set: duplicate key "a" at offset 10`},
		{`{"a": [1]}`, `unsolved_set["a"][0]: want a string, got int`},
		{`{"a": "x"}`, `unsolved_set["a"]: want a list of strings, got str`},
		{`[]`, `unsolved_set: want an object of string lists, got list`},
	} {
		var u UnsolvedSet
		if err := u.UnmarshalJSON([]byte(tt.in)); err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %s", tt.in, err, tt.want)
		}
		if u != nil {
			t.Errorf("%s: set changed to %v", tt.in, u)
		}
	}
}

func TestFTRLEpisode(t *testing.T) {
	ctx := context.Background()
	_, err := NewFTRLEpisode(UnsolvedSet{{Tool: "f"}}, nil, FTRLCompatible)
	if !errors.Is(err, errEmptyUnsolved) {
		t.Errorf("empty set: %v", err)
	}
	_, err = NewFTRLEpisode(UnsolvedSet{{Tool: "f", Answers: []string{"1"}}, {Tool: "f"}}, nil, FTRLCompatible)
	if err == nil || err.Error() != `unsolved_set: tool "f" appears twice` {
		t.Errorf("repeated tool: %v", err)
	}
	start := UnsolvedSet{{Tool: "user", Answers: []string{"u7"}}, {Tool: "order", Answers: []string{"o3", "42.5"}}}
	ep, err := NewFTRLEpisode(start, strp("42.5"), FTRLCompatible)
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string) string { return `<tool_call>{"name": "` + name + `", "arguments": {}}</tool_call>` }
	two, three := 2.0, 3.0 // variables: FTRL's 1 - 2/3 is rounded twice, a Go constant is not
	steps := []struct {
		resp    string
		outputs []string
		f1      float64
		rate    float64 // solve_rate after
		left    int
	}{
		{call("user"), []string{`{"id": "u7"}`}, 1, 1 - two/three, 2},
		{call("order") + call("user"), []string{`{"order": "o3", "total": 42.5}`, "u7"}, 2.0 / 3, 1 - 1/three, 1},
		{call("order"), []string{`{"order": "o3", "total": 42.5}`}, 1, 1, 0},
		{"The total is 42.5.", nil, 1, 1, 0},
	}
	for i, s := range steps {
		r, err := ep.Step(ctx, s.resp, s.outputs)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if r.Scores.F1 != s.f1 || ep.SolveRate() != s.rate || ep.Unsolved().Count() != s.left {
			t.Errorf("step %d: f1 %v rate %v left %d, want %v %v %d", i, r.Scores.F1, ep.SolveRate(), ep.Unsolved().Count(), s.f1, s.rate, s.left)
		}
	}
	if !ep.Done() || ep.Steps() != 4 {
		t.Errorf("done %v steps %d", ep.Done(), ep.Steps())
	}
	if _, err := ep.Step(ctx, "again", nil); !errors.Is(err, ErrFTRLEpisodeDone) {
		t.Errorf("after done: %v", err)
	}
	// A failing step changes nothing.
	ep, _ = NewFTRLEpisode(start, nil, FTRLCompatible)
	if _, err := ep.Step(ctx, call("user"), nil); err == nil || !strings.Contains(err.Error(), "FTRL step 0: 0 tool outputs for 1 parsed tool calls") {
		t.Errorf("bad step: %v", err)
	}
	if !ep.Unsolved().Equal(start) || ep.SolveRate() != 0 || ep.Steps() != 0 || ep.Done() {
		t.Errorf("state after a failed step: %v %v %d", ep.Unsolved(), ep.SolveRate(), ep.Steps())
	}
	if !start.Equal(UnsolvedSet{{Tool: "user", Answers: []string{"u7"}}, {Tool: "order", Answers: []string{"o3", "42.5"}}}) {
		t.Errorf("caller's set mutated: %v", start)
	}
}
