package records

import (
	"encoding/json"
	"testing"
)

// appendPlain must write exactly what json.Marshal writes for every
// member type it handles, HTML characters, control bytes, invalid UTF-8
// and the JavaScript line separators included.
func TestAppendPlainIsJSONMarshal(t *testing.T) {
	strs := []string{"", "plain", `q"uote`, `back\slash`, "<b>&</b>", "tab\there", "nl\n", "\x00\x1f",
		"caf\u00e9", "\u2028\u2029", "bad\xffutf8", "#W2417020", "x\u007f"}
	var vals []any
	for _, s := range strs {
		s := s
		vals = append(vals, s, &s, []string{s, "b"}, Address{Address1: s, Address2: "a2", City: s, Country: "USA", State: "TX", Zip: "78701"},
			UserName{FirstName: s, LastName: "Doe"})
	}
	vals = append(vals, nil, (*string)(nil), []string(nil), []string{}, true, false)
	for _, v := range vals {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendPlain([]byte("prefix"), v)
		if !ok {
			t.Fatalf("%#v: not handled", v)
		}
		if string(got) != "prefix"+string(want) {
			t.Errorf("%#v: got %s, want %s", v, got[6:], want)
		}
	}
	if _, ok := appendPlain(nil, 1.5); ok {
		t.Error("a float64 must be left to json.Marshal")
	}
}

// FuzzAppendString checks appendString against json.Marshal on any string.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "<&>", "\xff", "\u2028", `"\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
