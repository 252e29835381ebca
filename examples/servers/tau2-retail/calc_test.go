package tau2retail_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
)

// calculateCases: the reference's calculate computed by CPython 3.11:
// str(round(float(eval(expression)), 2)) once the expression holds only
// "0123456789+-*/(). ", or the exception, mapped to the server's code
// (ZeroDivisionError division_by_zero, OverflowError out_of_range, any
// other invalid_expression).
var calculateCases = []struct {
	expr, want, code string
}{
	{"2 + 2", "4.0", ""},
	{"100 / 3", "33.33", ""},
	{"2 ** 8", "256.0", ""},
	{"(12.5 + 7.25) * 2", "39.5", ""},
	{"1/0", "", "division_by_zero"},
	{"1 // 0", "", "division_by_zero"},
	{"7 // 2", "3.0", ""},
	{"-7 // 2", "-4.0", ""},
	{"7.5 // 2", "3.0", ""},
	{"-7.5 // 2", "-4.0", ""},
	{"7 // -2.0", "-4.0", ""},
	{"2 ** -1", "0.5", ""},
	{"0 ** -1", "", "division_by_zero"},
	{"-2 ** 2", "-4.0", ""},
	{"(-2) ** 2", "4.0", ""},
	{"2 ** 3 ** 2", "512.0", ""},
	{"(-8) ** (1/3)", "", "invalid_expression"},
	{"10 ** 400", "", "out_of_range"},
	{"10 ** 400 // 10 ** 399", "10.0", ""},
	{"10 ** 30 / 3", "3.333333333333333e+29", ""},
	{"0.125", "0.12", ""},
	{"0.375", "0.38", ""},
	{"2.675", "2.67", ""},
	{"1.005", "1.0", ""},
	{"-0.001", "-0.0", ""},
	{"0.005", "0.01", ""},
	{"012", "", "invalid_expression"},
	{"00", "0.0", ""},
	{"01.5", "1.5", ""},
	{"1.", "1.0", ""},
	{".5", "0.5", ""},
	{"1..2", "", "invalid_expression"},
	{"1.2.3", "", "invalid_expression"},
	{"()", "", "invalid_expression"},
	{"(1)(2)", "", "invalid_expression"},
	{"1 2", "", "invalid_expression"},
	{"2 * * 3", "", "invalid_expression"},
	{"2 *** 3", "", "invalid_expression"},
	{"", "", "invalid_expression"},
	{"   ", "", "invalid_expression"},
	{"  3 + 4", "7.0", ""},
	{"1 - - 1", "2.0", ""},
	{"+-+1", "-1.0", ""},
	{"10.0 ** 400", "", "out_of_range"},
	{"(10.0 ** 200) * (10.0 ** 200)", "inf", ""},
	{"(10.0 ** 200) * (10.0 ** 200) - (10.0 ** 200) * (10.0 ** 200)", "nan", ""},
	{"0.1 + 0.2", "0.3", ""},
	{"abc", "", "invalid_expression"},
	{"1e5", "", "invalid_expression"},
	{"1319.43 - 302.67 + 271.89", "1288.65", ""},
	{"135.24 - 153.23", "-17.99", ""},
	{"2 ** 0.5", "1.41", ""},
	{"(-1) ** 0.5", "", "invalid_expression"},
	{"(-2.0) ** 3", "-8.0", ""},
	{"0 ** 0", "1.0", ""},
	{"0.0 ** 0", "1.0", ""},
	{"4 / 2", "2.0", ""},
	{"12345678901234567890123 / 7", "1.763668414462081e+21", ""},
	{"...", "", "invalid_expression"},
	{"(...)", "", "invalid_expression"},
	{"5 // 0.0", "", "division_by_zero"},
	{"-0.0", "-0.0", ""},
	{"1 / 3 * 3", "1.0", ""},
	{"99999999999999999999 * 1.0", "1e+20", ""},
	{"0.1 * 3", "0.3", ""},
	{"3 * 0.1 - 0.3", "0.0", ""},
	{"2 ** 1023 * 2", "", "out_of_range"},
	{"2.0 ** 1024", "", "out_of_range"},
	{"0 / -5", "-0.0", ""},
	{"-0 / 5", "0.0", ""},
	{"10 ** 320 / 10 ** 319", "10.0", ""},
	{"1 / 10 ** 320", "0.0", ""},
	{"10 ** 17 + 0.5", "1e+17", ""},
	{"123456789012345678 / 1", "1.2345678901234568e+17", ""},
	{"1234567.891", "1234567.89", ""},
	{"1e16", "", "invalid_expression"},
	{"12345678901234567.0", "1.2345678901234568e+16", ""},
	{"0.0001", "0.0", ""},
	{"0.00001 * 1000", "0.01", ""},
	{"2 ** 62 / 3", "1.5372286728091292e+18", ""},
	{"(2 ** 80 + 1) / 2 ** 27", "9007199254740992.0", ""},
	{"3 ** 100 / 7 ** 40", "80947580322982.52", ""},
	{"(10.0 ** 200) * (10.0 ** 200) // 2", "nan", ""},
	{"1 // 3.0", "0.0", ""},
	{"-1 // 3.0", "-1.0", ""},
	{"(-1) ** 3", "-1.0", ""},
	{"(-1) ** 1000001", "-1.0", ""},
	{"1 ** 100000000", "1.0", ""},
	{"2 ** 2 ** 2 ** 2", "65536.0", ""},
	{"1.5 ** 2.5", "2.76", ""},
	{"(1 + 2) * (3 + 4) / 5", "4.2", ""},
	{"8 / 3 // 1", "2.0", ""},
	{"10 // 3 / 2", "1.5", ""},
	{"0.5 // 0.1", "4.0", ""},
	{"1 / (2 ** 1100)", "0.0", ""},
	{"2 ** 1074 / 3 ** 600", "1.080096381988032e+37", ""},
	{"1 // (10 ** 400)", "0.0", ""},
	{"-(3)", "-3.0", ""},
	{"--3", "3.0", ""},
	{"(((1)))", "1.0", ""},
	{"1 + (2", "", "invalid_expression"},
	{"1 + 2)", "", "invalid_expression"},
	{"3 .5", "", "invalid_expression"},
	{". 5", "", "invalid_expression"},
	{"1 . 5", "", "invalid_expression"},
	{"5 * (", "", "invalid_expression"},
	{"7 ** -2", "0.02", ""},
	{"(-7) ** -3", "-0.0", ""},
	{"2 ** 1025 / 2 ** 1024", "2.0", ""},
	{"4.35 * 100", "435.0", ""},
	{"1.115", "1.11", ""},
	{"2.5 * 0.001", "0.0", ""},
	{"123456.785", "123456.79", ""},
	{"0.04999999999999716 + 0", "0.05", ""},
	{"2 ** 1024 / 3", "5.992310449541053e+307", ""},
	{"10 ** 308 * 10", "", "out_of_range"},
	{"(2 ** 1024 - 2 ** 970) * 1.0", "", "out_of_range"},
	{"(2 ** 1024 - 2 ** 971) * 1.0", "1.7976931348623157e+308", ""},
	{"2 ** 53 + 1 / 1", "9007199254740992.0", ""},
	{"(2 ** 53 + 1) / 1", "9007199254740992.0", ""},
	{"(2 ** 54 + 3) / 2", "9007199254740994.0", ""},
	{"-(2 ** 60 + 1) / -3", "3.843071682022823e+17", ""},
	{"1.0 // 0.1", "9.0", ""},
	{"-1e3", "", "invalid_expression"},
	{"1 -", "", "invalid_expression"},
	{"(2)**(3)", "8.0", ""},
	{"3 (4)", "", "invalid_expression"},
}

// TestCalculatePython checks program.star's Python arithmetic (exact ints,
// correctly rounded true division, round(x, 2), repr) against CPython.
func TestCalculatePython(t *testing.T) {
	mod := nativeServer(t)
	_, v0 := server(t)
	for _, c := range calculateCases {
		args, _ := json.Marshal(map[string]string{"expression": c.expr})
		s := &module.Session{Workspace: v0.Store().Fork(v0)}
		res, err := mod.Call(context.Background(), s, "calculate", args)
		if err != nil {
			t.Errorf("calculate(%q): %v", c.expr, err)
			continue
		}
		got := abi.FirstText(res.Content)
		if c.code == "" {
			if res.IsError || got != c.want {
				t.Errorf("calculate(%q) = %q (error %v), want %q", c.expr, got, res.IsError, c.want)
			}
			continue
		}
		if code := errorCode(t, res); !res.IsError || code != c.code {
			t.Errorf("calculate(%q) = %q (error %v, code %q), want error %q", c.expr, got, res.IsError, code, c.code)
		}
	}
}

// errorCode is a tool error's code (its structured content's "error").
func errorCode(t testing.TB, res *module.Result) string {
	t.Helper()
	var sc struct {
		Error string `json:"error"`
	}
	if len(res.StructuredContent) > 0 {
		if err := json.Unmarshal(res.StructuredContent, &sc); err != nil {
			t.Fatalf("structured content %s: %v", res.StructuredContent, err)
		}
	}
	return sc.Error
}
