package ptree

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func intCmp(a, b int) int { return cmp.Compare(a, b) }

func collect(t Tree[int, int]) []int {
	var out []int
	it := t.Ascend()
	for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
		out = append(out, k)
	}
	return out
}

// TestRandomOpsMatchMap applies random sets and deletes to a tree and a Go map
// side by side, keeping every intermediate tree, and checks that each snapshot
// still holds exactly what the map held at that time (persistence).
func TestRandomOpsMatchMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	tr := New[int, int](intCmp)
	model := map[int]int{}
	type snap struct {
		tree  Tree[int, int]
		model map[int]int
	}
	var snaps []snap
	for i := 0; i < 5000; i++ {
		k := r.IntN(500)
		if r.IntN(3) == 0 {
			var old int
			var ok bool
			tr, old, ok = tr.Delete(k)
			mv, mok := model[k]
			if ok != mok || (ok && old != mv) {
				t.Fatalf("step %d: Delete(%d) = %d,%v; model %d,%v", i, k, old, ok, mv, mok)
			}
			delete(model, k)
		} else {
			var rep bool
			tr, rep = tr.Set(k, i)
			_, mok := model[k]
			if rep != mok {
				t.Fatalf("step %d: Set(%d) replaced=%v, model had=%v", i, k, rep, mok)
			}
			model[k] = i
		}
		if i%250 == 0 {
			snaps = append(snaps, snap{tr, maps(model)})
		}
	}
	for si, s := range snaps {
		if !s.tree.check() {
			t.Fatalf("snapshot %d: invariants broken", si)
		}
		if s.tree.Len() != len(s.model) {
			t.Fatalf("snapshot %d: Len %d, want %d", si, s.tree.Len(), len(s.model))
		}
		keys := collect(s.tree)
		want := sortedKeys(s.model)
		if !slices.Equal(keys, want) {
			t.Fatalf("snapshot %d: keys differ", si)
		}
		for k, v := range s.model {
			if got, ok := s.tree.Get(k); !ok || got != v {
				t.Fatalf("snapshot %d: Get(%d) = %d,%v want %d", si, k, got, ok, v)
			}
		}
	}
}

func maps(m map[int]int) map[int]int {
	c := make(map[int]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func sortedKeys(m map[int]int) []int {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func TestSeek(t *testing.T) {
	keys := []int{10, 20, 30, 40, 50}
	tr := FromSorted(intCmp, keys, []int{1, 2, 3, 4, 5})
	if !tr.check() {
		t.Fatal("FromSorted broke invariants")
	}
	cases := []struct {
		pivot  int
		ge, le []int
	}{
		{5, []int{10, 20, 30, 40, 50}, nil},
		{30, []int{30, 40, 50}, []int{30, 20, 10}},
		{31, []int{40, 50}, []int{30, 20, 10}},
		{55, nil, []int{50, 40, 30, 20, 10}},
	}
	for _, c := range cases {
		var ge, le []int
		it := tr.SeekGE(c.pivot)
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			ge = append(ge, k)
		}
		it = tr.SeekLE(c.pivot)
		for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
			le = append(le, k)
		}
		if !slices.Equal(ge, c.ge) || !slices.Equal(le, c.le) {
			t.Errorf("pivot %d: GE %v want %v; LE %v want %v", c.pivot, ge, c.ge, le, c.le)
		}
	}
	var desc []int
	it := tr.Descend()
	for k, _, ok := it.Next(); ok; k, _, ok = it.Next() {
		desc = append(desc, k)
	}
	if !slices.Equal(desc, []int{50, 40, 30, 20, 10}) {
		t.Errorf("Descend = %v", desc)
	}
}

type change struct{ k, a, b int }

func naiveDiff(a, b map[int]int) []change {
	var out []change
	all := maps(a)
	for k, v := range b {
		all[k] = v
	}
	for _, k := range sortedKeys(all) {
		av, aok := a[k]
		bv, bok := b[k]
		switch {
		case aok && !bok:
			out = append(out, change{k, av, -1})
		case !aok && bok:
			out = append(out, change{k, -1, bv})
		case av != bv:
			out = append(out, change{k, av, bv})
		}
	}
	return out
}

// TestDiffMatchesNaive diffs a base tree against forks with a few random
// changes and compares with a map-based diff; it also counts visited nodes
// through the eq callback to show shared subtrees are skipped.
func TestDiffMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	n := 20000
	keys := make([]int, n)
	vals := make([]int, n)
	for i := range keys {
		keys[i], vals[i] = i*2, i
	}
	base := FromSorted(intCmp, keys, vals)
	baseModel := map[int]int{}
	for i := range keys {
		baseModel[keys[i]] = vals[i]
	}
	for trial := 0; trial < 50; trial++ {
		fork, model := base, maps(baseModel)
		for j := 0; j < 1+trial%7; j++ {
			k := r.IntN(2*n + 10)
			switch r.IntN(3) {
			case 0:
				fork, _, _ = fork.Delete(k)
				delete(model, k)
			default:
				v := r.IntN(1000000)
				fork, _ = fork.Set(k, v)
				model[k] = v
			}
		}
		var got []change
		eqCalls := 0
		Diff(base, fork, func(x, y int) bool { eqCalls++; return x == y }, func(k int, a, b *int) bool {
			c := change{k, -1, -1}
			if a != nil {
				c.a = *a
			}
			if b != nil {
				c.b = *b
			}
			got = append(got, c)
			return true
		})
		want := naiveDiff(baseModel, model)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: diff %v want %v", trial, got, want)
		}
		if eqCalls > 200 {
			t.Fatalf("trial %d: diff compared %d entries for %d changes: shared subtrees not skipped", trial, eqCalls, len(want))
		}
		// And the reverse direction.
		var rev int
		Diff(fork, base, func(x, y int) bool { return x == y }, func(int, *int, *int) bool { rev++; return true })
		if rev != len(want) {
			t.Fatalf("trial %d: reverse diff has %d entries, want %d", trial, rev, len(want))
		}
	}
}
