package main

import (
	"context"
	"testing"
)

// Expected values computed by CPython 3 with the reference's expression:
// str(round(float(eval(expression)), 2)), or an exception.
var calculateCases = []struct {
	expr    string
	want    string
	wantErr bool
}{
	{"2 + 2", "4.0", false},
	{"100 / 3", "33.33", false},
	{"2 ** 8", "256.0", false},
	{"(12.5 + 7.25) * 2", "39.5", false},
	{"1/0", "", true},
	{"1 // 0", "", true},
	{"7 // 2", "3.0", false},
	{"-7 // 2", "-4.0", false},
	{"7.5 // 2", "3.0", false},
	{"-7.5 // 2", "-4.0", false},
	{"7 // -2.0", "-4.0", false},
	{"2 ** -1", "0.5", false},
	{"0 ** -1", "", true},
	{"-2 ** 2", "-4.0", false},
	{"(-2) ** 2", "4.0", false},
	{"2 ** 3 ** 2", "512.0", false},
	{"(-8) ** (1/3)", "", true},
	{"10 ** 400", "", true},
	{"10 ** 400 // 10 ** 399", "10.0", false},
	{"10 ** 30 / 3", "3.333333333333333e+29", false},
	{"0.125", "0.12", false},
	{"0.375", "0.38", false},
	{"2.675", "2.67", false},
	{"1.005", "1.0", false},
	{"-0.001", "-0.0", false},
	{"0.005", "0.01", false},
	{"012", "", true},
	{"00", "0.0", false},
	{"01.5", "1.5", false},
	{"1.", "1.0", false},
	{".5", "0.5", false},
	{"1..2", "", true},
	{"1.2.3", "", true},
	{"()", "", true},
	{"(1)(2)", "", true},
	{"1 2", "", true},
	{"2 * * 3", "", true},
	{"2 *** 3", "", true},
	{"", "", true},
	{"   ", "", true},
	{"  3 + 4", "7.0", false},
	{"1 - - 1", "2.0", false},
	{"+-+1", "-1.0", false},
	{"10.0 ** 400", "", true},
	{"(10.0 ** 200) * (10.0 ** 200)", "inf", false},
	{"(10.0 ** 200) * (10.0 ** 200) - (10.0 ** 200) * (10.0 ** 200)", "nan", false},
	{"0.1 + 0.2", "0.3", false},
	{"1e5", "", true},
	{"1319.43 - 302.67 + 271.89", "1288.65", false},
	{"135.24 - 153.23", "-17.99", false},
	{"2 ** 0.5", "1.41", false},
	{"(-1) ** 0.5", "", true},
	{"(-2.0) ** 3", "-8.0", false},
	{"0 ** 0", "1.0", false},
	{"0.0 ** 0", "1.0", false},
	{"4 / 2", "2.0", false},
	{"12345678901234567890123 / 7", "1.763668414462081e+21", false},
	{"...", "", true},
	{"(...)", "", true},
	{"5 // 0.0", "", true},
	{"-0.0", "-0.0", false},
	{"1 / 3 * 3", "1.0", false},
	{"99999999999999999999 * 1.0", "1e+20", false},
	{"0.1 * 3", "0.3", false},
	{"3 * 0.1 - 0.3", "0.0", false},
	{"2 ** 1023 * 2", "", true},
	{"2.0 ** 1024", "", true},
}

func TestCalculatePython(t *testing.T) {
	for _, c := range calculateCases {
		got, err := calculate(context.Background(), calculateIn{Expression: c.expr})
		if (err != nil) != c.wantErr || (err == nil && got != c.want) {
			t.Errorf("calculate(%q) = %q, %v; want %q (error %v)", c.expr, got, err, c.want, c.wantErr)
		}
	}
}

// Expected values from CPython: repr(round(x, 2)) and repr(x).
func TestPyRound2AndRepr(t *testing.T) {
	for _, c := range []struct {
		x           float64
		round, repr string
	}{
		{0.04999999999999716, "0.05", "0.04999999999999716"},
		{1e16, "1e+16", "1e+16"},
		{1e-5, "0.0", "1e-05"},
		{0.0001, "0.0", "0.0001"},
		{123456.785, "123456.79", "123456.785"},
		{-2.5, "-2.5", "-2.5"},
		{5e-324, "0.0", "5e-324"},
		{198, "198.0", "198.0"},
	} {
		if got := pyRepr(pyRound2(c.x)); got != c.round {
			t.Errorf("repr(round(%v, 2)) = %q, want %q", c.x, got, c.round)
		}
		if got := pyRepr(c.x); got != c.repr {
			t.Errorf("repr(%v) = %q, want %q", c.x, got, c.repr)
		}
	}
}

func TestPyJSONString(t *testing.T) {
	// json.dumps("a\"\\\x01\x7f\u00e9\U0001F600") in CPython
	want := `"a\"\\\u0001\u007f\u00e9\ud83d\ude00"`
	if got := pyJSONString("a\"\\\x01\x7f\u00e9\U0001F600"); got != want {
		t.Errorf("pyJSONString = %s, want %s", got, want)
	}
}
