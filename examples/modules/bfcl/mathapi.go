package main

import (
	"math"
	"math/big"
	"strconv"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// MathAPI (bfcl_eval func_source_code/math_api.py): stateless arithmetic.
// Python's int/float distinction is kept (int op int stays int); mpmath's
// logarithm at mp.dps = precision is reproduced by rounding to the
// matching binary precision, Decimal's square root by rounding to
// precision significant digits.
var _ = addClass(&class{name: "MathAPI", docs: "math_api", load: func(*Dict) (*Dict, error) { return newDict(), nil }, methods: map[string]method{
	"logarithm":              mathLog,
	"mean":                   mathMean,
	"standard_deviation":     mathStd,
	"si_unit_conversion":     mathSI,
	"imperial_si_conversion": mathImperial,
	"add":                    func(_, a *Dict) (any, error) { return arith(a.G("a"), a.G("b"), '+') },
	"subtract":               func(_, a *Dict) (any, error) { return arith(a.G("a"), a.G("b"), '-') },
	"multiply":               func(_, a *Dict) (any, error) { return arith(a.G("a"), a.G("b"), '*') },
	"divide":                 mathDivide,
	"power":                  mathPower,
	"square_root":            mathSqrt,
	"absolute_value":         mathAbs,
	"round_number":           mathRound,
	"percentage":             mathPercentage,
	"min_value":              func(_, a *Dict) (any, error) { return minMax(a, -1) },
	"max_value":              func(_, a *Dict) (any, error) { return minMax(a, 1) },
	"sum_values":             mathSum,
}})

func result(v any) *Dict { return dict("result", v) }

// pyNum is a Python number: an int (i) or a float (f).
type pyNum struct {
	isInt bool
	i     int64
	f     float64
}

func toNum(v any) (pyNum, bool) {
	if _, ok := v.(bool); ok {
		return pyNum{}, false
	}
	if isInt(v) {
		i, ok := toInt(v)
		return pyNum{isInt: true, i: i, f: float64(i)}, ok
	}
	f, ok := num(v)
	return pyNum{f: f}, ok
}

func (n pyNum) val() any {
	if n.isInt {
		return n.i
	}
	return n.f
}

func arith(x, y any, op byte) (any, error) {
	a, ok1 := toNum(x)
	b, ok2 := toNum(y)
	if !ok1 || !ok2 {
		return dict("error", "Both inputs must be numbers"), nil
	}
	if a.isInt && b.isInt {
		switch op {
		case '+':
			return result(a.i + b.i), nil
		case '-':
			return result(a.i - b.i), nil
		case '*':
			return result(a.i * b.i), nil
		}
	}
	switch op {
	case '+':
		return result(a.f + b.f), nil
	case '-':
		return result(a.f - b.f), nil
	}
	return result(a.f * b.f), nil
}

func mathDivide(_, a *Dict) (any, error) {
	x, ok1 := toNum(a.G("a"))
	y, ok2 := toNum(a.G("b"))
	if !ok1 || !ok2 {
		return dict("error", "Both inputs must be numbers"), nil
	}
	if y.f == 0 {
		return dict("error", "Cannot divide by zero"), nil
	}
	return result(x.f / y.f), nil
}

func mathPower(_, a *Dict) (any, error) {
	x, ok1 := toNum(a.G("base"))
	y, ok2 := toNum(a.G("exponent"))
	if !ok1 || !ok2 {
		return dict("error", "Both inputs must be numbers"), nil
	}
	if x.isInt && y.isInt && y.i >= 0 {
		r := new(big.Int).Exp(big.NewInt(x.i), big.NewInt(y.i), nil)
		if r.IsInt64() {
			return result(r.Int64()), nil
		}
		f, _ := new(big.Float).SetInt(r).Float64()
		return result(f), nil
	}
	if x.f == 0 && y.f < 0 {
		return nil, raise("0.0 cannot be raised to a negative power")
	}
	if x.f < 0 && y.f != math.Trunc(y.f) {
		return nil, raise("complex result")
	}
	r := math.Pow(x.f, y.f)
	if math.IsInf(r, 0) {
		return nil, raise("(34, 'Numerical result out of range')")
	}
	return result(r), nil
}

func numbers(a *Dict) ([]pyNum, bool, bool) {
	l, _ := list(a.G("numbers"))
	if len(l) == 0 {
		return nil, true, true
	}
	out := make([]pyNum, len(l))
	for i, v := range l {
		n, ok := toNum(v)
		if !ok {
			return nil, false, false
		}
		out[i] = n
	}
	return out, false, true
}

// pySum is Python's sum(): ints exactly, then floats left to right.
func pySum(ns []pyNum) pyNum {
	acc := pyNum{isInt: true}
	for _, n := range ns {
		if acc.isInt && n.isInt {
			acc.i += n.i
			acc.f = float64(acc.i)
			continue
		}
		if acc.isInt {
			acc = pyNum{f: float64(acc.i)}
		}
		acc.f += n.f
	}
	return acc
}

func mathMean(_, a *Dict) (any, error) {
	ns, empty, ok := numbers(a)
	if empty {
		return dict("error", "Cannot calculate mean of an empty list"), nil
	}
	if !ok {
		return dict("error", "All elements in the list must be numbers"), nil
	}
	return result(pySum(ns).f / float64(len(ns))), nil
}

func mathStd(_, a *Dict) (any, error) {
	ns, empty, ok := numbers(a)
	if empty {
		return dict("error", "Cannot calculate standard deviation of an empty list"), nil
	}
	if !ok {
		return dict("error", "All elements in the list must be numbers"), nil
	}
	mean := pySum(ns).f / float64(len(ns))
	v := 0.0
	for _, n := range ns {
		v += (n.f - mean) * (n.f - mean)
	}
	return result(math.Sqrt(v / float64(len(ns)))), nil
}

func mathSum(_, a *Dict) (any, error) {
	ns, empty, ok := numbers(a)
	if empty {
		return dict("error", "Cannot calculate sum of an empty list"), nil
	}
	if !ok {
		return dict("error", "All elements in the list must be numbers"), nil
	}
	return result(pySum(ns).val()), nil
}

func minMax(a *Dict, sign int) (any, error) {
	if l, _ := list(a.G("numbers")); len(l) > 0 {
		if s0, ok := l[0].(string); ok {
			// All strings: Python compares them (by code point).
			best := s0
			for _, v := range l[1:] {
				s, ok := v.(string)
				if !ok {
					return dict("error", "All elements in the list must be numbers"), nil
				}
				if (sign < 0 && s < best) || (sign > 0 && s > best) {
					best = s
				}
			}
			return result(best), nil
		}
	}
	ns, empty, ok := numbers(a)
	if empty {
		if sign < 0 {
			return dict("error", "Cannot find minimum of an empty list"), nil
		}
		return dict("error", "Cannot find maximum of an empty list"), nil
	}
	if !ok {
		return dict("error", "All elements in the list must be numbers"), nil
	}
	best := ns[0]
	for _, n := range ns[1:] {
		if (sign < 0 && n.f < best.f) || (sign > 0 && n.f > best.f) {
			best = n
		}
	}
	return result(best.val()), nil
}

var toMeters = map[string]float64{"km": 1000, "m": 1, "cm": 0.01, "mm": 0.001, "um": 1e-6, "nm": 1e-9}

func mathSI(_, a *Dict) (any, error) {
	v, ok := toNum(a.G("value"))
	if !ok {
		return dict("error", "Value must be a number"), nil
	}
	in, _ := str(a.G("unit_in"))
	out, _ := str(a.G("unit_out"))
	fi, ok1 := toMeters[in]
	fo, ok2 := toMeters[out]
	if !ok1 || !ok2 {
		return dict("error", "Conversion from '"+pyvalue.StrAny(a.G("unit_in"))+"' to '"+pyvalue.StrAny(a.G("unit_out"))+"' is not supported"), nil
	}
	// to_meters holds ints for km and m: value * int keeps an int value.
	var inM pyNum
	if v.isInt && (in == "km" || in == "m") {
		inM = pyNum{isInt: true, i: v.i * int64(fi), f: float64(v.i * int64(fi))}
	} else {
		inM = pyNum{f: v.f * fi}
	}
	return result(inM.f * (1 / fo)), nil
}

var imperial = map[string]float64{
	"cm_to_in": 0.393701, "in_to_cm": 2.54, "m_to_ft": 3.28084, "ft_to_m": 0.3048,
	"m_to_yd": 1.09361, "yd_to_m": 0.9144, "km_to_miles": 0.621371, "miles_to_km": 1.60934,
	"kg_to_lb": 2.20462, "lb_to_kg": 0.453592, "celsius_to_fahrenheit": 1.8, "fahrenheit_to_celsius": 5.0 / 9,
}

func mathImperial(_, a *Dict) (any, error) {
	v, ok := toNum(a.G("value"))
	if !ok {
		return dict("error", "Value must be a number"), nil
	}
	in, out := pyvalue.StrAny(a.G("unit_in")), pyvalue.StrAny(a.G("unit_out"))
	if pyEq(a.G("unit_in"), a.G("unit_out")) {
		return result(v.val()), nil
	}
	k := in + "_to_" + out
	c, ok := imperial[k]
	if !ok {
		return dict("error", "Conversion from '"+in+"' to '"+out+"' is not supported"), nil
	}
	switch {
	case in == "celsius" && out == "fahrenheit":
		return result(v.f*c + 32), nil
	case in == "fahrenheit" && out == "celsius":
		return result((v.f - 32) * c), nil
	}
	return result(v.f * c), nil
}

// dpsToPrec is mpmath's dps_to_prec: the binary precision of mp.dps = n.
func dpsToPrec(n int64) uint {
	return uint(max(1, int(math.Round(float64(n+1)*3.3219280948873626))))
}

func roundBits(x float64, prec uint) float64 {
	if prec >= 53 || x == 0 || math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	f, _ := new(big.Float).SetPrec(prec).SetMode(big.ToNearestEven).SetFloat64(x).Float64()
	return f
}

func mathLog(_, a *Dict) (any, error) {
	v, ok1 := toNum(a.G("value"))
	b, ok2 := toNum(a.G("base"))
	p, ok3 := toInt(a.G("precision"))
	if !ok1 || !ok2 || !ok3 {
		return dict("error", "cannot create mpf"), nil
	}
	prec := dpsToPrec(p)
	if v.f <= 0 || b.f <= 0 {
		// mpmath's log of a non-positive number is complex (or -inf).
		return dict("error", "cannot convert complex to float"), nil
	}
	lb := roundBits(math.Log(b.f), prec)
	if lb == 0 {
		return dict("error", "division by zero"), nil
	}
	return result(roundBits(roundBits(math.Log(v.f), prec)/lb, prec)), nil
}

func mathSqrt(_, a *Dict) (any, error) {
	n, ok1 := toNum(a.G("number"))
	p, ok2 := toInt(a.G("precision"))
	if !ok1 || !ok2 {
		return dict("error", "Input must be a number or computation resulted in an invalid operation"), nil
	}
	if n.f < 0 {
		return dict("error", "Cannot calculate square root of a negative number"), nil
	}
	if p < 1 {
		return dict("error", "Input must be a number or computation resulted in an invalid operation"), nil
	}
	r := math.Sqrt(n.f)
	if p < 17 && r != 0 {
		r, _ = strconv.ParseFloat(strconv.FormatFloat(r, 'e', int(p-1), 64), 64)
	}
	return result(r), nil
}

func mathAbs(_, a *Dict) (any, error) {
	n, ok := toNum(a.G("number"))
	if !ok {
		return dict("error", "Input must be a number"), nil
	}
	if n.isInt {
		if n.i < 0 {
			n.i = -n.i
		}
		return result(n.i), nil
	}
	return result(math.Abs(n.f)), nil
}

func mathRound(_, a *Dict) (any, error) {
	n, ok := toNum(a.G("number"))
	dv := opt(a, "decimal_places", int64(0))
	if !ok || !isInt(dv) {
		return dict("error", "First input must be a number, second input must be an integer"), nil
	}
	d, _ := toInt(dv)
	if n.isInt {
		if d >= 0 {
			return result(n.i), nil
		}
		p := int64(math.Pow(10, float64(-d)))
		q := float64(n.i) / float64(p)
		return result(int64(math.RoundToEven(q)) * p), nil
	}
	if d >= 0 {
		return result(pyvalue.Round(n.f, int(d))), nil
	}
	p := math.Pow(10, float64(-d))
	return result(math.RoundToEven(n.f/p) * p), nil
}

func mathPercentage(_, a *Dict) (any, error) {
	x, ok1 := toNum(a.G("part"))
	y, ok2 := toNum(a.G("whole"))
	if !ok1 || !ok2 {
		return dict("error", "Both inputs must be numbers"), nil
	}
	if y.f == 0 {
		return dict("error", "Whole value cannot be zero"), nil
	}
	return result(x.f / y.f * 100), nil
}
