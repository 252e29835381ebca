package pipeline

import (
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/core/train"
)

// TestRewardFuncFTRL: the grpo FTRL rewards go through
// train.FTRLTurnScores (the atomic task as the only sub-question).
func TestRewardFuncFTRL(t *testing.T) {
	three := &train.TurnResult{Reward: 1, Segment: train.Segment{Calls: []train.Call{
		{Tool: "a", Arguments: json.RawMessage(`{}`)}, {Tool: "b", Arguments: json.RawMessage(`{}`)}, {Tool: "c", Arguments: json.RawMessage(`{}`)}}}}
	answer := &train.TurnResult{Reward: 1, Segment: train.Segment{Content: "Done."}}
	empty := &train.TurnResult{Segment: train.Segment{Content: " "}}
	for _, tt := range []struct {
		name string
		tr   *train.TurnResult
		want float64
	}{
		{"ftrl_f1", three, 0.5}, {"ftrl_p", three, 1.0 / 3}, {"ftrl_r", three, 1}, {"ftrl_precision", three, 1.0 / 3},
		{"ftrl_f1", answer, 0.5}, {"ftrl_f1", empty, -0.5},
	} {
		if got := rewardFunc(tt.name)(tt.tr); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
	if rewardFunc(RewardBinary) != nil {
		t.Error("binary reward is not nil")
	}
}
