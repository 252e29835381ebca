package train

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model"
)

func turnWith(content string, reward float64, calls ...[2]string) *TurnResult {
	tr := &TurnResult{Atomic: "a1", Reward: reward, Segment: Segment{Content: content}}
	for i, c := range calls {
		tr.Segment.Calls = append(tr.Segment.Calls, Call{Tool: c[0], Arguments: json.RawMessage(`{"id": 1}`)})
		tr.Completion = append(tr.Completion,
			model.Message{Role: "assistant", ToolCalls: []model.ToolCall{{ID: string(rune('a' + i)), Function: model.FunctionCall{Name: c[0], Arguments: `{"id": 1}`}}}},
			model.Message{Role: "tool", ToolCallID: string(rune('a' + i)), Content: c[1]})
	}
	return tr
}

// TestFTRLTurnScoresAtomic: without FTRL state the atomic task is the only
// sub-question, and the scores equal FTRLReward's on the outcome the
// pipeline used before (q from the verifier, t = 1).
func TestFTRLTurnScoresAtomic(t *testing.T) {
	for _, tt := range []struct {
		name string
		tr   *TurnResult
		want FTRLScores
	}{
		{"one call, verified", turnWith("", 1, [2]string{"get", "x"}), FTRLScores{1, 1, 1, 1}},
		{"three calls, verified", turnWith("", 1, [2]string{"get", "x"}, [2]string{"get", "y"}, [2]string{"put", "z"}), FTRLScores{0.5, 1.0 / 3, 1, 1.0 / 3}},
		{"two calls, not verified", turnWith("", 0, [2]string{"get", "x"}, [2]string{"put", "z"}), FTRLScores{}},
		{"answer, verified", turnWith(" Done. ", 1), FTRLScores{0.5, 0.5, 0.5, 0.5}},
		{"answer, not verified", turnWith("Done.", 0), FTRLScores{}},
		{"empty", turnWith(" \n", 0), FTRLScores{-0.5, -0.5, -0.5, -0.5}},
		{"leak", turnWith("<tool_call>{", 1), FTRLScores{-0.3, -0.3, -0.3, -0.3}},
	} {
		r, err := FTRLTurnScores(context.Background(), tt.tr, nil, FTRLDefault)
		if err != nil {
			t.Fatal(err)
		}
		if r.Scores != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, r.Scores, tt.want)
		}
		q := 0
		if tt.tr.Reward == 1 {
			q = 1
		}
		old := TurnOutcome{Calls: len(tt.tr.Segment.Calls), NewlySolved: q, Unsolved: 1, Content: tt.tr.Segment.Content, Correct: q == 1}
		for _, v := range []Variant{SolveF1, SolveP, SolveR, SolvePrecision} {
			if got := r.Scores.Get(v); got != FTRLReward(old, v) {
				t.Errorf("%s %v: %v, the pipeline's previous reward %v", tt.name, v, got, FTRLReward(old, v))
			}
		}
	}
}

// TestFTRLTurnScoresExact: with FTRL state the tool messages are matched
// against unsolved_set exactly as FTRL's reward does.
func TestFTRLTurnScoresExact(t *testing.T) {
	st := &FTRLState{Unsolved: UnsolvedSet{{Tool: "get_user", Answers: []string{"u7"}}, {Tool: "get_order", Answers: []string{"42.5", "o3"}}}}
	tr := turnWith("", 0, [2]string{"get_user", `{"id": "U7"}`}, [2]string{"get_order", `{"order": "o3", "total": 42.5}`}, [2]string{"get_order", "nothing"})
	r, err := FTRLTurnScores(context.Background(), tr, st, FTRLCompatible)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scores != (FTRLScores{F1: 1, PR: 4.0 / 3, Rate: 2, Precision: 2.0 / 3}) {
		t.Errorf("scores %+v", r.Scores)
	}
	want := UnsolvedSet{{Tool: "get_user", Answers: []string{}}, {Tool: "get_order", Answers: []string{"o3"}}}
	if diff := cmp.Diff(want, r.Unsolved); diff != "" {
		t.Errorf("unsolved after (-want +got):\n%s", diff)
	}
	if got := r.Calls[0].Arguments; got != `{"id": 1}` {
		t.Errorf("arguments %q", got)
	}
	// A call whose arguments are not JSON is dropped, as FTRL's parser drops it.
	tr.Segment.Calls[2].Arguments = json.RawMessage(`{"id": NaN}`)
	for _, tc := range []struct {
		m     FTRLMode
		calls int
	}{{FTRLCompatible, 3}, {FTRLDefault, 2}} {
		r, err := FTRLTurnScores(context.Background(), tr, st, tc.m)
		if err != nil || len(r.Calls) != tc.calls {
			t.Errorf("%v: %d calls, %v", tc.m, len(r.Calls), err)
		}
	}
}
