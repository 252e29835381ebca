package train

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAccept(t *testing.T) {
	tests := []struct {
		name      string
		cs        []Candidate
		threshold float64
		want      int
	}{
		{"none", nil, 1, -1},
		{"first passing", []Candidate{{Reward: 0}, {Reward: 1}, {Reward: 1}}, 1, 1},
		{"masked skipped", []Candidate{{Reward: 1, Masked: true}, {Reward: 0.5}, {Reward: 1}}, 1, 2},
		{"first not best", []Candidate{{Reward: 0.8}, {Reward: 0.9}}, 0.75, 0},
		{"at threshold", []Candidate{{Reward: 0.75}}, 0.75, 0},
		{"all fail", []Candidate{{Reward: 0.7}, {Reward: 1, Masked: true}}, 0.75, -1},
	}
	for _, tt := range tests {
		if got := Accept(tt.cs, tt.threshold); got != tt.want {
			t.Errorf("%s: got %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestSamplingStats(t *testing.T) {
	var s SamplingStats
	if s.AcceptanceRate() != 0 || s.AttemptsPerAccept() != 0 {
		t.Errorf("zero value: rate %g, attempts/accept %g", s.AcceptanceRate(), s.AttemptsPerAccept())
	}
	s.Add([]Candidate{{Reward: 1, Masked: true, Patterns: []string{"repeated_call", "early_stop"}}, {Reward: 1}}, 1)
	s.Add([]Candidate{{Reward: 0}, {Reward: 0, Masked: true, Patterns: []string{"repeated_call"}}, {Reward: 0}}, -1)
	s.Add([]Candidate{{Reward: 1}}, 0)
	s.Add(nil, -1)
	want := SamplingStats{Turns: 4, Accepted: 2, Attempts: 6, Masked: 2, Patterns: map[string]int{"repeated_call": 2, "early_stop": 1}}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := s.AcceptanceRate(); got != 0.5 { // 2/4
		t.Errorf("AcceptanceRate %g, want 0.5", got)
	}
	if got := s.AttemptsPerAccept(); got != 3 { // 6/2
		t.Errorf("AttemptsPerAccept %g, want 3", got)
	}
}

func TestSamplingStatsAddPanics(t *testing.T) {
	for _, idx := range []int{-2, 2} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("accepted=%d: no panic", idx)
				}
			}()
			var s SamplingStats
			s.Add([]Candidate{{}, {}}, idx)
		}()
	}
}
