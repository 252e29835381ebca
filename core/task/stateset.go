package task

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// StateSetFormat is the format of a state set: the initial states of a
// task file's tasks in one sibling file, every distinct DDL statement and
// row stored once.
const StateSetFormat = "weft.state-set/v1"

// StateSet holds many weft.state/v1 states sharing their DDL and rows.
// Tables[i] is one table layout (name and columns) with its distinct rows;
// each state names, per table it has, the layout and the rows (indices
// into the layout's Rows, in the state's row order).
type StateSet struct {
	Format string     `json:"format"`
	DDL    []string   `json:"ddl"`
	Tables []SetTable `json:"tables"`
	States []SetState `json:"states"`
	byID   map[string]int
}

// SetTable is one table layout of a StateSet and its distinct rows (each
// a JSON array of the columns' values, as weft.state/v1 writes them).
type SetTable struct {
	Name    string            `json:"name"`
	Columns []string          `json:"columns"`
	Rows    []json.RawMessage `json:"rows"`
}

// SetState is one state of a StateSet: its task id, its DDL statements
// (indices into StateSet.DDL) and its tables in export order.
type SetState struct {
	ID     string          `json:"id"`
	DDL    []int           `json:"ddl"`
	Tables []SetStateTable `json:"tables"`
}

// SetStateTable is one table of a SetState: Table indexes
// StateSet.Tables, Rows that layout's rows.
type SetStateTable struct {
	Table         int    `json:"table"`
	AutoIncrement uint64 `json:"auto_increment,omitempty"`
	Rows          []int  `json:"rows"`
}

// stateDoc is the weft.state/v1 layout (core/state's export, field for
// field and in its order, so that State gives Export's bytes back).
type stateDoc struct {
	Format string       `json:"format"`
	DDL    []string     `json:"ddl"`
	Tables []stateTable `json:"tables"`
	Files  []any        `json:"files,omitempty"`
}

type stateTable struct {
	Name          string            `json:"name"`
	Columns       []string          `json:"columns"`
	AutoIncrement uint64            `json:"auto_increment,omitempty"`
	Rows          []json.RawMessage `json:"rows"`
}

// SplitStates moves the tasks' inline initial states (weft.state/v1
// without files) into one StateSet, in task order, and returns it with
// shallow copies of the tasks whose InitialState is cleared; a task with
// no initial state, or one the set cannot hold (files, another format),
// keeps it inline. The same tasks give the same set.
func SplitStates(tasks []*Task) (*StateSet, []*Task, error) {
	set := &StateSet{Format: StateSetFormat, DDL: []string{}, Tables: []SetTable{}, States: []SetState{}}
	ddl := map[string]int{}
	layouts := map[string]int{}
	rows := map[int]map[string]int{}
	out := make([]*Task, len(tasks))
	for i, t := range tasks {
		out[i] = t
		if t == nil || len(t.InitialState) == 0 {
			continue
		}
		var doc stateDoc
		dec := json.NewDecoder(bytes.NewReader(t.InitialState))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&doc); err != nil || doc.Format != "weft.state/v1" || len(doc.Files) > 0 {
			continue
		}
		st := SetState{ID: t.ID, DDL: []int{}, Tables: []SetStateTable{}}
		for _, d := range doc.DDL {
			k, ok := ddl[d]
			if !ok {
				k = len(set.DDL)
				ddl[d] = k
				set.DDL = append(set.DDL, d)
			}
			st.DDL = append(st.DDL, k)
		}
		for _, tb := range doc.Tables {
			key := tb.Name + "\x00" + strings.Join(tb.Columns, "\x00")
			li, ok := layouts[key]
			if !ok {
				li = len(set.Tables)
				layouts[key] = li
				set.Tables = append(set.Tables, SetTable{Name: tb.Name, Columns: tb.Columns, Rows: []json.RawMessage{}})
				rows[li] = map[string]int{}
			}
			stt := SetStateTable{Table: li, AutoIncrement: tb.AutoIncrement, Rows: []int{}}
			for _, r := range tb.Rows {
				var c bytes.Buffer
				if err := json.Compact(&c, r); err != nil {
					return nil, nil, err
				}
				ri, ok := rows[li][c.String()]
				if !ok {
					ri = len(set.Tables[li].Rows)
					rows[li][c.String()] = ri
					set.Tables[li].Rows = append(set.Tables[li].Rows, json.RawMessage(c.String()))
				}
				stt.Rows = append(stt.Rows, ri)
			}
			st.Tables = append(st.Tables, stt)
		}
		set.States = append(set.States, st)
		cp := *t
		cp.InitialState = nil
		out[i] = &cp
	}
	return set, out, nil
}

// State returns the weft.state/v1 state of task id (compact JSON, the
// bytes core/state's Export gives, compacted), and whether the set has it.
func (s *StateSet) State(id string) (json.RawMessage, bool) {
	if s.byID == nil {
		s.byID = make(map[string]int, len(s.States))
		for i, st := range s.States {
			s.byID[st.ID] = i
		}
	}
	i, ok := s.byID[id]
	if !ok {
		return nil, false
	}
	st := s.States[i]
	doc := stateDoc{Format: "weft.state/v1", DDL: make([]string, 0, len(st.DDL)), Tables: make([]stateTable, 0, len(st.Tables))}
	for _, d := range st.DDL {
		doc.DDL = append(doc.DDL, s.DDL[d])
	}
	for _, t := range st.Tables {
		l := s.Tables[t.Table]
		tb := stateTable{Name: l.Name, Columns: l.Columns, AutoIncrement: t.AutoIncrement, Rows: make([]json.RawMessage, 0, len(t.Rows))}
		for _, r := range t.Rows {
			tb.Rows = append(tb.Rows, l.Rows[r])
		}
		doc.Tables = append(doc.Tables, tb)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, false
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), true
}

// check validates the set's indices; errors name the state.
func (s *StateSet) check() error {
	if s.Format != StateSetFormat {
		return fmt.Errorf("format: got %q, want %q", s.Format, StateSetFormat)
	}
	seen := map[string]bool{}
	for _, st := range s.States {
		if st.ID == "" || seen[st.ID] {
			return fmt.Errorf("state id %q: empty or repeated", st.ID)
		}
		seen[st.ID] = true
		for _, d := range st.DDL {
			if d < 0 || d >= len(s.DDL) {
				return fmt.Errorf("state %q: ddl index %d out of range", st.ID, d)
			}
		}
		for _, t := range st.Tables {
			if t.Table < 0 || t.Table >= len(s.Tables) {
				return fmt.Errorf("state %q: table index %d out of range", st.ID, t.Table)
			}
			for _, r := range t.Rows {
				if r < 0 || r >= len(s.Tables[t.Table].Rows) {
					return fmt.Errorf("state %q: table %s: row index %d out of range", st.ID, s.Tables[t.Table].Name, r)
				}
			}
		}
	}
	return nil
}

// LoadStateSet reads and checks a state set. Errors: not JSON, unknown
// fields, another format, an index out of range.
func LoadStateSet(r io.Reader) (*StateSet, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var s StateSet
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not a state set: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// StatesPath is the state set file of a task file: path without ".json"
// (and ".weft") plus ".states.json".
func StatesPath(path string) string {
	return strings.TrimSuffix(strings.TrimSuffix(path, ".json"), ".weft") + ".states.json"
}

// SaveSplit writes tasks to path as Save does, but with their initial
// states moved into one state set at StatesPath(path) (compact JSON), the
// task file naming it in "states" (relative: the base name). LoadFile
// puts the states back. Nothing is written when a task is invalid.
func SaveSplit(path string, tasks []*Task) error {
	if err := validateAll(tasks); err != nil {
		return err
	}
	set, stripped, err := SplitStates(tasks)
	if err != nil {
		return err
	}
	if stripped == nil {
		stripped = []*Task{}
	}
	sp := StatesPath(path)
	var tb bytes.Buffer
	enc := json.NewEncoder(&tb)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(File{Format: Format, States: filepath.Base(sp), Tasks: stripped}); err != nil {
		return err
	}
	var sb bytes.Buffer
	senc := json.NewEncoder(&sb)
	senc.SetEscapeHTML(false)
	if err := senc.Encode(set); err != nil {
		return err
	}
	if err := os.WriteFile(sp, sb.Bytes(), 0o644); err != nil {
		return err
	}
	return os.WriteFile(path, tb.Bytes(), 0o644)
}

// resolveStates fills the InitialState of f's tasks from the state set
// f.States names (relative to dir): a task without an inline state whose
// id the set has gets it; a set that does not load is an error.
func resolveStates(f *File, dir string) error {
	if f.States == "" {
		return nil
	}
	p := f.States
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	r, err := os.Open(p)
	if err != nil {
		return &Error{Field: "states", Err: err}
	}
	defer r.Close()
	set, err := LoadStateSet(r)
	if err != nil {
		return &Error{Field: "states", Err: fmt.Errorf("%s: %w", p, err)}
	}
	for _, t := range f.Tasks {
		if len(t.InitialState) > 0 {
			continue
		}
		if st, ok := set.State(t.ID); ok {
			t.InitialState = st
		}
	}
	return nil
}
