package rollout

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12 }

func TestPassAtKTable(t *testing.T) {
	// Hand-computed: pass@k = 1 - C(n-c,k)/C(n,k), pass^k = C(c,k)/C(n,k).
	cases := []struct {
		n, c, k   int
		at, hat   float64
		atS, hatS string
	}{
		{5, 2, 1, 0.4, 0.4, "1-3/5", "2/5"},
		{5, 2, 2, 0.7, 0.1, "1-3/10", "1/10"},
		{5, 2, 3, 0.9, 0, "1-1/10", "0/10"},
		{5, 2, 4, 1, 0, "1-0/5", "0/5"},
		{5, 2, 5, 1, 0, "1-0/1", "0/1"},
		{4, 3, 1, 0.75, 0.75, "1-1/4", "3/4"},
		{4, 3, 2, 1, 0.5, "1-0/6", "3/6"},
		{4, 3, 3, 1, 0.25, "1-0/4", "1/4"},
		{4, 3, 4, 1, 0, "1-0/1", "0/1"},
		{10, 0, 3, 0, 0, "1-120/120", "0/120"},
		{10, 10, 3, 1, 1, "1-0/120", "120/120"},
		{10, 5, 3, 1 - 10.0/120, 10.0 / 120, "1-10/120", "10/120"},
		{1, 1, 1, 1, 1, "", ""},
		{1, 0, 1, 0, 0, "", ""},
	}
	for _, tc := range cases {
		if got := PassAtK(tc.n, tc.c, tc.k); !near(got, tc.at) {
			t.Errorf("PassAtK(%d,%d,%d) = %v, want %v (%s)", tc.n, tc.c, tc.k, got, tc.at, tc.atS)
		}
		if got := PassHatK(tc.n, tc.c, tc.k); !near(got, tc.hat) {
			t.Errorf("PassHatK(%d,%d,%d) = %v, want %v (%s)", tc.n, tc.c, tc.k, got, tc.hat, tc.hatS)
		}
	}
}

func TestPassAtKUndefined(t *testing.T) {
	for _, a := range [][3]int{{5, 2, 0}, {5, 2, 6}, {5, 2, -1}, {5, 6, 1}, {5, -1, 1}, {0, 0, 1}, {0, 0, 0}} {
		if v := PassAtK(a[0], a[1], a[2]); !math.IsNaN(v) {
			t.Errorf("PassAtK%v = %v, want NaN", a, v)
		}
		if v := PassHatK(a[0], a[1], a[2]); !math.IsNaN(v) {
			t.Errorf("PassHatK%v = %v, want NaN", a, v)
		}
	}
}

func binom(n, k int) *big.Int {
	if k < 0 || k > n {
		return big.NewInt(0)
	}
	return new(big.Int).Binomial(int64(n), int64(k))
}

// TestPassAtKExact checks both estimators against exact rational
// arithmetic over a grid, including sizes whose factorials overflow
// float64 (n = 200).
func TestPassAtKExact(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 16, 50, 200} {
		for c := 0; c <= n; c += max(1, n/9) {
			for k := 1; k <= n; k += max(1, n/7) {
				den := binom(n, k)
				at, _ := new(big.Rat).Sub(big.NewRat(1, 1), new(big.Rat).SetFrac(binom(n-c, k), den)).Float64()
				hat, _ := new(big.Rat).SetFrac(binom(c, k), den).Float64()
				gotAt, gotHat := PassAtK(n, c, k), PassHatK(n, c, k)
				if math.Abs(gotAt-at) > 1e-9 || math.Abs(gotHat-hat) > 1e-9 {
					t.Errorf("n=%d c=%d k=%d: pass@k %v want %v, pass^k %v want %v", n, c, k, gotAt, at, gotHat, hat)
				}
			}
		}
	}
}

// TestPassAtKProperties: pass@k >= pass^k, both in [0, 1], pass@1 =
// pass^1 = c/n, pass@k non-decreasing and pass^k non-increasing in k.
func TestPassAtKProperties(t *testing.T) {
	checked := 0
	for n := 1; n <= 40; n++ {
		for c := 0; c <= n; c++ {
			prevAt, prevHat := -1.0, 2.0
			for k := 1; k <= n; k++ {
				at, hat := PassAtK(n, c, k), PassHatK(n, c, k)
				if at < 0 || at > 1 || hat < 0 || hat > 1 {
					t.Fatalf("n=%d c=%d k=%d: out of [0,1]: %v %v", n, c, k, at, hat)
				}
				if at+1e-12 < hat {
					t.Fatalf("n=%d c=%d k=%d: pass@k %v < pass^k %v", n, c, k, at, hat)
				}
				if at+1e-12 < prevAt || hat > prevHat+1e-12 {
					t.Fatalf("n=%d c=%d k=%d: not monotone", n, c, k)
				}
				if k == 1 && (!near(at, float64(c)/float64(n)) || !near(hat, float64(c)/float64(n))) {
					t.Fatalf("n=%d c=%d: pass@1 %v pass^1 %v, want %v", n, c, at, hat, float64(c)/float64(n))
				}
				prevAt, prevHat = at, hat
				checked++
			}
		}
	}
	if checked != 22960 { // sum over n=1..40 of n(n+1) = 40*41*42/3
		t.Fatalf("checked %d cases", checked)
	}
}

func score(v float64) *float64 { return &v }

func TestSummarize(t *testing.T) {
	var outs []*Outcome
	add := func(id string, s *float64) {
		outs = append(outs, &Outcome{TaskID: id, Score: s, Passed: s != nil && *s == 1})
	}
	// Task b: 5 scored (2 pass), 1 infra.
	add("b", score(1))
	add("b", score(0.5))
	add("b", nil)
	add("b", score(0))
	add("b", score(1))
	add("b", score(0.25))
	// Task a: 2 scored, both pass.
	add("a", score(1))
	add("a", score(1))
	// Task c: infra only.
	add("c", nil)
	add("c", nil)
	outs = append(outs, nil) // skipped job

	st := Summarize(outs, []int{1, 2, 5, 0})
	if len(st) != 3 || st[0].TaskID != "a" || st[1].TaskID != "b" || st[2].TaskID != "c" {
		t.Fatalf("tasks: %+v", st)
	}
	b := st[1]
	if b.N != 5 || b.C != 2 || b.Infra != 1 {
		t.Fatalf("b counts: %+v", b)
	}
	if !near(b.PassAtK[1], 0.4) || !near(b.PassAtK[2], 0.7) || !near(b.PassAtK[5], 1) {
		t.Errorf("b pass@k: %v", b.PassAtK)
	}
	if !near(b.PassHatK[1], 0.4) || !near(b.PassHatK[2], 0.1) || b.PassHatK[5] != 0 {
		t.Errorf("b pass^k: %v", b.PassHatK)
	}
	if len(b.PassAtK) != 3 || len(b.PassHatK) != 3 {
		t.Errorf("b: k=0 must be absent: %v %v", b.PassAtK, b.PassHatK)
	}
	if b.MeanScore == nil || !near(*b.MeanScore, 2.75/5) {
		t.Errorf("b mean: %v", b.MeanScore)
	}
	a := st[0]
	if a.N != 2 || a.C != 2 || a.Infra != 0 || len(a.PassAtK) != 2 || a.PassAtK[1] != 1 || a.PassHatK[2] != 1 {
		t.Errorf("a: %+v (k=5 > n=2 must be absent)", a)
	}
	if _, ok := a.PassAtK[5]; ok {
		t.Errorf("a: k=5 > n present")
	}
	c := st[2]
	if c.N != 0 || c.C != 0 || c.Infra != 2 || c.MeanScore != nil || len(c.PassAtK) != 0 {
		t.Errorf("c (infra only) must have no score: %+v", c)
	}
	if _, err := json.Marshal(st); err != nil {
		t.Fatalf("stats must encode as JSON: %v", err)
	}
	if got := Summarize(nil, []int{1}); len(got) != 0 {
		t.Errorf("empty: %v", got)
	}
}
