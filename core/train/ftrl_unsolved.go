package train

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/sdk/pyvalue"
)

// UnsolvedTool is one entry of an FTRL unsolved_set: the answers still
// expected from the outputs of calls to Tool.
type UnsolvedTool struct {
	Tool    string
	Answers []string
}

// UnsolvedSet is FTRL's unsolved_set (a sample's JSON object tool name ->
// list of expected answers, one per sub-question that tool answers), in the
// object's key order. Tool names are distinct. The zero value is the empty
// set. It marshals to and from that JSON object; unmarshalling refuses
// duplicate tool names and anything that is not an object of string lists.
type UnsolvedSet []UnsolvedTool

// Count is FTRL's unsolved_cnt: the number of expected answers over all
// tools (a repeated answer counts each time).
func (u UnsolvedSet) Count() int {
	n := 0
	for _, t := range u {
		n += len(t.Answers)
	}
	return n
}

// Clone returns a deep copy (FTRL's reward mutates its argument; weft never
// mutates the caller's set).
func (u UnsolvedSet) Clone() UnsolvedSet {
	if u == nil {
		return nil
	}
	out := make(UnsolvedSet, len(u))
	for i, t := range u {
		out[i] = UnsolvedTool{Tool: t.Tool, Answers: append([]string{}, t.Answers...)}
	}
	return out
}

// index returns the position of tool, or -1.
func (u UnsolvedSet) index(tool string) int {
	for i, t := range u {
		if t.Tool == tool {
			return i
		}
	}
	return -1
}

// Answers returns the answers still expected from tool (nil when tool has
// no entry).
func (u UnsolvedSet) Answers(tool string) []string {
	if i := u.index(tool); i >= 0 {
		return u[i].Answers
	}
	return nil
}

// Equal reports whether u and v hold the same tools with the same answer
// lists, in the same order.
func (u UnsolvedSet) Equal(v UnsolvedSet) bool {
	if len(u) != len(v) {
		return false
	}
	for i := range u {
		if u[i].Tool != v[i].Tool || len(u[i].Answers) != len(v[i].Answers) {
			return false
		}
		for j := range u[i].Answers {
			if u[i].Answers[j] != v[i].Answers[j] {
				return false
			}
		}
	}
	return true
}

// Validate reports a repeated tool name.
func (u UnsolvedSet) Validate() error {
	seen := make(map[string]bool, len(u))
	for _, t := range u {
		if seen[t.Tool] {
			return fmt.Errorf("unsolved_set: tool %q appears twice", t.Tool)
		}
		seen[t.Tool] = true
	}
	return nil
}

// MarshalJSON writes the set as FTRL stores it: json.dumps(unsolved_set,
// ensure_ascii=False), so the bytes equal FTRL's (", " and ": "
// separators, raw non-ASCII).
func (u UnsolvedSet) MarshalJSON() ([]byte, error) {
	return []byte(pyvalue.JSONDumps(u.pyValue())), nil
}

func (u UnsolvedSet) pyValue() pyvalue.Value {
	v := pyvalue.Value{Kind: pyvalue.Dict, Dict: make([]pyvalue.Item, 0, len(u))}
	for _, t := range u {
		l := pyvalue.Value{Kind: pyvalue.List, List: make([]pyvalue.Value, 0, len(t.Answers))}
		for _, a := range t.Answers {
			l.List = append(l.List, pyvalue.StrValue(a))
		}
		v.Dict = append(v.Dict, pyvalue.Item{Key: t.Tool, Value: l})
	}
	return v
}

// UnmarshalJSON reads a JSON object of string lists, keeping key order.
func (u *UnsolvedSet) UnmarshalJSON(b []byte) error {
	v, err := pyvalue.Decode(string(bytes.TrimSpace(b)), pyvalue.Options{Strict: true, NoDupKeys: true})
	if err != nil {
		return fmt.Errorf("unsolved_set: %w", err)
	}
	s, err := unsolvedFromPy(v)
	if err != nil {
		return err
	}
	*u = s
	return nil
}

func unsolvedFromPy(v pyvalue.Value) (UnsolvedSet, error) {
	if v.Kind != pyvalue.Dict {
		return nil, fmt.Errorf("unsolved_set: want an object of string lists, got %s", v.Kind)
	}
	out := make(UnsolvedSet, 0, len(v.Dict))
	for _, it := range v.Dict {
		if it.Value.Kind != pyvalue.List {
			return nil, fmt.Errorf("unsolved_set[%q]: want a list of strings, got %s", it.Key, it.Value.Kind)
		}
		t := UnsolvedTool{Tool: it.Key, Answers: make([]string, 0, len(it.Value.List))}
		for j, a := range it.Value.List {
			if a.Kind != pyvalue.Str {
				return nil, fmt.Errorf("unsolved_set[%q][%d]: want a string, got %s", it.Key, j, a.Kind)
			}
			t.Answers = append(t.Answers, a.Str)
		}
		out = append(out, t)
	}
	return out, nil
}

var errEmptyUnsolved = errors.New("unsolved_set is empty: FTRL's solve_rate (1 - remaining/initial) divides by zero")
