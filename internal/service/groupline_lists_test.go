package service

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/train"
)

// A group line's list fields are JSON lists, never null, for a group whose
// candidates fired no detector and were offered no tools: verl.prompt,
// verl.extra_info.patterns and .tools (docs/datasets.md: "LIST of STRING;
// empty in the per-group rows"), each segment's patterns, prompt and
// completion, and rewards/advantages/masked. extra_info.patterns was null
// (trial F8).
func TestGroupLineListsNotNull(t *testing.T) {
	b := &Batch{ID: "b1", DataSource: "weft/test", Admitted: time.Now()}
	g := &train.Group{ID: "T/t0", TaskID: "T", Level: train.LevelAtomicTurn, Candidates: []train.GroupCandidate{
		{Sample: 0, Reward: 1, Result: &train.TurnResult{Prompt: []model.Message{{Role: "system", Content: "s"}}}},
		{Sample: 1, Reward: 0, Result: &train.TurnResult{}},
	}}
	data, err := json.Marshal(groupLine(b, g, 3))
	if err != nil {
		t.Fatal(err)
	}
	var line struct {
		Rewards    []float64 `json:"rewards"`
		Advantages *[]any    `json:"advantages"`
		Masked     *[]any    `json:"masked"`
		Segments   []struct {
			Prompt, Completion, Patterns *[]any
		} `json:"segments"`
		Verl struct {
			Prompt    *[]any `json:"prompt"`
			ExtraInfo struct {
				Index    int64  `json:"index"`
				Patterns *[]any `json:"patterns"`
				Tools    *[]any `json:"tools"`
			} `json:"extra_info"`
		} `json:"verl"`
	}
	if err := json.Unmarshal(data, &line); err != nil {
		t.Fatal(err)
	}
	n := func(p *[]any) int {
		if p == nil {
			return -1 // null or absent
		}
		return len(*p)
	}
	e := line.Verl.ExtraInfo
	got := []int{n(line.Advantages), n(line.Masked), n(line.Verl.Prompt), n(e.Patterns), n(e.Tools)}
	if diff := cmp.Diff([]int{2, 2, 1, 0, 0}, got); diff != "" || e.Index != 3 {
		t.Errorf("advantages, masked, verl.prompt, extra_info.patterns, .tools lengths (-want +got, -1 = null):\n%s\nindex %d\n%s", diff, e.Index, data)
	}
	if len(line.Segments) != 2 {
		t.Fatalf("%d segments: %s", len(line.Segments), data)
	}
	for i, s := range line.Segments {
		if n(s.Patterns) != 0 || n(s.Completion) != 0 || n(s.Prompt) != 1-i {
			t.Errorf("segment %d: prompt %d, completion %d, patterns %d (-1 = null)", i, n(s.Prompt), n(s.Completion), n(s.Patterns))
		}
	}

	// A group without candidates still has lists.
	data, _ = json.Marshal(groupLine(b, &train.Group{ID: "T/t1", TaskID: "T"}, 0))
	var empty map[string]any
	if err := json.Unmarshal(data, &empty); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"rewards", "advantages", "masked", "segments"} {
		if l, ok := empty[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s: %v, want []", k, empty[k])
		}
	}
}
