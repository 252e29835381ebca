package pyfloat

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestRepr(t *testing.T) {
	for f, want := range map[float64]string{
		100: "100.0", 0.0001: "0.0001", 1e-05: "1e-05", 2.5e16: "2.5e+16", 1e16: "1e+16",
		math.Copysign(0, -1): "-0.0", 0: "0.0", 123.45: "123.45",
		-1.5e-7: "-1.5e-07", 1e100: "1e+100", 9999999999999998: "9999999999999998.0",
		math.Inf(1): "inf", math.Inf(-1): "-inf", math.NaN(): "nan", 5e-324: "5e-324",
	} {
		if got := Repr(f); got != want {
			t.Errorf("Repr(%v) = %q, want %q", f, got, want)
		}
	}
	a, b := 0.1, 0.2
	if got := Repr(a + b); got != "0.30000000000000004" {
		t.Errorf("Repr(0.1+0.2) = %q", got)
	}
}

// FuzzRepr: Repr round-trips, is positional exactly for decimal exponents
// in [-4, 16), and has the digits of Go's shortest formatting.
func FuzzRepr(f *testing.F) {
	for _, x := range []float64{0, 1, -2.5, 1e16, 1e-5, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		s := Repr(x)
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || math.Float64bits(back) != bits {
			t.Fatalf("Repr(%v) = %q does not round-trip (%v, %v)", x, s, back, err)
		}
		e := strconv.FormatFloat(x, 'e', -1, 64)
		exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
		sci := strings.ContainsRune(s, 'e')
		if sci != (x != 0 && (exp < -4 || exp >= 16)) {
			t.Fatalf("Repr(%v) = %q: scientific %v at exponent %d", x, s, sci, exp)
		}
		if !sci && !strings.ContainsRune(s, '.') {
			t.Fatalf("Repr(%v) = %q has no point", x, s)
		}
	})
}
