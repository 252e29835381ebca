package pyvalue

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// dict is a Mapping for the tests: alternating keys and values.
type dict []any

func (d dict) Keys() []string {
	var ks []string
	for i := 0; i+1 < len(d); i += 2 {
		ks = append(ks, d[i].(string))
	}
	return ks
}

func (d dict) Get(k string) (any, bool) {
	for i := 0; i+1 < len(d); i += 2 {
		if d[i] == k {
			return d[i+1], true
		}
	}
	return nil, false
}

func TestReprAnyAndStrAny(t *testing.T) {
	for _, tt := range []struct {
		v         any
		str, repr string
	}{
		{nil, "None", "None"},
		{true, "True", "True"},
		{false, "False", "False"},
		{"it's", "it's", `"it's"`},
		{"a'b\"c\n\x00é\u200b", "a'b\"c\n\x00é\u200b", `'a\'b"c\n\x00é\u200b'`},
		{int64(-12), "-12", "-12"},
		{7, "7", "7"},
		{2.0, "2.0", "2.0"},
		{1e-5, "1e-05", "1e-05"},
		{json.Number("-0"), "0", "0"},
		{json.Number("120"), "120", "120"},
		{json.Number("1.50"), "1.5", "1.5"},
		{json.Number("1E2"), "100.0", "100.0"},
		{json.Number("1e400"), "inf", "inf"},
		{[]any{"x", int64(1), nil, []any{}}, "['x', 1, None, []]", "['x', 1, None, []]"},
		{dict{"b", 1.5, "a", dict{"k", "v"}}, "{'b': 1.5, 'a': {'k': 'v'}}", "{'b': 1.5, 'a': {'k': 'v'}}"},
		{Value{Kind: List, List: []Value{StrValue("q"), {Kind: Float, Float: 3}}}, "['q', 3.0]", "['q', 3.0]"},
		{StrValue("s"), "s", "'s'"},
		{map[string]int{}, "<Go map[string]int>", "<Go map[string]int>"},
		{[]string{"a"}, "<Go []string>", "<Go []string>"},
	} {
		if got := StrAny(tt.v); got != tt.str {
			t.Errorf("StrAny(%#v) = %q, want %q", tt.v, got, tt.str)
		}
		if got := ReprAny(tt.v); got != tt.repr {
			t.Errorf("ReprAny(%#v) = %q, want %q", tt.v, got, tt.repr)
		}
	}
}

// TestReprAnyMatchesRepr: a Value decoded from JSON renders the same
// through Repr and through ReprAny of its Go-native counterpart.
func TestReprAnyMatchesRepr(t *testing.T) {
	src := `{"a": [1, 2.5, "x'y", null, true], "b": {"c": -0, "d": 1e-7}, "e": "東\n"}`
	v, err := JSONLoads(src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ReprAny(native(v)), Repr(v); got != want {
		t.Errorf("ReprAny = %s, Repr = %s", got, want)
	}
	if want := `{'a': [1, 2.5, "x'y", None, True], 'b': {'c': 0, 'd': 1e-07}, 'e': '東\n'}`; Repr(v) != want {
		t.Errorf("Repr = %s, want %s", Repr(v), want)
	}
}

// native converts a Value to Go-native values (json.Number for numbers).
func native(v Value) any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Int:
		return json.Number(v.Int)
	case Float:
		return v.Float
	case Str:
		return v.Str
	case List:
		l := []any{}
		for _, e := range v.List {
			l = append(l, native(e))
		}
		return l
	case Dict:
		d := dict{}
		for _, it := range v.Dict {
			d = append(d, it.Key, native(it.Value))
		}
		return d
	}
	return nil
}

func TestRound(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, tt := range []struct {
		x    float64
		n    int
		want float64
	}{
		{2.675, 2, 2.67}, // 2.675 is 2.67499999... in binary
		{0.5, 0, 0}, {1.5, 0, 2}, {2.5, 0, 2}, {-0.4, 0, negZero},
		{0.125, 2, 0.12}, {0.375, 2, 0.38}, {1.005, 2, 1}, {3.14159, 3, 3.142},
		{1234.5, -1, 1230}, {1235, -1, 1240}, {1225, -1, 1220}, {-1250, -2, -1200}, {-1251, -2, -1300},
		{15, -1, 20}, {25, -1, 20}, {4, -1, 0}, {-4, -1, negZero},
		{1e300, -301, 0}, {-5, -500, negZero}, {1.25, 500, 1.25},
		{math.Inf(1), 2, math.Inf(1)}, {math.Inf(-1), -2, math.Inf(-1)},
	} {
		got := Round(tt.x, tt.n)
		if got != tt.want || math.Signbit(got) != math.Signbit(tt.want) {
			t.Errorf("Round(%v, %d) = %v, want %v", tt.x, tt.n, got, tt.want)
		}
	}
	if !math.IsNaN(Round(math.NaN(), 1)) {
		t.Error("Round(NaN) is not NaN")
	}
}

// FuzzRender checks the renderers on arbitrary JSON: whatever JSONLoads
// accepts, Repr equals ReprAny of the native form, StrAny of a str is the
// str, every ReprStr is quoted and its unquoted text never holds a raw
// control character, and Round keeps |Round(x, n) - x| within half a unit.
// Seed corpus: testdata/fuzz/FuzzRender.
func FuzzRender(f *testing.F) {
	f.Add(`{"a": [1, 2.5, NaN, "東'\""], "b": {"c": null}}`, 2.675, 2)
	f.Fuzz(func(t *testing.T, s string, x float64, n int) {
		if v, err := JSONLoads(s); err == nil {
			if got, want := ReprAny(native(v)), Repr(v); got != want {
				t.Fatalf("ReprAny %s != Repr %s", got, want)
			}
			if v.Kind == Str && StrAny(v.Str) != v.Str {
				t.Fatalf("StrAny(%q) changed it", v.Str)
			}
		}
		r := ReprStr(s)
		if len(r) < 2 || r[0] != r[len(r)-1] || (r[0] != '\'' && r[0] != '"') {
			t.Fatalf("ReprStr(%q) = %s is not quoted", s, r)
		}
		if strings.ContainsAny(r, "\x00\n\r\t\x7f") {
			t.Fatalf("ReprStr(%q) = %q holds a raw control character", s, r)
		}
		n = n % 20
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > 1e300 {
			return
		}
		got := Round(x, n)
		if d := math.Abs(got - x); d > 0.5*math.Pow(10, float64(-n))*(1+1e-9)+math.Abs(x)*1e-15 {
			t.Fatalf("Round(%v, %d) = %v, off by %v", x, n, got, d)
		}
	})
}
