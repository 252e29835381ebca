package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
)

// compactRef is what compactJSON must report: b is valid JSON and
// encoding/json's compaction leaves it unchanged.
func compactRef(b []byte) bool {
	if !json.Valid(b) {
		return false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return false
	}
	return bytes.Equal(buf.Bytes(), b)
}

var compactSeeds = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+3`, `1E-2`, `true`, `false`, `null`, `{"a":[1,2,{"b":null}]}`,
	`{"a":1,}`, `[1,]`, `01`, `1.`, `-`, `.5`, `1e`, `{"a" :1}`, `{ }`, ` 1`, "1\n", `"\u00e9\uD834"`,
	`{"a":1]`, `[1}`, `[1`, `{"a":1`, `[[1],{"a":[2]}]`, `{"a":{"b":[]},"c":[{}]}`, `[1,,2]`, `{"a":1,,"b":2}`,
	`"\x"`, `"\u12"`, "\"\x01\"", "\"\xff\"", `{"a":1}{}`, `tru`, `nul`, `[1 2]`, `{"a"}`, `{1:2}`, `"\/\b\f\n\r\t\"\\"`,
}

func TestCompactJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range compactSeeds {
		if got, want := compactJSON([]byte(s)), compactRef([]byte(s)); got != want {
			t.Errorf("compactJSON(%q) = %v, want %v", s, got, want)
		}
	}
	deep := bytes.Repeat([]byte("["), maxCompactDepth+2)
	deep = append(deep, bytes.Repeat([]byte("]"), maxCompactDepth+2)...)
	if compactJSON(deep) {
		t.Error("a value nested past maxCompactDepth must take encoding/json's path")
	}
}

// TestCompactJSONSeparators: after a member or an element only ',' or the
// container's own closing byte may follow.
func TestCompactJSONSeparators(t *testing.T) {
	for s, want := range map[string]bool{
		`[[1],{"a":[2]}]`: true, `{"a":{"b":[]},"c":[{}]}`: true, `[1,2]`: true, `{"a":1,"b":2}`: true,
		`{"a":1]`: false, `[1}`: false, `[1`: false, `{"a":1`: false, `[1,,2]`: false, `{"a":1,,"b":2}`: false,
		`[1;2]`: false, `[1,2]]`: false,
	} {
		if got := compactJSON([]byte(s)); got != want {
			t.Errorf("compactJSON(%q) = %v, want %v", s, got, want)
		}
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, s := range compactSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > maxCompactDepth {
			return
		}
		if got, want := compactJSON(b), compactRef(b); got != want {
			t.Fatalf("compactJSON(%q) = %v, want %v", b, got, want)
		}
	})
}

type rawMarshaler struct {
	out string
	err error
}

func (r *rawMarshaler) MarshalJSON() ([]byte, error) { return []byte(r.out), r.err }

type valMarshaler string

func (v valMarshaler) MarshalJSON() ([]byte, error) { return []byte(v), nil }

// marshalResult is marshal, byte for byte and error for error, whatever a
// MarshalJSON writes.
func TestMarshalResultIsMarshal(t *testing.T) {
	vals := []any{
		&rawMarshaler{out: `{"a":"<b>","n":[1,2.5]}`},
		&rawMarshaler{out: `{ "a" : 1 }`},    // whitespace: compacted by encoding/json
		&rawMarshaler{out: `{"a":`},          // invalid: encoding/json's error
		&rawMarshaler{err: errors.New("no")}, // MarshalJSON's error
		(*rawMarshaler)(nil),                 // nil pointer: null
		valMarshaler(`["x"]`),
		map[string]int{"b": 1, "a": 2},
		struct{ A string }{"<&>"},
	}
	for _, v := range vals {
		want, werr := marshal(v)
		got, gerr := marshalResult(v)
		if string(got) != string(want) || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Errorf("%#v: marshalResult = %s, %v; marshal = %s, %v", v, got, gerr, want, werr)
		}
	}
}

var requestSeeds = []string{
	`{"tool":"get_order_details","arguments":{"order_id":"#W2417020"}}`,
	`{"tool":"t","arguments":null}`, `{"tool":"t","arguments":{}}`, `{"tool":"","arguments":[]}`,
	`{"tool":"t","arguments": {}}`, `{"tool":"t","arguments":{},"tool":"u"}`, `{"tool":"t\u0041","arguments":{}}`,
	`{"tool":"t","arguments":{}`, `{"tool":"t","arguments":}`, `{"TOOL":"t","arguments":{}}`,
	`{"tool":"t","arguments":{},"program":{"digest":"x"}}`, `{"tool":"caf` + "\u00e9" + `","arguments":{}}`,
	`{"tool":"t","arguments":{"a":[1,{"b":"<\"x\">"}]}}`, `{"tool":"t","arguments":1e5}`,
}

// parseCallRequest decodes what json.Unmarshal decodes, and fails where it
// fails.
func TestParseCallRequestIsUnmarshal(t *testing.T) {
	for _, s := range requestSeeds {
		checkParseCallRequest(t, []byte(s))
	}
}

func FuzzParseCallRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) > maxCompactDepth {
			return
		}
		checkParseCallRequest(t, b)
	})
}

func checkParseCallRequest(t *testing.T, b []byte) {
	t.Helper()
	var want, got abi.CallRequest
	werr := json.Unmarshal(b, &want)
	gerr := parseCallRequest(b, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: parseCallRequest error %v, json.Unmarshal %v", b, gerr, werr)
	}
	if werr != nil {
		return
	}
	wj, _ := json.Marshal(want)
	gj, _ := json.Marshal(got)
	if got.Tool != want.Tool || string(got.Arguments) != string(want.Arguments) || string(gj) != string(wj) {
		t.Fatalf("%q: got %+v, want %+v", b, got, want)
	}
}
