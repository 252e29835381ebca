package pyvalue

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"
)

var pointOne, pointTwo = 0.1, 0.2 // variables: constant 0.1+0.2 is exactly 0.3

func TestPyFloatRepr(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{100, "100.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {pointOne + pointTwo, "0.30000000000000004"},
		{1e-7, "1e-07"}, {2.5e16, "2.5e+16"}, {1e16, "1e+16"}, {9999999999999998, "9999999999999998.0"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {1234.5, "1234.5"}, {-1.5e-10, "-1.5e-10"},
		{1e22, "1e+22"}, {1.7976931348623157e308, "1.7976931348623157e+308"}, {5e-324, "5e-324"},
		{math.Inf(1), "inf"}, {math.Inf(-1), "-inf"}, {math.NaN(), "nan"}, {2.0 / 3, "0.6666666666666666"},
	} {
		if got := FloatRepr(tt.f); got != tt.want {
			t.Errorf("FloatRepr(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestPyJSONRoundTrip(t *testing.T) {
	// json.dumps(json.loads(in), ensure_ascii=False) as CPython 3.11 prints it.
	for _, tt := range []struct{ in, want string }{
		{`{"b":1,"a":[1.0,2,"x"],"c":{}}`, `{"b": 1, "a": [1.0, 2, "x"], "c": {}}`},
		{`{"a":1,"b":2,"a":3}`, `{"a": 3, "b": 2}`}, // first position, last value
		{`"\u6771\u4eac"`, `"東京"`},
		{`"tab\tnl\ncr\r\u0001\u007f\u2028"`, "\"tab\\tnl\\ncr\\r\\u0001\u007f\u2028\""},
		{`[NaN, Infinity, -Infinity, 1e400, -1e400, 1e-400]`, `[NaN, Infinity, -Infinity, Infinity, -Infinity, 0.0]`},
		{`[-0, -0.0, 1E2, 12345678901234567890123]`, `[0, -0.0, 100.0, 12345678901234567890123]`},
		{`[true, false, null, []]`, `[true, false, null, []]`},
		{" \t\n\r{\"k\" : \"v\"} \n", `{"k": "v"}`},
		{`"\ud83d\ude00"`, `"😀"`},
		{`"\ud800x"`, "\"\ufffdx\""},
	} {
		v, err := JSONLoads(tt.in)
		if err != nil {
			t.Errorf("JSONLoads(%q): %v", tt.in, err)
			continue
		}
		if got := JSONDumps(v); got != tt.want {
			t.Errorf("dumps(loads(%q)) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPyJSONLoadsRefuses(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"\ufeff{}", "unexpected UTF-8 BOM"},
		{`{"a": 1,}`, "expecting property name enclosed in double quotes at offset 8"},
		{`{'a': 1}`, "expecting property name enclosed in double quotes at offset 1"},
		{`{"a": True}`, "expecting value at offset 6"},
		{`{"a": 1}{"b": 2}`, "extra data at offset 8"},
		{"\"raw\nnewline\"", "invalid control character at offset 4"},
		{`01`, "extra data at offset 1"},
		{`1.`, "extra data at offset 1"},
		{`-`, "expecting value at offset 0"},
		{`-NaN`, "expecting value at offset 0"},
		{`"\x"`, `invalid \escape at offset 1`},
		{`"\u12"`, `invalid \uXXXX escape at offset 3`},
		{``, "expecting value at offset 0"},
		{"\xff", "invalid UTF-8"},
		{strings.Repeat("[", 2000), "nesting deeper than 990 at offset 991"},
		{strings.Repeat("1", 4301), "int literal of 4301 digits exceeds the limit of 4300 at offset 4301"},
	} {
		_, err := JSONLoads(tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("JSONLoads(%.40q) error = %v, want %q", tt.in, err, tt.want)
		}
	}
	// 4300 digits is still an int.
	if v, err := JSONLoads(strings.Repeat("7", 4300)); err != nil || v.Kind != Int || len(v.Int) != 4300 {
		t.Errorf("4300 digits: %v %v", v.Kind, err)
	}
	// The Strict dialect refuses what RFC 8259 refuses.
	for _, in := range []string{`NaN`, `[Infinity]`, `{"a": -Infinity}`, `1e400`} {
		if _, err := Decode(in, Options{Strict: true}); err == nil {
			t.Errorf("Decode(%q, Strict) accepted", in)
		}
	}
	if v, err := Decode(strings.Repeat("1", 5000), Options{Strict: true}); err != nil || v.Kind != Int {
		t.Errorf("Strict 5000 digits: %v", err)
	}
	if _, err := Decode(`{"a": {"b": 1, "b": 2}}`, Options{NoDupKeys: true}); err == nil || err.Error() != `duplicate key "b" at offset 15` {
		t.Errorf("NoDupKeys: %v", err)
	}
}

func TestPyStrAndRepr(t *testing.T) {
	load := func(s string) Value {
		v, err := JSONLoads(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct{ in, str, repr string }{
		{`"web_search"`, "web_search", `'web_search'`},
		{`"it's"`, "it's", `"it's"`},
		{`"it's \"x\""`, `it's "x"`, `'it\'s "x"'`},
		{`"a\tb\u0000\u00a0é\u200b😀"`, "a\tb\x00\u00a0é\u200b😀", `'a\tb\x00\xa0é\u200b😀'`},
		{`123`, "123", "123"}, {`1.5`, "1.5", "1.5"}, {`1e2`, "100.0", "100.0"},
		{`true`, "True", "True"}, {`null`, "None", "None"},
		{`[1, "a", {"k": null}]`, `[1, 'a', {'k': None}]`, `[1, 'a', {'k': None}]`},
	} {
		v := load(tt.in)
		if got := ToStr(v); got != tt.str {
			t.Errorf("str(%s) = %q, want %q", tt.in, got, tt.str)
		}
		if got := Repr(v); got != tt.repr {
			t.Errorf("repr(%s) = %q, want %q", tt.in, got, tt.repr)
		}
	}
}

func TestPyStripLowerLStrip(t *testing.T) {
	if got := Strip("\x1c\x1d\x1e\x1f \u00a0\u3000x\u2028\u0085"); got != "x" {
		t.Errorf("Strip = %q", got)
	}
	if got := Strip("\u200bx\ufeff"); got != "\u200bx\ufeff" {
		t.Errorf("Strip strips non-space: %q", got)
	}
	if got := strings.TrimSpace("\x1cx"); got != "\x1cx" {
		t.Errorf("TrimSpace(\\x1cx) = %q: the difference docs/ftrl.md names is gone", got)
	}
	for _, tt := range []struct{ in, want string }{
		{"İstanbul", "i\u0307stanbul"},
		{"ΟΔΟΣ", "οδος"}, {"Σ", "σ"}, {"ΣΑ", "σα"}, {"ΑΣ.", "ας."}, {"ΑΣ'Β", "ασ'β"}, {"Α'Σ", "α'ς"},
		{"ÅNGSTRÖM ß", "ångström ß"}, {"ＡＢＣ", "ａｂｃ"}, {"HeLLo", "hello"},
	} {
		if got := Lower(tt.in); got != tt.want {
			t.Errorf("Lower(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{"tool_call>{", "{"}, {"<tool_call> {", " {"}, {"call{", "{"}, {"act{", "{"}, {"_{", "{"}, {"<>{", "{"},
		{"json{", "json{"}, {"x{", "x{"}, {"tool-call>{", "-call>{"},
	} {
		if got := LStripSet(tt.in, "<tool_call>"); got != tt.want {
			t.Errorf("lstrip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestPythonOracle compares the Python layer with CPython 3.11.7's own
// results (testdata/pyoracle, made by its gen.py): str.lower, str.strip,
// repr and json.dumps of 3000 random strings over the sensitive code
// points, repr of 3000 random floats, and json.loads acceptance plus
// json.dumps of 4000 random JSON-like snippets.
func TestPythonOracle(t *testing.T) {
	type row struct {
		S, Lower, Strip, Repr, Dumps *string
		Frepr                        string
		Bits                         *uint64
	}
	n := 0
	forLines(t, "testdata/pyoracle/strings_floats.jsonl", func(line []byte) {
		var r row
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		n++
		if r.S != nil {
			s := *r.S
			if got := Lower(s); got != *r.Lower {
				t.Errorf("lower(%q) = %q, CPython %q", s, got, *r.Lower)
			}
			if got := Strip(s); got != *r.Strip {
				t.Errorf("strip(%q) = %q, CPython %q", s, got, *r.Strip)
			}
			if got := ReprStr(s); got != *r.Repr {
				t.Errorf("repr(%q) = %s, CPython %s", s, got, *r.Repr)
			}
			if got := JSONDumps(StrValue(s)); got != *r.Dumps {
				t.Errorf("dumps(%q) = %s, CPython %s", s, got, *r.Dumps)
			}
			return
		}
		if f := math.Float64frombits(*r.Bits); FloatRepr(f) != r.Frepr {
			t.Errorf("repr(%v) = %s, CPython %s", f, FloatRepr(f), r.Frepr)
		}
	})
	forLines(t, "testdata/pyoracle/json.jsonl", func(line []byte) {
		var r struct {
			S  string
			Ok bool
			D  *string
		}
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		n++
		v, err := JSONLoads(r.S)
		if (err == nil) != r.Ok {
			t.Errorf("loads(%q): error %v, CPython accepts: %v", r.S, err, r.Ok)
		} else if r.Ok && JSONDumps(v) != *r.D {
			t.Errorf("dumps(loads(%q)) = %s, CPython %s", r.S, JSONDumps(v), *r.D)
		}
	})
	if n < 9000 {
		t.Errorf("only %d oracle rows", n)
	}
}

func forLines(t *testing.T, path string, fn func([]byte)) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(l) > 0 {
			fn(l)
		}
	}
}

// FuzzJSON checks loads/dumps: whatever JSONLoads accepts, JSONDumps
// renders to text that loads again and dumps to the same text.
// Seed corpus: testdata/fuzz/FuzzJSON.
func FuzzJSON(f *testing.F) {
	f.Add(`{"a": [1, 2.5, NaN, "東"], "b": {"c": null}}`)
	f.Fuzz(func(t *testing.T, s string) {
		v, err := JSONLoads(s)
		if err != nil {
			return
		}
		out := JSONDumps(v)
		v2, err := JSONLoads(out)
		if err != nil {
			t.Fatalf("dumps output %q does not load: %v", out, err)
		}
		if out2 := JSONDumps(v2); out2 != out {
			t.Fatalf("not stable: %q -> %q", out, out2)
		}
	})
}
