package pipeline

import (
	"testing"

	"github.com/weft-dev/weft/core/report"
)

// TestPassKEveryK: weft run (a Spec without PassK) computes pass@k and
// pass^k for every k the samples allow, not only k = 1 (issue 15 item 16);
// an explicit PassK still caps k at its largest value.
func TestPassKEveryK(t *testing.T) {
	if got := (&runner{spec: &Spec{}}).passK(); got != report.KAll {
		t.Errorf("passK() without Spec.PassK = %d, want report.KAll", got)
	}
	if got := (&runner{spec: &Spec{PassK: []int{2, 3}}}).passK(); got != 3 {
		t.Errorf("passK() with PassK {2, 3} = %d, want 3", got)
	}
}
