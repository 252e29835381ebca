package state

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fileModel is the sequential model of a file tree: path -> entry.
type fileModel map[string]modelEntry

type modelEntry struct {
	dir  bool
	data string
}

func (m fileModel) parentsOK(p string, create bool) error {
	for d := parentOf(p); d != ""; d = parentOf(d) {
		if e, ok := m[d]; ok && !e.dir {
			return ErrNotDir
		} else if ok {
			break
		}
	}
	if create {
		for d := parentOf(p); d != ""; d = parentOf(d) {
			if _, ok := m[d]; ok {
				break
			}
			m[d] = modelEntry{dir: true}
		}
	}
	return nil
}

func (m fileModel) write(p, data string, appendTo bool) error {
	e, ok := m[p]
	if ok && e.dir {
		return ErrIsDir
	}
	if err := m.parentsOK(p, false); err != nil {
		return err
	}
	_ = m.parentsOK(p, true)
	if appendTo && ok {
		data = e.data + data
	}
	m[p] = modelEntry{data: data}
	return nil
}

func (m fileModel) mkdir(p string, parents bool) error {
	if e, ok := m[p]; ok {
		if parents && e.dir {
			return nil
		}
		return ErrFileExists
	}
	if !parents {
		if d := parentOf(p); d != "" {
			e, ok := m[d]
			switch {
			case !ok:
				return ErrNoSuchFile
			case !e.dir:
				return ErrNotDir
			}
		}
	}
	if err := m.parentsOK(p, false); err != nil {
		return err
	}
	_ = m.parentsOK(p, true)
	m[p] = modelEntry{dir: true}
	return nil
}

func (m fileModel) below(p string) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, p+"/") {
			out = append(out, k)
		}
	}
	return out
}

func (m fileModel) remove(p string, recursive bool) error {
	e, ok := m[p]
	if !ok {
		return ErrNoSuchFile
	}
	if e.dir {
		b := m.below(p)
		if len(b) > 0 && !recursive {
			return ErrNotEmpty
		}
		for _, k := range b {
			delete(m, k)
		}
	}
	delete(m, p)
	return nil
}

func (m fileModel) rename(from, to string) error {
	e, ok := m[from]
	if !ok {
		return ErrNoSuchFile
	}
	if from == to {
		return nil
	}
	if _, ok := m[to]; ok {
		return ErrFileExists
	}
	if e.dir && strings.HasPrefix(to, from+"/") {
		return ErrInvalidPath
	}
	if d := parentOf(to); d != "" {
		pe, ok := m[d]
		switch {
		case !ok:
			return ErrNoSuchFile
		case !pe.dir:
			return ErrNotDir
		}
	}
	b := m.below(from)
	delete(m, from)
	m[to] = e
	for _, k := range b {
		m[to+k[len(from):]] = m[k]
		delete(m, k)
	}
	return nil
}

func (m fileModel) files() []File {
	out := []File{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e := m[k]
		f := File{Path: k, Dir: e.dir}
		if !e.dir {
			f.Data = []byte(e.data)
		}
		out = append(out, f)
	}
	return out
}

func sameFiles(a, b []File) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Path != b[i].Path || a[i].Dir != b[i].Dir || string(a[i].Data) != string(b[i].Data) {
			return false
		}
	}
	return true
}

type sharedVersion struct {
	v     *Version
	model fileModel
	hash  Hash
}

// TestFilesPropertyConcurrent: 8 goroutines run random fork / write /
// append / mkdir / rename / remove / restore / snapshot sequences over a
// pool of shared versions, each against a sequential model. Every result
// (success or error kind) matches the model, every workspace equals its
// model (entries and hash of the model rebuilt from scratch), and at the
// end every shared version still has the files and the hash (recomputed,
// not cached) it had when it was made.
func TestFilesPropertyConcurrent(t *testing.T) {
	const workers, steps = 8, 150
	s := NewStore()
	base := smallState(t, s)
	var mu sync.Mutex
	pool := []sharedVersion{{v: base, model: fileModel{}, hash: base.Hash()}}
	pick := func(r *rand.Rand) sharedVersion {
		mu.Lock()
		defer mu.Unlock()
		return pool[r.IntN(len(pool))]
	}
	names := []string{"a", "b", "c"}
	randPath := func(r *rand.Rand) string {
		n := 1 + r.IntN(3)
		el := make([]string, n)
		for i := range el {
			el[i] = names[r.IntN(len(names))]
		}
		return strings.Join(el, "/")
	}
	var okOps, errOps atomic.Int64
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 25))
			sv := pick(r)
			ws, model := s.Fork(sv.v), maps.Clone(sv.model)
			for i := range steps {
				var got, want error
				op := r.IntN(9)
				p := randPath(r)
				switch op {
				case 0:
					sv := pick(r)
					ws, model = s.Fork(sv.v), maps.Clone(sv.model)
				case 1:
					sv := pick(r)
					got = ws.Restore(sv.v)
					model = maps.Clone(sv.model)
				case 2:
					v, err := ws.Snapshot()
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					pool = append(pool, sharedVersion{v: v, model: maps.Clone(model), hash: v.Hash()})
					mu.Unlock()
				case 3, 4:
					data := fmt.Sprintf("w%d.%d\n", w, i)
					got, want = ws.WriteFile(p, []byte(data)), model.write(p, data, false)
				case 5:
					data := fmt.Sprintf("+%d", i)
					got, want = ws.AppendFile(p, []byte(data)), model.write(p, data, true)
				case 6:
					parents := r.IntN(2) == 0
					got, want = ws.Mkdir(p, parents), model.mkdir(p, parents)
				case 7:
					rec := r.IntN(2) == 0
					got, want = ws.Remove(p, rec), model.remove(p, rec)
				case 8:
					to := randPath(r)
					got, want = ws.Rename(p, to), model.rename(p, to)
				}
				if (want == nil) != (got == nil) || (want != nil && !errors.Is(got, want)) {
					errs <- fmt.Errorf("worker %d step %d op %d path %s: got %v, want %v", w, i, op, p, got, want)
					return
				}
				if op >= 3 {
					if got == nil {
						okOps.Add(1)
					} else {
						errOps.Add(1)
					}
				}
				if i%10 == 9 || i == steps-1 {
					if !sameFiles(ws.Files(), model.files()) {
						errs <- fmt.Errorf("worker %d step %d: workspace files differ from the model", w, i)
						return
					}
					rebuilt, err := base.WithFiles(model.files())
					if err != nil {
						errs <- err
						return
					}
					if rebuilt.Hash() != ws.Hash() {
						errs <- fmt.Errorf("worker %d step %d: hash %s, model's %s", w, i, ws.Hash(), rebuilt.Hash())
						return
					}
				}
			}
			errs <- nil
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The sequences exercise both outcomes.
	if len(pool) < 20 || okOps.Load() < 200 || errOps.Load() < 50 {
		t.Fatalf("weak run: %d shared versions, %d successful and %d failed file operations", len(pool), okOps.Load(), errOps.Load())
	}
	t.Logf("%d shared versions, %d successful and %d failed file operations", len(pool), okOps.Load(), errOps.Load())
	for i, sv := range pool {
		if h := hashState(sv.v.tables, sv.v.files); h != sv.hash {
			t.Errorf("version %d: hash now %s, was %s", i, h, sv.hash)
		}
		if !sameFiles(sv.v.Files(), sv.model.files()) {
			t.Errorf("version %d: files changed after it was made", i)
		}
	}
}
