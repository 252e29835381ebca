package train

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func call(tool, args string) Call { return Call{Tool: tool, Arguments: json.RawMessage(args)} }

var testTools = []ToolSpec{
	{Name: "get_user", InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {"user_id": {"type": "string"}, "verbose": {"type": "boolean"}},
		"required": ["user_id"],
		"additionalProperties": false}`)},
	{Name: "set_qty", InputSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"qty": {"type": "integer"},
			"price": {"type": "number"},
			"tags": {"type": "array"},
			"meta": {"type": ["object", "null"]},
			"any": {},
			"odd": {"type": "decimal"}
		}}`)},
	{Name: "ping"},
	{Name: "broken", InputSchema: json.RawMessage(`{not json`)},
}

type detCase struct {
	name    string
	seg     Segment
	want    bool
	wantWhy string
}

func runDetector(t *testing.T, f func(Segment) (bool, string), cases []detCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got, why := f(tt.seg)
			if got != tt.want || why != tt.wantWhy {
				t.Errorf("got (%v, %q), want (%v, %q)", got, why, tt.want, tt.wantWhy)
			}
		})
	}
}

func TestHallucinatedTool(t *testing.T) {
	runDetector(t, HallucinatedTool, []detCase{
		{"no calls", Segment{Tools: testTools, Content: "hi"}, false, ""},
		{"offered", Segment{Tools: testTools, Calls: []Call{call("get_user", `{}`), call("ping", ``)}}, false, ""},
		{"not offered", Segment{Tools: testTools, Calls: []Call{call("ping", ``), call("get_users", `{}`)}}, true, `call 1: tool "get_users" is not offered`},
		{"case differs", Segment{Tools: testTools, Calls: []Call{call("Ping", ``)}}, true, `call 0: tool "Ping" is not offered`},
		{"no tools offered", Segment{Calls: []Call{call("ping", ``)}}, true, `call 0: tool "ping" is not offered`},
	})
}

func TestSchemaInvalidCall(t *testing.T) {
	seg := func(cs ...Call) Segment { return Segment{Tools: testTools, Calls: cs} }
	runDetector(t, SchemaInvalidCall, []detCase{
		{"valid", seg(call("get_user", `{"user_id": "u1", "verbose": true}`)), false, ""},
		{"valid with white space", seg(call("get_user", " {\"user_id\":\"u1\"} \n")), false, ""},
		{"not JSON", seg(call("get_user", `{"user_id": "u1"`)), true, `call 0 (get_user): arguments are not valid JSON`},
		{"array", seg(call("get_user", `["u1"]`)), true, `call 0 (get_user): arguments are not a JSON object`},
		{"null", seg(call("get_user", `null`)), true, `call 0 (get_user): arguments are not a JSON object`},
		{"string", seg(call("ping", `"x"`)), true, `call 0 (ping): arguments are not a JSON object`},
		{"missing required", seg(call("get_user", `{"verbose": false}`)), true, `call 0 (get_user): missing required argument "user_id"`},
		{"empty args, required", seg(call("get_user", ``)), true, `call 0 (get_user): missing required argument "user_id"`},
		{"extra when closed", seg(call("get_user", `{"user_id": "u1", "zz": 1, "aa": 2}`)), true, `call 0 (get_user): argument "aa" is not in the schema`},
		{"extra when open", seg(call("set_qty", `{"other": 1}`)), false, ""},
		{"wrong type string", seg(call("get_user", `{"user_id": 7}`)), true, `call 0 (get_user): argument "user_id" is not of type [string]`},
		{"wrong type boolean", seg(call("get_user", `{"user_id": "u", "verbose": "yes"}`)), true, `call 0 (get_user): argument "verbose" is not of type [boolean]`},
		{"integer ok", seg(call("set_qty", `{"qty": 3, "price": 2.5}`)), false, ""},
		{"integer 2.0 ok", seg(call("set_qty", `{"qty": 2.0, "price": 1e2}`)), false, ""},
		{"integer fraction", seg(call("set_qty", `{"qty": 2.5}`)), true, `call 0 (set_qty): argument "qty" is not of type [integer]`},
		{"number as string", seg(call("set_qty", `{"price": "2.5"}`)), true, `call 0 (set_qty): argument "price" is not of type [number]`},
		{"array ok", seg(call("set_qty", `{"tags": []}`)), false, ""},
		{"array wrong", seg(call("set_qty", `{"tags": {}}`)), true, `call 0 (set_qty): argument "tags" is not of type [array]`},
		{"type list null", seg(call("set_qty", `{"meta": null}`)), false, ""},
		{"type list object", seg(call("set_qty", `{"meta": {"a": 1}}`)), false, ""},
		{"type list miss", seg(call("set_qty", `{"meta": [1]}`)), true, `call 0 (set_qty): argument "meta" is not of type [object null]`},
		{"untyped property", seg(call("set_qty", `{"any": [1, "x"]}`)), false, ""},
		{"unknown type name ignored", seg(call("set_qty", `{"odd": "1.5"}`)), false, ""},
		{"no schema", seg(call("ping", `{"x": 1}`)), false, ""},
		{"malformed schema", seg(call("broken", `{"x": 1}`)), false, ""},
		{"malformed schema, bad args", seg(call("broken", `[]`)), true, `call 0 (broken): arguments are not a JSON object`},
		{"hallucinated tool skipped", seg(call("nope", `[]`)), false, ""},
		{"second call", seg(call("ping", ``), call("get_user", `{}`)), true, `call 1 (get_user): missing required argument "user_id"`},
	})
}

func TestRepeatedCall(t *testing.T) {
	runDetector(t, RepeatedCall, []detCase{
		{"none", Segment{}, false, ""},
		{"distinct", Segment{Calls: []Call{call("a", `{"x":1}`), call("a", `{"x":2}`), call("b", `{"x":2}`)}}, false, ""},
		{"same in segment", Segment{Calls: []Call{call("a", `{"x":1}`), call("a", `{"x":1}`)}}, true, "call 1 repeats the previous call to a"},
		{"key order and spacing", Segment{Calls: []Call{call("a", `{"x":1,"y":[1,2]}`), call("a", ` { "y": [1, 2], "x": 1.0 } `)}}, true, "call 1 repeats the previous call to a"},
		{"array order matters", Segment{Calls: []Call{call("a", `{"y":[1,2]}`), call("a", `{"y":[2,1]}`)}}, false, ""},
		{"empty equals {}", Segment{Calls: []Call{call("a", ``), call("a", `{}`)}}, true, "call 1 repeats the previous call to a"},
		{"not adjacent", Segment{Calls: []Call{call("a", `{}`), call("b", `{}`), call("a", `{}`)}}, false, ""},
		{"against last of history", Segment{History: []Call{call("a", `{}`), call("b", `{"k":"v"}`)}, Calls: []Call{call("b", `{"k": "v"}`)}}, true, "call 0 repeats the previous call to b"},
		{"only last of history", Segment{History: []Call{call("b", `{"k":"v"}`), call("a", `{}`)}, Calls: []Call{call("b", `{"k":"v"}`)}}, false, ""},
		{"failed call retried", Segment{History: []Call{{Tool: "a", Arguments: json.RawMessage(`{}`), IsError: true, ErrorKind: "tool_error"}}, Calls: []Call{call("a", `{}`)}}, true, "call 0 repeats the previous call to a"},
		{"invalid JSON identical", Segment{Calls: []Call{call("a", `{x`), call("a", ` {x`)}}, true, "call 1 repeats the previous call to a"},
		{"invalid JSON differs", Segment{Calls: []Call{call("a", `{x`), call("a", `{y`)}}, false, ""},
	})
}

func TestForbiddenResource(t *testing.T) {
	runDetector(t, ForbiddenResource, []detCase{
		{"none forbidden", Segment{Calls: []Call{call("delete_user", `{}`)}}, false, ""},
		{"exact", Segment{Forbidden: []string{"drop_table"}, Calls: []Call{call("get", `{}`), call("drop_table", `{}`)}}, true, `call 1: tool "drop_table" is forbidden (drop_table)`},
		{"glob", Segment{Forbidden: []string{"x", "delete_*"}, Calls: []Call{call("delete_user", `{}`)}}, true, `call 0: tool "delete_user" is forbidden (delete_*)`},
		{"glob miss", Segment{Forbidden: []string{"delete_*"}, Calls: []Call{call("get_user", `{}`)}}, false, ""},
		{"star stops at slash", Segment{Forbidden: []string{"fs*"}, Calls: []Call{call("fs/rm", `{}`)}}, false, ""},
		{"malformed glob exact", Segment{Forbidden: []string{"bad["}, Calls: []Call{call("bad[", `{}`)}}, true, `call 0: tool "bad[" is forbidden (bad[)`},
		{"malformed glob other", Segment{Forbidden: []string{"bad["}, Calls: []Call{call("bad", `{}`)}}, false, ""},
	})
}

func TestEarlyStop(t *testing.T) {
	runDetector(t, EarlyStop, []detCase{
		{"stopped", Segment{Stopped: true}, true, "ended the episode before the atomic task was done"},
		{"not stopped", Segment{Content: "done"}, false, ""},
	})
}

func TestDetect(t *testing.T) {
	ds := DefaultDetectors()
	var names []string
	for _, d := range ds {
		names = append(names, d.Name)
	}
	if diff := cmp.Diff([]string{"hallucinated_tool", "schema_invalid_call", "repeated_call", "forbidden_resource", "early_stop"}, names); diff != "" {
		t.Errorf("DefaultDetectors names (-want +got):\n%s", diff)
	}
	tests := []struct {
		name string
		seg  Segment
		want []string
	}{
		{"clean", Segment{Tools: testTools, Calls: []Call{call("get_user", `{"user_id":"u"}`)}}, nil},
		{"text only", Segment{Tools: testTools, Content: "done"}, nil},
		{"several", Segment{
			Tools:     testTools,
			History:   []Call{call("get_user", `{"user_id":"u"}`)},
			Calls:     []Call{call("get_user", `{"user_id":"u"}`), call("rm_user", `{}`)},
			Forbidden: []string{"rm_*"},
			Stopped:   true,
		}, []string{"hallucinated_tool", "repeated_call", "forbidden_resource", "early_stop"}},
		{"schema only", Segment{Tools: testTools, Calls: []Call{call("get_user", `{}`)}}, []string{"schema_invalid_call"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Detect(tt.seg, ds)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	custom := []Detector{
		{Name: "nil"},
		{Name: "says_hi", Detect: func(s Segment) (bool, string) { return s.Content == "hi", "greets" }},
	}
	if diff := cmp.Diff([]string{"says_hi"}, Detect(Segment{Content: "hi"}, custom)); diff != "" {
		t.Errorf("custom (-want +got):\n%s", diff)
	}
}
