package model

import (
	"testing"
)

// FuzzDecodeResponse feeds arbitrary bodies to the chat-completions
// response decoder: it must never panic, and a body it accepts yields a
// response with an assistant message whose tool calls all have names.
func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"hi"}}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`))
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`))
	f.Add([]byte(`{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"reasoning_content":"r"},"token_ids":[1,2],"logprobs":{"content":[{"token":"a","logprob":-0.1}]}}]}`))
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`not json`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"arguments":{"x":1}}}]}}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := decodeResponse(body)
		if err != nil {
			return
		}
		if r == nil {
			t.Fatal("nil response without an error")
		}
		for _, tc := range r.Message.ToolCalls {
			if tc.Function.Name == "" {
				t.Fatalf("accepted a tool call without a name: %s", body)
			}
		}
		if len(r.Tokens) != len(r.Logprobs) {
			t.Fatalf("%d tokens, %d logprobs", len(r.Tokens), len(r.Logprobs))
		}
	})
}
