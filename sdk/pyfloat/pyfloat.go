// Package pyfloat formats floats as Python does, for guests and hosts
// alike: it imports only math, strconv and strings (no math/big, which
// sdk/pyvalue needs for Python's integers), so a tool module compiled to
// Wasm can use it without growing.
package pyfloat

import (
	"math"
	"strconv"
	"strings"
)

// Repr is Python's repr(f) (= str(f)) of a float: the shortest
// digits that round-trip, in positional notation when the decimal exponent
// is in [-4, 16) — with ".0" added to integral values — and in scientific
// notation otherwise, with a signed exponent of at least two digits:
// 100.0, 0.0001, 1e-05, 2.5e+16, 1e+16, -0.0, inf, nan.
func Repr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, exps, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(exps)
	digits := strings.Replace(mant, ".", "", 1)
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es, exp = "-", -exp
		}
		if exp < 10 {
			es += "0"
		}
		return sign + m + "e" + es + strconv.Itoa(exp)
	}
	point := exp + 1 // digits before the decimal point
	switch {
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
	}
	return sign + digits[:point] + "." + digits[point:]
}
