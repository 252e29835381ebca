package paritytest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// FuzzArgumentScanner feeds the C module's JSON scanner raw requests (no
// host schema check in between). Properties: the module never traps and
// always answers JSON; it refuses exactly the requests encoding/json
// refuses ("malformed call request"); a string argument reaches SQL as
// encoding/json decodes it (escapes, surrogates, invalid UTF-8 as U+FFFD);
// an unknown member is refused with its name as Go's strict decoding names
// it. Corpus: testdata/fuzz/FuzzArgumentScanner.
func FuzzArgumentScanner(f *testing.F) {
	for _, s := range []string{
		`"#W2417020"`, `"\u00e9\ud83d\ude00"`, `"\ud800"`, "\"\xff\xfe\"", `"a\"b\\c\/\b\f\n\r\t"`,
		`5`, `null`, `[1,2]`, `{"a":[[[[]]]]}`, `"` + strings.Repeat("x", 70000) + `"`, `"unterminated`, `tru`,
		"\"\xed\xa0\x80\"", `1e999`, `-0.0e-0`,
	} {
		f.Add([]byte(s))
	}
	fxt := setup(f)
	g := newGuest(f, fxt.cWasm)
	f.Fuzz(func(t *testing.T, arg []byte) {
		req := append(append([]byte(`{"tool":"get_order_details","arguments":{"order_id":`), arg...), '}', '}')
		resp, err := g.request(req)
		if err != nil {
			t.Fatalf("trap on %q: %v", req, err)
		}
		text, isErr, internal := decodeAnswer(t, resp)
		if !json.Valid(req) {
			if !strings.HasPrefix(internal, "malformed call request: ") {
				t.Fatalf("invalid JSON %q not refused: %q", req, resp)
			}
			return
		}
		if internal != "" {
			if bytes.Count(arg, []byte("[")) > 900 || bytes.Count(arg, []byte("{")) > 900 {
				return // deeper than the module's JSON_MAX_DEPTH
			}
			t.Fatalf("valid request %q: internal error %q", req, internal)
		}
		var v any
		dec := json.NewDecoder(bytes.NewReader(arg))
		dec.UseNumber()
		dec.Decode(&v)
		s, isString := v.(string)
		switch {
		case isString:
			got, ok := g.sqlStringArg()
			if !ok || got != s {
				t.Fatalf("order_id %q reached SQL as %q (ok %v)", s, got, ok)
			}
			if !isErr || text != "Order not found" {
				t.Fatalf("want the tool error Order not found, got %q %v", text, isErr)
			}
		case v == nil:
			if !isErr || text != "Order not found" { // null: the zero value ""
				t.Fatalf("null order_id: %q %v", text, isErr)
			}
		default:
			if !isErr || !strings.HasPrefix(text, "invalid arguments: json: cannot unmarshal ") {
				t.Fatalf("%s: want invalid arguments, got %q %v", arg, text, isErr)
			}
		}
		// an unknown member, named by its decoded name
		if isString {
			req := append(append([]byte(`{"tool":"get_order_details","arguments":{`), arg...), []byte(`:1}}`)...)
			resp, err := g.request(req)
			if err != nil {
				t.Fatalf("trap on %q: %v", req, err)
			}
			text, isErr, _ := decodeAnswer(t, resp)
			if s == "order_id" {
				return
			}
			// Go names it with %q; the module writes JSON's quoting, the
			// same for printable ASCII (the host refuses unknown members
			// before the module, so only a direct caller sees either).
			want := "invalid arguments: json: unknown field "
			if plainASCII(s) {
				want += strconv.Quote(s)
			}
			if !isErr || !strings.HasPrefix(text, want) {
				t.Fatalf("unknown member %s: got %q, want %q", arg, text, want)
			}
		}
	})
}
