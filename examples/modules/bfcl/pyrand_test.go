package main

import (
	"testing"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// TestPyRandom checks the Mersenne Twister port against CPython 3.11's
// random.Random (values printed by python3 for each seed: two
// randint(10000, 99999), randint(10**11, 10**12 - 1) (40 bits: two words),
// uniform(-10.0, 40.0) and randint over TradingBot's day).
func TestPyRandom(t *testing.T) {
	type want struct {
		ids     [2]int64
		card    int64
		uniform float64
		ts      int64
	}
	for seed, w := range map[int64]want{
		200191:        {[2]int64{67410, 41772}, 521379371380, 39.39396786704845, 1725210085},
		1053520:       {[2]int64{79015, 16994}, 909576826245, 21.93483211236178, 1725228315},
		1099511627783: {[2]int64{90439, 93823}, 875543922676, 13.796204943524469, 1725267286}, // 2**40 + 7: a two-word key
		-5:            {[2]int64{91644, 43481}, 494027974809, 29.75967827828483, 1725272063},  // CPython seeds with |n|
		0:             {[2]int64{60494, 65125}, 383641720628, 38.27324431809586, 1725250291},
	} {
		r := newPyRandom(seed)
		got := want{[2]int64{r.randint(10000, 99999), r.randint(10000, 99999)}, r.randint(100000000000, 999999999999),
			r.uniform(-10, 40), r.randint(1725186600, 1725186600+86400)}
		if got != w {
			t.Errorf("seed %d: got %+v, want %+v", seed, got, w)
		}
		// Restoring from (seed, words drawn) continues the same stream.
		r2 := restoreRandom(seed, r.draws)
		if a, b := r.randint(0, 1<<30), r2.randint(0, 1<<30); a != b {
			t.Errorf("seed %d: restored stream gives %d, original %d", seed, b, a)
		}
	}
	r := newPyRandom(141053)
	if got := [3]int64{r.randint(10000, 99999), r.randint(10000, 99999), r.randint(10000, 99999)}; got != [3]int64{28959, 44620, 58617} {
		t.Errorf("seed 141053: %v", got)
	}
	if got := r.random(); got != 0.1902534093233219 {
		t.Errorf("random() = %v", got)
	}
	if got := r.uniform(0, 10); got != 6.422889192491581 {
		t.Errorf("uniform = %v", got)
	}
	if got := r.getrandbits(40); got != 709934770557 {
		t.Errorf("getrandbits(40) = %v", got)
	}
}

// TestPyFormatting checks Python's float repr and round().
func TestPyFormatting(t *testing.T) {
	for f, want := range map[float64]string{1e16: "1e+16", 1.5e-5: "1.5e-05", 123456789.125: "123456789.125", 10000: "10000.0", -0.5: "-0.5"} {
		if got := pyvalue.FloatRepr(f); got != want {
			t.Errorf("pyvalue.FloatRepr(%v) = %q, want %q", f, got, want)
		}
	}
	// round(2.675, 2) is 2.67 (2.675 is below the tie in binary);
	// round(0.125, 2) is 0.12 (an exact tie, to even).
	if got := pyvalue.Round(2.675, 2); got != 2.67 {
		t.Errorf("pyvalue.Round(2.675, 2) = %v", got)
	}
	if got := pyvalue.Round(0.125, 2); got != 0.12 {
		t.Errorf("pyvalue.Round(0.125, 2) = %v", got)
	}
	if got := pyvalue.ReprAny(dict("a", []any{"it's", nil, true, int64(3)})); got != `{'a': ["it's", None, True, 3]}` {
		t.Errorf("pyRepr = %s", got)
	}
	if got := splitLines("a\r\nb\rc\n\nd\n"); len(got) != 5 || got[0] != "a" || got[3] != "" || got[4] != "d" {
		t.Errorf("splitLines = %q", got)
	}
}
