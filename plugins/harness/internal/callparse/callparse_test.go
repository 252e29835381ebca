package callparse

import "testing"

func TestEncode(t *testing.T) {
	cases := []struct{ name, args, want string }{
		{"get_order", `{"order_id": "A1"}`, `{"name": "get_order", "arguments": {"order_id":"A1"}}`},
		{"noop", "", `{"name": "noop", "arguments": {}}`},
		{"x<y>", `{"q":"a&b"}`, `{"name": "x<y>", "arguments": {"q":"a&b"}}`},
		{"bad", `{"order_id": "A1"`, `{"name": "bad", "arguments": "{\"order_id\": \"A1\""}`},
		{"list", `[1]`, `{"name": "list", "arguments": "[1]"}`},
	}
	for _, c := range cases {
		got := Encode(c.name, c.args)
		if got != c.want {
			t.Errorf("Encode(%q, %q) = %q, want %q", c.name, c.args, got, c.want)
		}
	}
	// A JSON object comes back through Decode as compact arguments.
	name, args, err := Decode(Encode("get_order", "{ \"order_id\" : \"A1\" }"))
	if err != nil || name != "get_order" || args != `{"order_id":"A1"}` {
		t.Errorf("Decode(Encode) = %q, %q, %v", name, args, err)
	}
}
