package train

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"reflect"
	"slices"
	"strconv"
)

// Call is one tool call of an atomic turn: the tool's name, its JSON
// arguments as the policy wrote them, and the outcome (IsError, with the
// executor's ErrorKind). The built-in detectors look only at Tool and
// Arguments; the outcome is there for detectors that judge results.
type Call struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	IsError   bool            `json:"is_error"`
	ErrorKind string          `json:"error_kind"`
}

// ToolSpec is one tool offered to the policy: its name and its JSON Schema
// for the arguments object.
type ToolSpec struct {
	Name        string          `json:"name"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// Segment is one atomic turn — what a candidate did from a restored state —
// plus the context the detectors judge it in.
type Segment struct {
	Calls     []Call     `json:"calls"`     // the turn's tool calls, in order
	Content   string     `json:"content"`   // the assistant's text to the user, if any
	Tools     []ToolSpec `json:"tools"`     // the tools offered; authoritative: none offered means any call is hallucinated
	History   []Call     `json:"history"`   // calls of earlier turns of the episode, in order
	Forbidden []string   `json:"forbidden"` // path.Match globs over tool names the task forbids
	Stopped   bool       `json:"stopped"`   // the segment ended the episode before its atomic task was done
}

// Detector is a named undesirable-pattern test. Detect reports whether the
// pattern occurs in a segment and, if so, a short human-readable reason.
type Detector struct {
	Name   string
	Detect func(Segment) (bool, string)
}

// DefaultDetectors returns the built-in detectors, in this order:
// hallucinated_tool, schema_invalid_call, repeated_call,
// forbidden_resource, early_stop. Each call returns a fresh slice.
func DefaultDetectors() []Detector {
	return []Detector{
		{"hallucinated_tool", HallucinatedTool},
		{"schema_invalid_call", SchemaInvalidCall},
		{"repeated_call", RepeatedCall},
		{"forbidden_resource", ForbiddenResource},
		{"early_stop", EarlyStop},
	}
}

// Detect runs ds over seg and returns the names of the detectors that fired,
// in the order of ds (nil when none did). A Detector with a nil Detect
// never fires.
func Detect(seg Segment, ds []Detector) (patterns []string) {
	for _, d := range ds {
		if d.Detect == nil {
			continue
		}
		if ok, _ := d.Detect(seg); ok {
			patterns = append(patterns, d.Name)
		}
	}
	return patterns
}

// HallucinatedTool fires on the first call to a tool that is not in
// seg.Tools (names compared exactly).
func HallucinatedTool(seg Segment) (bool, string) {
	for i, c := range seg.Calls {
		if _, ok := offered(seg, c.Tool); !ok {
			return true, fmt.Sprintf("call %d: tool %q is not offered", i, c.Tool)
		}
	}
	return false, ""
}

func offered(seg Segment, name string) (ToolSpec, bool) {
	for _, t := range seg.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return ToolSpec{}, false
}

// SchemaInvalidCall fires on the first call to an offered tool whose
// arguments do not fit the tool's input schema. It is a small structural
// check, not a JSON Schema validator. Arguments must be a JSON object
// (empty Arguments count as {}). Against the schema's top level only:
//
//   - every name in "required" must be present;
//   - when "additionalProperties" is false, every argument must be named in
//     "properties";
//   - an argument whose "properties" entry has a "type" (a name or a list of
//     names) must have a JSON value of one of those types ("integer" means a
//     number with no fractional part; unknown type names are ignored).
//
// Nested schemas, $ref, combinators and formats are not checked. A schema
// that is empty or not a JSON object checks only that the arguments are an
// object. Calls to tools not offered are HallucinatedTool's concern.
func SchemaInvalidCall(seg Segment) (bool, string) {
	for i, c := range seg.Calls {
		spec, ok := offered(seg, c.Tool)
		if !ok {
			continue
		}
		if why := checkArgs(c.Arguments, spec.InputSchema); why != "" {
			return true, fmt.Sprintf("call %d (%s): %s", i, c.Tool, why)
		}
	}
	return false, ""
}

type topSchema struct {
	Required             []string                   `json:"required"`
	Properties           map[string]json.RawMessage `json:"properties"`
	AdditionalProperties json.RawMessage            `json:"additionalProperties"`
}

func checkArgs(raw, schema json.RawMessage) string {
	args := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(raw)) > 0 {
		if !json.Valid(raw) {
			return "arguments are not valid JSON"
		}
		if err := json.Unmarshal(raw, &args); err != nil || args == nil {
			return "arguments are not a JSON object"
		}
	}
	var s topSchema
	if len(bytes.TrimSpace(schema)) == 0 || json.Unmarshal(schema, &s) != nil {
		return ""
	}
	for _, name := range s.Required {
		if _, ok := args[name]; !ok {
			return fmt.Sprintf("missing required argument %q", name)
		}
	}
	closed := bytes.Equal(bytes.TrimSpace(s.AdditionalProperties), []byte("false"))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		prop, ok := s.Properties[name]
		if !ok {
			if closed {
				return fmt.Sprintf("argument %q is not in the schema", name)
			}
			continue
		}
		if types := propTypes(prop); len(types) > 0 && !hasType(args[name], types) {
			return fmt.Sprintf("argument %q is not of type %v", name, types)
		}
	}
	return ""
}

// propTypes returns the known type names of a property schema's "type".
func propTypes(prop json.RawMessage) []string {
	var p struct {
		Type json.RawMessage `json:"type"`
	}
	if json.Unmarshal(prop, &p) != nil || len(p.Type) == 0 {
		return nil
	}
	var names []string
	var one string
	if json.Unmarshal(p.Type, &one) == nil {
		names = []string{one}
	} else if json.Unmarshal(p.Type, &names) != nil {
		return nil
	}
	var known []string
	for _, n := range names {
		switch n {
		case "string", "number", "integer", "boolean", "object", "array", "null":
			known = append(known, n)
		}
	}
	if len(known) < len(names) {
		return nil // an unknown name could admit anything
	}
	return known
}

func hasType(v json.RawMessage, types []string) bool {
	v = bytes.TrimSpace(v)
	var kind string
	switch v[0] {
	case '"':
		kind = "string"
	case '{':
		kind = "object"
	case '[':
		kind = "array"
	case 't', 'f':
		kind = "boolean"
	case 'n':
		kind = "null"
	default:
		kind = "number"
	}
	for _, t := range types {
		if t == kind {
			return true
		}
		if t == "integer" && kind == "number" {
			f, err := strconv.ParseFloat(string(v), 64)
			if err == nil && f == math.Trunc(f) {
				return true
			}
		}
	}
	return false
}

// RepeatedCall fires when a call is identical to the call just before it:
// within seg.Calls, or the first call against the last call of seg.History.
// Identical means the same tool and JSON-equal arguments (object key order
// and white space do not matter, numbers compare as float64; empty
// arguments equal {}; arguments that are not valid JSON compare as trimmed
// bytes). The calls' outcomes are not considered: retrying a failed call
// unchanged is a repeat.
func RepeatedCall(seg Segment) (bool, string) {
	var prev *Call
	if n := len(seg.History); n > 0 {
		prev = &seg.History[n-1]
	}
	for i := range seg.Calls {
		c := &seg.Calls[i]
		if prev != nil && prev.Tool == c.Tool && jsonEqual(prev.Arguments, c.Arguments) {
			return true, fmt.Sprintf("call %d repeats the previous call to %s", i, c.Tool)
		}
		prev = c
	}
	return false, ""
}

func jsonEqual(a, b json.RawMessage) bool {
	a, b = bytes.TrimSpace(a), bytes.TrimSpace(b)
	if len(a) == 0 {
		a = []byte("{}")
	}
	if len(b) == 0 {
		b = []byte("{}")
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

// ForbiddenResource fires on the first call whose tool name matches an entry
// of seg.Forbidden as a path.Match glob ("delete_*" matches "delete_user";
// '/' is not matched by '*'). A malformed glob matches only the identical
// name.
func ForbiddenResource(seg Segment) (bool, string) {
	for i, c := range seg.Calls {
		for _, pat := range seg.Forbidden {
			ok, err := path.Match(pat, c.Tool)
			if err != nil {
				ok = pat == c.Tool
			}
			if ok {
				return true, fmt.Sprintf("call %d: tool %q is forbidden (%s)", i, c.Tool, pat)
			}
		}
	}
	return false, ""
}

// EarlyStop fires when the segment ended the episode before its atomic task
// was done (seg.Stopped).
func EarlyStop(seg Segment) (bool, string) {
	if seg.Stopped {
		return true, "ended the episode before the atomic task was done"
	}
	return false, ""
}
