package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/weft-dev/weft/core/model"
)

// render turns plan entry e, the k-th assistant turn, into a response in
// format f (already checked).
func render(f model.Format, e PlannedStep, k int) *model.Response {
	msg := model.Message{Role: model.RoleAssistant}
	malformed := e.Fault == FaultMalformedCall
	s := e.Step
	switch f {
	case model.FormatNative:
		if s.Tool == "" {
			msg.Content = s.Say
			return &model.Response{Message: msg, FinishReason: "stop"}
		}
		args := compact(s.Arguments)
		if malformed {
			args = args[:len(args)-1] // a cut-off object is never valid JSON
		}
		msg.ToolCalls = []model.ToolCall{{
			ID:       fmt.Sprintf("call_%d", k),
			Type:     "function",
			Function: model.FunctionCall{Name: s.Tool, Arguments: args},
		}}
		return &model.Response{Message: msg, FinishReason: "tool_calls"}

	case model.FormatHermes:
		if s.Tool == "" {
			msg.Content = s.Say
		} else {
			call := callJSON(s.Tool, s.Arguments)
			if malformed {
				call = call[:len(call)-1]
			}
			msg.Content = "<tool_call>\n" + call + "\n</tool_call>"
		}

	default: // model.FormatReAct
		var thought, action string
		switch {
		case s.Tool == "":
			thought = "I should reply to the user now."
			action = callJSON("respond", json.RawMessage(`{"content":`+jsonString(s.Say)+`}`))
		case malformed:
			thought = "I should call " + s.Tool + " next."
			action = pythonCall(s.Tool, s.Arguments)
		default:
			thought = "I should call " + s.Tool + " next."
			action = callJSON(s.Tool, s.Arguments)
		}
		msg.Content = "Thought:\n" + thought + "\nAction:\n" + action
	}
	return &model.Response{Message: msg, FinishReason: "stop"}
}

// compact is the arguments object as compact JSON text, keys in their
// original order.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "{}"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "{}" // New checked the arguments; unreachable
	}
	return b.String()
}

// callJSON is {"name": ..., "arguments": {...}} with Python json.dumps
// spacing, the shape Hermes and ReAct prompts show models.
func callJSON(name string, args json.RawMessage) string {
	return `{"name": ` + jsonString(name) + `, "arguments": ` + pySpaced(compact(args)) + `}`
}

// pySpaced adds a space after every ':' and ',' outside strings in compact
// JSON text, as Python's json.dumps does by default.
func pySpaced(c string) string {
	var b strings.Builder
	inString, escaped := false, false
	for i := 0; i < len(c); i++ {
		ch := c[i]
		b.WriteByte(ch)
		switch {
		case inString && escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case ch == '"':
			inString = !inString
		case !inString && (ch == ':' || ch == ','):
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// pythonCall renders a call as name(key=value, ...), the kind of
// function-call text models write instead of the JSON action; values are
// JSON.
func pythonCall(name string, args json.RawMessage) string {
	pairs, _ := objectPairs(args)
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p.key + "=" + pySpaced(compact(p.val))
	}
	return name + "(" + strings.Join(parts, ", ") + ")"
}

// jsonString encodes s as a JSON string without HTML escaping.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
