package train

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"
)

func TestGroupAdvantages(t *testing.T) {
	tests := []struct {
		name    string
		rewards []float64
		eps     float64
		want    []float64
	}{
		{"empty", nil, 0.5, []float64{}},
		{"G=1", []float64{0.7}, 0.5, []float64{0}},
		{"all success", []float64{1, 1, 1, 1}, 1e-6, []float64{0, 0, 0, 0}},
		{"all fail", []float64{0, 0, 0}, 1e-6, []float64{0, 0, 0}},
		// equal but not exactly representable: the mean may round, the result must not
		{"all equal 0.1", []float64{0.1, 0.1, 0.1}, 1e-6, []float64{0, 0, 0}},
		// mean 0.5, std 0.5: ±0.5/(0.5+0.5)
		{"mixed eps 0.5", []float64{1, 0, 0, 1}, 0.5, []float64{0.5, -0.5, -0.5, 0.5}},
		// mean 0.5, std 0.5: ±0.5/(0.5+1e-6) = ±0.999998000004
		{"mixed eps 1e-6", []float64{1, 0, 0, 1}, 1e-6, []float64{0.5 / 0.500001, -0.5 / 0.500001, -0.5 / 0.500001, 0.5 / 0.500001}},
		// mean 5, deviations -3,-1,-1,-1,0,0,2,4, variance 32/8=4, std 2, denominator 2+2=4
		{"graded", []float64{2, 4, 4, 4, 5, 5, 7, 9}, 2, []float64{-0.75, -0.25, -0.25, -0.25, 0, 0, 0.5, 1}},
		// one success of four: mean 0.25, variance (0.5625+3*0.0625)/4=0.1875, std=sqrt(3)/4
		{"one of four", []float64{1, 0, 0, 0}, 1 - math.Sqrt(3)/4, []float64{0.75, -0.25, -0.25, -0.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := GroupAdvantages(tt.rewards, tt.eps)
			if diff := cmp.Diff(tt.want, got, approx); diff != "" {
				t.Errorf("GroupAdvantages(%v, %g) (-want +got):\n%s", tt.rewards, tt.eps, diff)
			}
		})
	}
}

var approx = cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-12 })

func TestGroupAdvantagesDefaultEps(t *testing.T) {
	// eps <= 0 uses DefaultEps = 1e-6: same as the explicit value.
	for _, eps := range []float64{0, -1, math.NaN()} {
		got := GroupAdvantages([]float64{1, 0}, eps)
		want := []float64{0.5 / 0.500001, -0.5 / 0.500001}
		if diff := cmp.Diff(want, got, approx); diff != "" {
			t.Errorf("eps=%g (-want +got):\n%s", eps, diff)
		}
	}
}

func TestApplyMask(t *testing.T) {
	tests := []struct {
		name   string
		adv    []float64
		masked []bool
		want   []float64
	}{
		{"nil mask", []float64{0.5, -0.5}, nil, []float64{0.5, -0.5}},
		{"positive masked to 0", []float64{0.5, -0.5, -0.5, 0.5}, []bool{true, false, false, false}, []float64{0, -0.5, -0.5, 0.5}},
		{"negative kept", []float64{0.5, -0.5}, []bool{true, true}, []float64{0, -0.5}},
		{"zero kept", []float64{0, 0}, []bool{true, false}, []float64{0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.adv...)
			got := ApplyMask(tt.adv, tt.masked)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tt.adv); diff != "" {
				t.Errorf("input modified:\n%s", diff)
			}
		})
	}
}

func TestApplyMaskLengthPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic on length mismatch")
		}
	}()
	ApplyMask([]float64{1, 2}, []bool{true})
}

func TestCandidateAdvantages(t *testing.T) {
	cs := []Candidate{
		{Reward: 1, Masked: true, Patterns: []string{"repeated_call"}},
		{Reward: 0},
		{Reward: 0, Masked: true},
		{Reward: 1},
	}
	// group advantages ±0.5 (eps 0.5); the masked winner loses its credit,
	// the masked loser keeps its penalty.
	want := []float64{0, -0.5, -0.5, 0.5}
	if diff := cmp.Diff(want, CandidateAdvantages(cs, 0.5)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestTrajectoryAdvantages(t *testing.T) {
	got := TrajectoryAdvantages([]float64{1, 0, 0, 1}, []int{2, 0, 3, 1}, 0.5)
	want := [][]float64{{0.5, 0.5}, {}, {-0.5, -0.5, -0.5}, {0.5}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	got = TrajectoryAdvantages([]float64{1, 1}, []int{1, 2}, 0.5)
	want = [][]float64{{0}, {0, 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("all equal (-want +got):\n%s", diff)
	}
}

func TestTrajectoryAdvantagesPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"length":   func() { TrajectoryAdvantages([]float64{1, 0}, []int{1}, 0.5) },
		"negative": func() { TrajectoryAdvantages([]float64{1, 0}, []int{1, -1}, 0.5) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		})
	}
}

// Rewards on a grid of quarters keep mean and shifts exact, so the only
// rounding is in std and the divisions.
func quarter() *rapid.Generator[float64] {
	return rapid.Map(rapid.IntRange(-40, 40), func(k int) float64 { return float64(k) / 4 })
}

func TestGroupAdvantagesProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		rewards := rapid.SliceOfN(quarter(), 1, 16).Draw(t, "rewards")
		c := quarter().Draw(t, "shift")
		eps := rapid.SampledFrom([]float64{1e-6, 1e-3, 0.5}).Draw(t, "eps")
		adv := GroupAdvantages(rewards, eps)
		if len(adv) != len(rewards) {
			t.Fatalf("len %d, want %d", len(adv), len(rewards))
		}
		var sum float64
		for _, a := range adv {
			sum += a
		}
		if math.Abs(sum) >= 1e-9 {
			t.Fatalf("sum of advantages %g, want ~0 (%v)", sum, adv)
		}
		shifted := make([]float64, len(rewards))
		for i, r := range rewards {
			shifted[i] = r + c
		}
		adv2 := GroupAdvantages(shifted, eps)
		for i := range adv {
			if math.Abs(adv[i]-adv2[i]) >= 1e-9 {
				t.Fatalf("shift by %g changed A[%d]: %g -> %g", c, i, adv[i], adv2[i])
			}
		}
		masked := rapid.SliceOfN(rapid.Bool(), len(adv), len(adv)).Draw(t, "masked")
		for i, a := range ApplyMask(adv, masked) {
			if a > adv[i] || (masked[i] && a > 0) || (!masked[i] && a != adv[i]) {
				t.Fatalf("mask %v: A[%d] %g -> %g", masked[i], i, adv[i], a)
			}
		}
	})
}
