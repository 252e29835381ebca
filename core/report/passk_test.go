package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestComputePassKOverAllEpisodes: with episodes_per_task = 4 spread over
// a 2 x 2 view x harness mix every (task, view, harness) cell has one
// sample, yet each task has 4: KAll gives pass@k and pass^k for k = 1..4
// per task (tau-bench's headline), and k = 1..n per cell where a cell has
// n samples (issue 15 item 16: only k = 1 was shown).
func TestComputePassKOverAllEpisodes(t *testing.T) {
	var eps []Episode
	// t1 passes 3 of its 4 episodes, t2 1 of 4; each in one sample per cell.
	for i, s := range []float64{1, 1, 0, 1} {
		eps = append(eps, ep("t1", []string{"agentic", "simuser"}[i/2], []string{"native", "react"}[i%2], 0, f(s), 1, 0))
	}
	for i, s := range []float64{0, 1, 0, 0} {
		eps = append(eps, ep("t2", []string{"agentic", "simuser"}[i/2], []string{"native", "react"}[i%2], 0, f(s), 1, 0))
	}
	// A cell with three samples of t3 (2 passed).
	for i, s := range []float64{1, 0.5, 1} {
		eps = append(eps, ep("t3", "agentic", "native", i, f(s), 1, 0))
	}
	m := Compute(eps, nil, nil, KAll)
	if m.K != 4 {
		t.Errorf("K = %d, want 4 (the most scored episodes of a task)", m.K)
	}
	// t1: n=4 c=3; t2: n=4 c=1; t3: n=3 c=2.
	want := []TaskPassK{
		{Task: "t1", Episodes: 4, Scored: 4, Passed: 3,
			PassAtK:  map[int]float64{1: 3.0 / 4, 2: 1, 3: 1, 4: 1},
			PassHatK: map[int]float64{1: 3.0 / 4, 2: 3.0 / 6, 3: 1.0 / 4, 4: 0}},
		{Task: "t2", Episodes: 4, Scored: 4, Passed: 1,
			PassAtK:  map[int]float64{1: 1.0 / 4, 2: 1 - 3.0/6, 3: 1 - 1.0/4, 4: 1},
			PassHatK: map[int]float64{1: 1.0 / 4, 2: 0, 3: 0, 4: 0}},
		{Task: "t3", Episodes: 3, Scored: 3, Passed: 2,
			PassAtK:  map[int]float64{1: 2.0 / 3, 2: 1, 3: 1},
			PassHatK: map[int]float64{1: 2.0 / 3, 2: 1.0 / 3, 3: 0}},
	}
	if d := cmp.Diff(want, m.ByTask, approx); d != "" {
		t.Errorf("ByTask (-want +got):\n%s", d)
	}
	wantHat := map[int]float64{1: (3.0/4 + 1.0/4 + 2.0/3) / 3, 2: (0.5 + 0 + 1.0/3) / 3, 3: (0.25 + 0 + 0) / 3, 4: 0}
	if d := cmp.Diff(wantHat, m.TaskPassHatK, approx); d != "" {
		t.Errorf("TaskPassHatK (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[int]int{1: 3, 2: 3, 3: 3, 4: 2}, m.TaskPassKTasks); d != "" {
		t.Errorf("TaskPassKTasks (-want +got):\n%s", d)
	}
	// The agentic x native cell: t1 and t2 one sample each, t3 three.
	var cell GroupRate
	for _, g := range m.PassRateBy {
		if g.View == "agentic" && g.Harness == "native" {
			cell = g
		}
	}
	if d := cmp.Diff(map[int]float64{1: (1 + 0 + 2.0/3) / 3, 2: 1.0 / 3, 3: 0}, cell.PassHatK, approx); d != "" {
		t.Errorf("agentic x native pass^k (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[int]int{1: 3, 2: 1, 3: 1}, cell.PassKTasks); d != "" {
		t.Errorf("agentic x native tasks (-want +got):\n%s", d)
	}
}
