package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/verify"
)

// fileSteps are three reference steps over workspace files (BFCL's
// touch, echo, cp): 1 creates notes.txt empty, 2 writes it, 3 copies it
// to archive/notes.txt.
type fileStep func(ws *state.Workspace) error

var fileSteps = []fileStep{
	func(ws *state.Workspace) error { return ws.WriteFile("notes.txt", nil) },
	func(ws *state.Workspace) error { return ws.WriteFile("notes.txt", []byte("ideas")) },
	func(ws *state.Workspace) error { return ws.WriteFile("archive/notes.txt", []byte("ideas")) },
}

func applyFiles(t *testing.T, s *state.Store, v *state.Version, steps ...fileStep) *state.Version {
	t.Helper()
	ws := s.Fork(v)
	for _, st := range steps {
		if err := st(ws); err != nil {
			t.Fatal(err)
		}
	}
	out, err := ws.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestChangedRowsFiles: changed_rows covers the workspace files a step
// changes; with overwritten "last" a fault in step k fails k and never an
// earlier step whose value a later step changes again, while the default
// ("reference") also fails the earlier step.
func TestChangedRowsFiles(t *testing.T) {
	f := newFixture(t)
	s := f.store
	after := []*state.Version{f.initial}
	for _, st := range fileSteps {
		after = append(after, applyFiles(t, s, after[len(after)-1], st))
	}
	vs := map[string]*state.Version{verify.Initial: f.initial, verify.Reference: after[3]}
	for k, v := range after {
		vs[verify.ReferenceAfter(k)] = v
	}
	wrongEcho := func(ws *state.Workspace) error { return ws.WriteFile("notes.txt", []byte("idea")) }
	wrongCopy := func(ws *state.Workspace) error { return ws.WriteFile("archive/notes.txt", []byte("idea")) }
	sha := func(s string) string { return "sha256:" + sha256Hex(s) }
	for _, tc := range []struct {
		name        string
		final       []fileStep
		overwritten string
		failed      []string
		missing     [][]string
	}{
		{"reference", fileSteps, task.OverwrittenLast, nil, [][]string{nil, nil, nil}},
		{"echo wrong, last", []fileStep{fileSteps[0], wrongEcho, wrongCopy}, task.OverwrittenLast,
			[]string{"echo", "cp", verify.Overall}, [][]string{nil, {"file notes.txt " + sha("ideas")}, {"file archive/notes.txt " + sha("ideas")}}},
		{"echo wrong, reference", []fileStep{fileSteps[0], wrongEcho, wrongCopy}, "",
			[]string{"touch", "echo", "cp", verify.Overall}, [][]string{{"file notes.txt " + sha("ideas")}, {"file notes.txt " + sha("ideas")}, {"file archive/notes.txt " + sha("ideas")}}},
		{"copy skipped, last", fileSteps[:2], task.OverwrittenLast,
			[]string{"cp", verify.Overall}, [][]string{nil, nil, {"directory archive", "file archive/notes.txt " + sha("ideas")}}},
		{"nothing done, last", nil, task.OverwrittenLast,
			[]string{"echo", "cp", verify.Overall}, [][]string{nil, {"file notes.txt " + sha("ideas")}, {"directory archive", "file archive/notes.txt " + sha("ideas")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := &task.Task{ID: "t", Checks: []task.Check{{Kind: task.CheckStateEqual}}}
			for _, id := range []string{"touch", "echo", "cp"} {
				tk.Atomic = append(tk.Atomic, task.Atomic{ID: id, Checks: []task.Check{{Kind: task.CheckChangedRows, Overwritten: tc.overwritten}}})
			}
			ev := map[string]*state.Version{}
			for k, v := range vs {
				ev[k] = v
			}
			ev[verify.Final] = applyFiles(t, s, f.initial, tc.final...)
			res, err := verify.Verify(context.Background(), verify.Input{Task: tk}, verify.NewStateEvidence(ev))
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for i, cp := range res.Checkpoints {
				if cp.Score < 1 {
					failed = append(failed, cp.Name)
				}
				if i < 3 {
					if d := cmp.Diff(tc.missing[i], cp.Checks[0].Missing); d != "" {
						t.Errorf("%s Missing (-want +got):\n%s", cp.Name, d)
					}
				}
			}
			if d := cmp.Diff(tc.failed, failed); d != "" {
				t.Errorf("failed checkpoints (-want +got):\n%s", d)
			}
		})
	}
}

func TestOverwrittenValidated(t *testing.T) {
	tk := &task.Task{ID: "t", Brief: "b", Modules: []string{"m"}, Checks: []task.Check{{Kind: task.CheckStateEqual}},
		Atomic: []task.Atomic{{ID: "a", Request: "r", Reference: []task.Call{{Tool: "x", Arguments: []byte(`{}`)}},
			Checks: []task.Check{{Kind: task.CheckChangedRows, Overwritten: "first"}}}}}
	if err := tk.Validate(); err == nil {
		t.Fatal("overwritten \"first\" accepted")
	}
	tk.Atomic[0].Checks[0].Overwritten = task.OverwrittenLast
	if err := tk.Validate(); err != nil {
		t.Fatal(err)
	}
	tk.Checks[0].Overwritten = task.OverwrittenLast
	if err := tk.Validate(); err == nil {
		t.Fatal("overwritten on state_equal accepted")
	}
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
