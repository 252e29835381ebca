package pyvalue

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Mapping is an insertion-ordered dict with str keys, as a tool module
// keeps Python dicts in Go: Keys in insertion order, Get a key's value.
// ReprAny and StrAny render it as Python renders a dict.
type Mapping interface {
	Keys() []string
	Get(key string) (any, bool)
}

// StrAny is Python's str(v) of a Go-native value: a string as is, nil as
// None, bools as True/False, int, int64 and integral json.Number as their
// digits ("-0" as "0"), float64 and fractional json.Number as FloatRepr, a
// Value as ToStr, and everything else as ReprAny.
func StrAny(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case Value:
		return ToStr(x)
	}
	return ReprAny(v)
}

// ReprAny is Python's repr(v) of a Go-native value: strings as ReprStr,
// []any as a list, a Mapping as a dict ("{'k': v, ...}" in key order), a
// Value as Repr, scalars as StrAny says. A type Python has no counterpart
// for renders as "<Go T>" (T its Go type), never as a guess.
func ReprAny(v any) string {
	var b strings.Builder
	reprAny(&b, v)
	return b.String()
}

func reprAny(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case string:
		b.WriteString(ReprStr(x))
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(FloatRepr(x))
	case json.Number:
		b.WriteString(numberStr(x))
	case Value:
		pyReprTo(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			reprAny(b, e)
		}
		b.WriteByte(']')
	case Mapping:
		b.WriteByte('{')
		for i, k := range x.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(ReprStr(k))
			b.WriteString(": ")
			e, _ := x.Get(k)
			reprAny(b, e)
		}
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "<Go %T>", v)
	}
}

// numberStr renders a JSON number literal as Python's str() of what
// json.loads makes of it: an int's digits (with "-0" as "0"), a float's
// FloatRepr (json.Number holds no NaN or Infinity).
func numberStr(n json.Number) string {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		if s == "-0" {
			return "0"
		}
		return s
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return s // not a number literal: no Python value to render
	}
	return FloatRepr(f)
}

// Round is Python's round(x, n) on a float: the float nearest to x rounded
// to n decimal places (n < 0 rounds to tens, hundreds, ...), ties to even
// on x's exact binary value, so round(2.675, 2) is 2.67 and round(0.5) is
// 0.0. NaN and ±Inf come back unchanged, as does x when n is so large that
// no rounding happens; the sign of a zero result follows x.
func Round(x float64, n int) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || n > 400 {
		return x
	}
	if n >= 0 {
		// strconv rounds the exact value to n places, ties to even.
		f, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
		return f
	}
	if n < -400 {
		return math.Copysign(0, x)
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-n)), nil)
	q := new(big.Rat).SetFloat64(x)
	q.Quo(q, new(big.Rat).SetInt(unit))
	// q = num/den; round half to even.
	num, den := q.Num(), q.Denom()
	whole, rem := new(big.Int).QuoRem(num, den, new(big.Int))
	twice := new(big.Int).Mul(new(big.Int).Abs(rem), big.NewInt(2))
	switch c := twice.Cmp(den); {
	case c > 0 || c == 0 && whole.Bit(0) == 1:
		if num.Sign() < 0 {
			whole.Sub(whole, big.NewInt(1))
		} else {
			whole.Add(whole, big.NewInt(1))
		}
	}
	f, _ := new(big.Rat).SetInt(whole.Mul(whole, unit)).Float64()
	if f == 0 {
		return math.Copysign(0, x)
	}
	return f
}
