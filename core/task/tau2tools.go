package task

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Tau2Tools is a tau2 domain's tool set as the task conversion needs it:
// tool name -> read-only (the tool leaves the state unchanged). It comes
// from the domain's data, never from a list in weft: a tau2 tools.json
// (ReadTau2Tools; tau2-bench's own tool definitions carry "read_only") or
// the manifests of the domain's tool modules (a tool is read-only when it
// has MCP's readOnlyHint annotation).
type Tau2Tools map[string]bool

// Names returns the tool names, sorted.
func (t Tau2Tools) Names() []string {
	out := make([]string, 0, len(t))
	for n := range t {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// tau2ToolJSON is one entry of a tau2 tools.json: tau2-bench's Tool
// (name, description, parameters as JSON Schema) plus read_only (not
// mutates_state) and tool_type ("read", "write" or "generic"). Only name
// and read_only are used; the other keys are allowed and ignored.
type tau2ToolJSON struct {
	Name     *string `json:"name"`
	ReadOnly *bool   `json:"read_only"`
}

// ReadTau2Tools decodes a tau2 tools.json: a JSON list of tool objects,
// each with at least "name" (a non-empty string, unique in the list) and
// "read_only" (a bool), e.g.
//
//	[{"name": "get_user_details", "read_only": true, "tool_type": "read", ...},
//	 {"name": "book_reservation", "read_only": false, "tool_type": "write", ...}]
//
// Errors name the entry (0-based) and the key at fault; an empty list is an
// error (a domain without tools has no tasks to convert).
func ReadTau2Tools(r io.Reader) (Tau2Tools, error) {
	var list []json.RawMessage
	dec := json.NewDecoder(r)
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("tau2 tools: not a JSON list of tools: %w", err)
	}
	if dec.More() {
		return nil, errors.New("tau2 tools: data after the list")
	}
	if len(list) == 0 {
		return nil, errors.New("tau2 tools: the list is empty")
	}
	out := Tau2Tools{}
	for i, raw := range list {
		var t tau2ToolJSON
		if err := json.Unmarshal(raw, &t); err != nil {
			return nil, fmt.Errorf("tau2 tools: tool %d: %w", i, err)
		}
		switch {
		case t.Name == nil || *t.Name == "":
			return nil, fmt.Errorf("tau2 tools: tool %d: missing or empty \"name\"", i)
		case t.ReadOnly == nil:
			return nil, fmt.Errorf("tau2 tools: tool %d (%s): missing \"read_only\"", i, *t.Name)
		}
		if _, dup := out[*t.Name]; dup {
			return nil, fmt.Errorf("tau2 tools: tool %d: duplicate name %q", i, *t.Name)
		}
		out[*t.Name] = *t.ReadOnly
	}
	return out, nil
}

// LoadTau2Tools reads a tau2 tools.json file (ReadTau2Tools); errors start
// with the path.
func LoadTau2Tools(path string) (Tau2Tools, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := ReadTau2Tools(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}
