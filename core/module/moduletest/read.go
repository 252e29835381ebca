package moduletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/weft-dev/weft/internal/suggest"
)

// The keys of a cases file. Known keys are what Run reads; extra keys are
// those the shared oracle formats carry beside them (tau2's and BFCL's, see
// docs/module-test.md), accepted and ignored. Any other key is refused, with
// the closest known key as a suggestion, so that a misspelt key ("call" for
// "calls") cannot make a case check nothing.
var (
	fileKeys  = []string{"source", "cases"}
	caseKeys  = []string{"id", "calls", "final_changes"}
	callKeys  = []string{"name", "arguments", "error", "output"}
	fileExtra []string
	// BFCL multi-turn (../shared/data/bfcl-multiturn/README.md).
	caseExtra = []string{"involved_classes", "initial_config", "config_id", "question", "excluded_function", "final_state"}
	callExtra = []string{"raised", "bfcl_text", "turn", "bfcl_call"}
)

// ExtraKeys returns the extra keys accepted (and ignored) at each level of a
// cases file: "file", "case" and "call".
func ExtraKeys() map[string][]string {
	return map[string][]string{"file": slices.Clone(fileExtra), "case": slices.Clone(caseExtra), "call": slices.Clone(callExtra)}
}

// Read decodes a cases file (format: docs/module-test.md) and checks that
// every case checks something. It fails, naming the case (index and id) and
// the key, for: malformed JSON; a file with no cases; a case without an id,
// or with an id used before; a case with neither "calls" nor
// "final_changes" (null counts as absent; a case with "calls": [] and
// "final_changes": {} is a real check: nothing may change); a call without a name; a key
// given twice in one object, anywhere in the file (named with its case, call
// and line and column); and any key that
// is neither known nor a documented extra (with "did you mean" the closest
// known key).
func Read(r io.Reader) (*File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	}
	var f File
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	}
	if d, err := findDupKey(data); err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	} else if d != nil {
		return nil, dupKeyError(d, &f)
	}
	// The same bytes again, as objects, for the keys each level has.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	}
	if len(f.Cases) == 0 {
		msg := `moduletest: cases: the file has no cases (expected {"cases": [...]})`
		if err := checkKeys("the file", top, fileKeys, fileExtra); err != nil {
			msg += "; " + err.Error()
		}
		return nil, fmt.Errorf("%s", msg)
	}
	if err := checkKeys("the file", top, fileKeys, fileExtra); err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	}
	var cases []json.RawMessage
	if err := json.Unmarshal(top["cases"], &cases); err != nil {
		return nil, fmt.Errorf("moduletest: cases: %w", err)
	}
	seen := map[string]int{}
	for i, c := range f.Cases {
		if c.ID == "" {
			return nil, fmt.Errorf("moduletest: case %d has no id", i)
		}
		if j, dup := seen[c.ID]; dup {
			return nil, fmt.Errorf("moduletest: case %d: id %q is also case %d's", i, c.ID, j)
		}
		seen[c.ID] = i
		where := fmt.Sprintf("case %d (%q)", i, c.ID)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(cases[i], &keys); err != nil {
			return nil, fmt.Errorf("moduletest: %s: %w", where, err)
		}
		if err := checkKeys(where, keys, caseKeys, caseExtra); err != nil {
			return nil, fmt.Errorf("moduletest: %w", err)
		}
		hasCalls := present(keys["calls"])
		hasFinal := present(keys["final_changes"])
		if !hasCalls && !hasFinal {
			return nil, fmt.Errorf(`moduletest: %s checks nothing: it has neither "calls" nor "final_changes" (give "calls": [] and "final_changes": {} to check that nothing changes)`, where)
		}
		var calls []map[string]json.RawMessage
		if hasCalls {
			if err := json.Unmarshal(keys["calls"], &calls); err != nil {
				return nil, fmt.Errorf("moduletest: %s: calls: %w", where, err)
			}
		}
		for j, call := range calls {
			cw := fmt.Sprintf("%s call %d", where, j)
			if err := checkKeys(cw, call, callKeys, callExtra); err != nil {
				return nil, fmt.Errorf("moduletest: %w", err)
			}
			if c.Calls[j].Name == "" {
				return nil, fmt.Errorf("moduletest: %s has no name", cw)
			}
		}
	}
	return &f, nil
}

// present reports a key given with a value other than null.
func present(v json.RawMessage) bool {
	return len(v) > 0 && string(bytes.TrimSpace(v)) != "null"
}

// checkKeys refuses the keys of obj that are neither known nor extra, in
// sorted order, suggesting the closest known key.
func checkKeys(where string, obj map[string]json.RawMessage, known, extra []string) error {
	var bad []string
	for k := range obj {
		if !slices.Contains(known, k) && !slices.Contains(extra, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	k := bad[0]
	msg := fmt.Sprintf("%s: unknown key %q", where, k)
	if s := suggest.Closest(k, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	extras := "none"
	if len(extra) > 0 {
		extras = strings.Join(extra, ", ")
	}
	msg += fmt.Sprintf("; known keys: %s; accepted extra keys: %s (docs/module-test.md)", strings.Join(known, ", "), extras)
	if len(bad) > 1 {
		msg += fmt.Sprintf(" (%d unknown keys: %s)", len(bad), strings.Join(bad, ", "))
	}
	return fmt.Errorf("%s", msg)
}
