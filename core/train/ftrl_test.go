package train

import "testing"

func TestFTRLRewardToolCalls(t *testing.T) {
	tests := []struct {
		calls, solved int
		v             Variant
		want          float64
	}{
		// 2q/(p+1)
		{3, 2, SolveF1, 1},   // 4/4
		{1, 1, SolveF1, 1},   // 2/2
		{4, 1, SolveF1, 0.4}, // 2/5
		{2, 0, SolveF1, 0},   // 0/3
		{1, 0, SolveF1, 0},   // 0/2
		// q²/p
		{4, 2, SolveP, 1},    // 4/4
		{2, 3, SolveP, 4.5},  // 9/2
		{4, 1, SolveP, 0.25}, // 1/4
		{3, 0, SolveP, 0},    // 0/3
		// q
		{5, 2, SolveR, 2},
		{1, 0, SolveR, 0},
		// q/p
		{4, 1, SolvePrecision, 0.25},
		{2, 2, SolvePrecision, 1},
		{3, 0, SolvePrecision, 0},
	}
	for _, tt := range tests {
		// content, correctness and history do not matter once calls were made
		o := TurnOutcome{Calls: tt.calls, NewlySolved: tt.solved, Unsolved: 7, AllSolvedBefore: true, Content: "<tool_call>", Correct: true}
		if got := FTRLReward(o, tt.v); got != tt.want {
			t.Errorf("%v p=%d q=%d: got %g, want %g", tt.v, tt.calls, tt.solved, got, tt.want)
		}
	}
}

func TestFTRLRewardText(t *testing.T) {
	tests := []struct {
		name string
		o    TurnOutcome
		want float64
	}{
		{"empty", TurnOutcome{Content: "", Correct: true, AllSolvedBefore: true}, -0.5},
		{"white space", TurnOutcome{Content: " \n\t", Correct: true}, -0.5},
		{"negative calls is no call", TurnOutcome{Calls: -1, Content: ""}, -0.5},
		{"leak open tag", TurnOutcome{Content: "sure <tool_call>{...}", Correct: true, AllSolvedBefore: true}, -0.3},
		{"leak close tag", TurnOutcome{Content: "x</tool_call>"}, -0.3},
		{"leak response tag", TurnOutcome{Content: "<tool_parsed_response>"}, -0.3},
		{"correct, 0 unsolved", TurnOutcome{Content: "It is 42.", Correct: true}, 1},
		{"correct, 1 unsolved", TurnOutcome{Content: "It is 42.", Correct: true, Unsolved: 1}, 0.5},
		{"correct, 3 unsolved", TurnOutcome{Content: "It is 42.", Correct: true, Unsolved: 3}, 0.25},
		{"correct beats all-solved", TurnOutcome{Content: "42", Correct: true, AllSolvedBefore: true}, 1},
		{"all solved, wrong answer", TurnOutcome{Content: "done"}, 0},
		{"all solved, not correct", TurnOutcome{Content: "done", AllSolvedBefore: true}, 0.5},
		{"otherwise", TurnOutcome{Content: "I don't know", Unsolved: 2}, 0},
	}
	for _, tt := range tests {
		for _, v := range []Variant{SolveF1, SolveP, SolveR, SolvePrecision} {
			if got := FTRLReward(tt.o, v); got != tt.want {
				t.Errorf("%s %v: got %g, want %g", tt.name, v, got, tt.want)
			}
		}
	}
}

func TestFTRLRewardUnknownVariantPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic")
		}
	}()
	FTRLReward(TurnOutcome{Calls: 1}, Variant(9))
}

func TestAnswerMatches(t *testing.T) {
	tests := []struct {
		content, answer string
		want            bool
	}{
		{"The population is 1,234,567.", "1234567", true},
		{"the answer is PARIS", "Paris", true},
		{"answer: 12", " 12 ", true},
		{"answer: 1 2", "12", false},
		{"no", "yes", false},
		{"anything", ",", true}, // normalises to "", as in the reference
	}
	for _, tt := range tests {
		if got := AnswerMatches(tt.content, tt.answer); got != tt.want {
			t.Errorf("AnswerMatches(%q, %q) = %v, want %v", tt.content, tt.answer, got, tt.want)
		}
	}
}

func TestVariantString(t *testing.T) {
	for v, want := range map[Variant]string{SolveF1: "solve-F1", SolveP: "solve-P", SolveR: "solve-R", SolvePrecision: "solve-precision", 7: "Variant(7)"} {
		if got := v.String(); got != want {
			t.Errorf("%d: %q, want %q", int(v), got, want)
		}
	}
}
