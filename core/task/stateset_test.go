package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func stateTask(id, state string) *Task {
	return &Task{ID: id, Brief: "b", InitialState: []byte(state),
		Atomic: []Atomic{{ID: "a1", Request: "r", Checks: []Check{{Kind: CheckStateEqual}}}}}
}

const (
	stA = `{"format":"weft.state/v1","ddl":["create table t (id int primary key, v text)"],"tables":[{"name":"t","columns":["id","v"],"rows":[[1,"x"],[2,"y"]]}]}`
	stB = `{"format":"weft.state/v1","ddl":["create table t (id int primary key, v text)","create table u (k text primary key)"],"tables":[{"name":"t","columns":["id","v"],"rows":[[2,"y"],[3,"z"]]},{"name":"u","columns":["k"],"auto_increment":4,"rows":[]}]}`
)

// SaveSplit moves the states into one set (the DDL and row shared by the
// two states stored once), LoadFile puts back exactly the bytes each task
// had, a task without a state keeps none, and the same tasks give the
// same bytes.
func TestSaveSplitRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.weft.json")
	ts := []*Task{stateTask("a", stA), stateTask("b", stB), {ID: "c", Brief: "b", Atomic: []Atomic{{ID: "a1", Request: "r", Checks: []Check{{Kind: CheckStateEqual}}}}}}
	if err := SaveSplit(path, ts); err != nil {
		t.Fatal(err)
	}
	if StatesPath(path) != filepath.Join(dir, "tasks.states.json") {
		t.Fatalf("states path %s", StatesPath(path))
	}
	tb, _ := os.ReadFile(path)
	sb, _ := os.ReadFile(StatesPath(path))
	if bytes.Contains(tb, []byte("initial_state")) || !bytes.Contains(tb, []byte(`"states": "tasks.states.json"`)) {
		t.Errorf("task file still holds states or does not name the set:\n%s", tb)
	}
	if n := strings.Count(string(sb), `[2,"y"]`); n != 1 {
		t.Errorf("the shared row is stored %d times, want 1: %s", n, sb)
	}
	if n := strings.Count(string(sb), "create table t"); n != 1 {
		t.Errorf("the shared DDL is stored %d times, want 1", n)
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{stA, stB, ""} {
		if string(got[i].InitialState) != want {
			t.Errorf("task %s: state\n%s\nwant\n%s", got[i].ID, got[i].InitialState, want)
		}
	}
	if string(ts[0].InitialState) != stA {
		t.Error("SaveSplit changed its input")
	}
	// LoadFileUnvalidated (weft synth certify) resolves the states too.
	unv, err := LoadFileUnvalidated(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{stA, stB, ""} {
		if string(unv[i].InitialState) != want {
			t.Errorf("LoadFileUnvalidated task %s: state\n%s\nwant\n%s", unv[i].ID, unv[i].InitialState, want)
		}
	}
	// Load (no directory) leaves the states unresolved.
	raw, err := Load(bytes.NewReader(tb))
	if err != nil || len(raw[0].InitialState) != 0 {
		t.Errorf("Load: %v, state %q", err, raw[0].InitialState)
	}
	dir2 := t.TempDir()
	p2 := filepath.Join(dir2, "tasks.weft.json")
	if err := SaveSplit(p2, ts); err != nil {
		t.Fatal(err)
	}
	tb2, _ := os.ReadFile(p2)
	sb2, _ := os.ReadFile(StatesPath(p2))
	if !bytes.Equal(tb, tb2) || !bytes.Equal(sb, sb2) {
		t.Error("the same tasks gave different files")
	}
}

// A missing or broken state set is an error naming the field; nothing is
// returned; the files are not changed. An invalid task writes nothing.
func TestSaveSplitErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tasks.weft.json")
	if err := SaveSplit(path, []*Task{stateTask("a", stA)}); err != nil {
		t.Fatal(err)
	}
	sp := StatesPath(path)
	good, _ := os.ReadFile(sp)
	for _, tc := range []struct {
		name, states, want string
	}{
		{"missing", "", "no such file"},
		{"not json", "{", "not a state set"},
		{"format", strings.Replace(string(good), "weft.state-set/v1", "weft.state-set/v9", 1), "want \"weft.state-set/v1\""},
		{"row index", strings.Replace(string(good), `"rows":[0,1]`, `"rows":[0,7]`, 1), "row index 7 out of range"},
		{"unknown field", strings.Replace(string(good), `"ddl":`, `"dll":[],"ddl":`, 1), "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.states == "" {
				os.Remove(sp)
			} else if err := os.WriteFile(sp, []byte(tc.states), 0o644); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(sp)
			ts, err := LoadFile(path)
			var te *Error
			if err == nil || ts != nil || !errors.As(err, &te) || te.Field != "states" || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v (%d tasks), want a states error with %q", err, len(ts), tc.want)
			}
			after, _ := os.ReadFile(sp)
			if !bytes.Equal(before, after) {
				t.Error("LoadFile changed the state set")
			}
		})
	}
	other := filepath.Join(dir, "other.weft.json")
	if err := SaveSplit(other, []*Task{stateTask("a", stA), stateTask("a", stB)}); err == nil {
		t.Fatal("duplicate ids saved")
	}
	if _, err := os.Stat(other); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an invalid task set wrote %s", other)
	}
	if _, err := os.Stat(StatesPath(other)); !errors.Is(err, fs.ErrNotExist) {
		t.Error("an invalid task set wrote its state set")
	}
}

// FuzzLoadStateSet: any input either fails to load or gives a set whose
// every state rebuilds (checked indices: no panic) into valid JSON.
func FuzzLoadStateSet(f *testing.F) {
	set, _, err := SplitStates([]*Task{stateTask("a", stA), stateTask("b", stB)})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(set); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"weft.state-set/v1","ddl":[],"tables":[],"states":[{"id":"x","ddl":[0],"tables":[]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := LoadStateSet(bytes.NewReader(b))
		if err != nil {
			return
		}
		for _, st := range s.States {
			out, ok := s.State(st.ID)
			if ok && !json.Valid(out) {
				t.Fatalf("state %q rebuilt as invalid JSON: %s", st.ID, out)
			}
		}
	})
}
