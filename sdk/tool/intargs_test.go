package tool

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type intArgs struct {
	N   int             `json:"n"`
	U   uint8           `json:"u,omitempty"`
	P   *int64          `json:"p,omitempty"`
	L   []int           `json:"l,omitempty"`
	Big uint64          `json:"big,omitempty"`
	F   float64         `json:"f,omitempty"`
	S   string          `json:"s,omitempty"`
	Raw json.RawMessage `json:"raw,omitempty"`
}

// TestIntegralNumbersForIntegerFields: the host's schema check accepts 1.0
// and 1e0 for an "integer" and passes the arguments on as written
// (docs/abi.md), so the SDK decodes them into integer fields; a number
// with a real fraction or out of range stays a tool error.
func TestIntegralNumbersForIntegerFields(t *testing.T) {
	useRegistry(t)
	Register("ints", "Echoes its integer arguments.", func(_ context.Context, in intArgs) (intArgs, error) { return in, nil })
	h := &fakeHost{}
	for _, tc := range []struct{ args, want string }{
		{`{"n":1.0}`, `{"n":1}`},
		{`{"n":1e0,"u":2.00,"p":-3.0e0,"l":[1e1,2,3.5e1]}`, `{"n":1,"u":2,"p":-3,"l":[10,2,35]}`},
		{`{"n":-0.0,"big":1.8446744073709551615e19}`, `{"n":0,"big":18446744073709551615}`},
		// Other numbers and strings are untouched, also on the retry.
		{`{"n":2.0,"f":1.5,"s":"1.0 and 2e3"}`, `{"n":2,"f":1.5,"s":"1.0 and 2e3"}`},
		{`{"n":7,"raw":[1.0,"x"]}`, `{"n":7,"raw":[1.0,"x"]}`},
	} {
		got := call(t, h, "ints", tc.args)
		var res struct {
			StructuredContent json.RawMessage `json:"structuredContent"`
			IsError           bool            `json:"isError"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || res.IsError {
			t.Errorf("%s: %s", tc.args, got)
			continue
		}
		var gotV, wantV map[string]any
		json.Unmarshal(res.StructuredContent, &gotV)
		json.Unmarshal([]byte(tc.want), &wantV)
		for k, v := range gotV { // drop the zero fields the echo writes
			if v == nil || v == float64(0) && k != "n" || v == "" {
				delete(gotV, k)
			}
		}
		if d := cmp.Diff(wantV, gotV); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.args, d)
		}
	}
	for _, bad := range []string{
		`{"n":1.5}`,
		`{"n":1e400}`,
		`{"u":-1.0,"n":1}`,
		`{"u":256.0,"n":1}`,
		`{"n":1.8446744073709551616e19}`,
		`{"n":2.0,"unknown":1}`,
	} {
		got := call(t, h, "ints", bad)
		var res struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		if err := json.Unmarshal([]byte(got), &res); err != nil || !res.IsError || len(res.Content) != 1 || len(res.Content[0].Text) < len("invalid arguments: ") || res.Content[0].Text[:len("invalid arguments: ")] != "invalid arguments: " {
			t.Errorf("%s: want an invalid-arguments tool error, got %s", bad, got)
		}
	}
}

func TestIntegralNumbersRewrite(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1.0,"b":"1.0","c":[2e2,-3.50e1,1.25],"d":"\"5.0\""}`: `{"a":1,"b":"1.0","c":[200,-35,1.25],"d":"\"5.0\""}`,
		`[0.0, 1E+2, 1e-0, 10e-1, 1e999, 123]`:                     `[0, 100, 1, 1, 1e999, 123]`,
	} {
		got, changed := integralNumbers([]byte(in))
		if string(got) != want || !changed {
			t.Errorf("%s: got %s (changed %v), want %s", in, got, changed, want)
		}
	}
	if got, changed := integralNumbers([]byte(`{"a":1,"b":1.5}`)); changed || string(got) != `{"a":1,"b":1.5}` {
		t.Errorf("nothing integral: got %s changed %v", got, changed)
	}
}
