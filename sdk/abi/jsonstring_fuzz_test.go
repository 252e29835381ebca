package abi

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzAppendJSONString: AppendJSONString writes what encoding/json writes,
// with and without HTML escaping.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `{"a":"b\\c"}`, "<a&b>", "\x00\x1f\b\f\n\r\t", "é\u2028\u2029😀", "\xff\xc3(", "\u007f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString([]byte("x"), s, true); string(got) != "x"+string(want) {
			t.Fatalf("%q escapeHTML: got %s, json.Marshal %s", s, got, want)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		want = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if got := AppendJSONString(nil, s, false); string(got) != string(want) {
			t.Fatalf("%q: got %s, Encoder without HTML escaping %s", s, got, want)
		}
	})
}
