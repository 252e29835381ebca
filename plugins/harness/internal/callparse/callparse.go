package callparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Decode reads the first JSON value of s as a call object and returns its
// name and its arguments as compact JSON object text ("{}" when absent or
// null). s may start with a ``` fence (with or without a language tag)
// and may have any text after the object. Errors: no JSON object, invalid
// JSON, a missing or empty or non-string "name", arguments that are
// neither an object nor a string holding one.
func Decode(s string) (name, args string, err error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "```"); ok {
		// Drop the fence line (its language tag).
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[i+1:]
		} else {
			rest = strings.TrimLeft(rest, "abcdefghijklmnopqrstuvwxyzJSON")
		}
		s = strings.TrimSpace(rest)
	}
	if !strings.HasPrefix(s, "{") {
		return "", "", errors.New("expected a JSON object {\"name\": ..., \"arguments\": {...}}")
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]json.RawMessage
	if err := dec.Decode(&obj); err != nil {
		return "", "", fmt.Errorf("invalid JSON: %v", err)
	}
	rawName, ok := obj["name"]
	if !ok {
		return "", "", errors.New(`the call object has no "name"`)
	}
	if err := json.Unmarshal(rawName, &name); err != nil || strings.TrimSpace(name) == "" {
		return "", "", errors.New(`"name" must be a non-empty string`)
	}
	name = strings.TrimSpace(name)
	rawArgs, ok := obj["arguments"]
	if !ok {
		rawArgs = obj["parameters"]
	}
	args, err = Arguments(rawArgs)
	if err != nil {
		return "", "", fmt.Errorf("call %q: %v", name, err)
	}
	return name, args, nil
}

// Arguments normalizes a call's raw arguments value to compact JSON
// object text: absent or null is "{}", an object is compacted, a string
// must hold a JSON object (the arguments-as-a-string mistake).
func Arguments(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}", nil
	}
	if raw[0] == '"' {
		var inner string
		if err := json.Unmarshal(raw, &inner); err != nil {
			return "", fmt.Errorf("arguments: %v", err)
		}
		inner = strings.TrimSpace(inner)
		if inner == "" {
			return "{}", nil
		}
		if !strings.HasPrefix(inner, "{") || !json.Valid([]byte(inner)) {
			return "", errors.New("arguments must be a JSON object (got a string that is not one)")
		}
		raw = []byte(inner)
	}
	if raw[0] != '{' {
		return "", errors.New("arguments must be a JSON object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", fmt.Errorf("arguments: %v", err)
	}
	return buf.String(), nil
}

// Encode writes a call as the JSON object the text protocols ask for:
// {"name": <name>, "arguments": <args>} with name a JSON string (no HTML
// escaping) and args compacted when they are a JSON object, "{}" when
// empty, and otherwise (arguments that are not a JSON object, as a native
// model may write them) as a JSON string holding them. Decode reads the
// result back to name and args whenever args is a JSON object.
func Encode(name, args string) string {
	a := strings.TrimSpace(args)
	var buf bytes.Buffer
	switch {
	case a == "":
		buf.WriteString("{}")
	case strings.HasPrefix(a, "{") && json.Valid([]byte(a)):
		_ = json.Compact(&buf, []byte(a)) // valid JSON: cannot fail
	default:
		buf.WriteString(jsonString(args))
	}
	return `{"name": ` + jsonString(name) + `, "arguments": ` + buf.String() + `}`
}

// jsonString is s as a JSON string without HTML escaping.
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}
