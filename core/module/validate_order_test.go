package module

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestValidateArgsDeterministicTie: two members fail at the same depth; the
// validator walks the object in Go map order, so without a stable tie-break
// the refusal named either one from call to call. Every call must name the
// earliest location (/a before /b, /items/2 before /items/10).
func TestValidateArgsDeterministicTie(t *testing.T) {
	cases := []struct {
		name, schema, args, wantPointer, wantMessage string
	}{
		{
			name:        "two members",
			schema:      `{"type":"object","properties":{"b":{"type":"integer"},"a":{"type":"string"},"c":{"type":"boolean"}}}`,
			args:        `{"c":1,"b":"x","a":2}`,
			wantPointer: "/a",
			wantMessage: "got number, want string",
		},
		{
			name:        "array indexes numerically",
			schema:      `{"type":"object","properties":{"items":{"type":"array","items":{"type":"integer","minimum":0}}}}`,
			args:        `{"items":[0,1,-2,3,4,5,6,7,8,9,-10]}`,
			wantPointer: "/items/2",
			wantMessage: "minimum: got -2, want 0",
		},
		{
			name:        "additional properties listed sorted",
			schema:      `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`,
			args:        `{"z":1,"m":2,"b":3,"a":"ok"}`,
			wantPointer: "",
			wantMessage: "additional properties 'b', 'm', 'z' not allowed",
		},
		{
			name:        "missing before extra at one location",
			schema:      `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
			args:        `{"txt":"x"}`,
			wantPointer: "",
			wantMessage: "missing property 'text'",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := compileSchema("t", json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			seen := map[string]int{}
			for range 200 {
				err := validateArgs("t", s, json.RawMessage(tc.args))
				var ae *ArgumentError
				if !errors.As(err, &ae) {
					t.Fatalf("err = %v, want *ArgumentError", err)
				}
				if !errors.Is(err, ErrInvalidArguments) {
					t.Fatalf("err = %v, want ErrInvalidArguments", err)
				}
				seen[ae.Pointer+" | "+ae.Message]++
			}
			want := tc.wantPointer + " | " + tc.wantMessage
			if len(seen) != 1 || seen[want] != 200 {
				t.Fatalf("200 calls gave %v, want only %q", seen, want)
			}
		})
	}
}
