package ptree

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// Micro-benchmarks of the persistent AVL tree at 100k int keys. Keys are the
// even numbers 0, 2, ..., 2(n-1), so odd keys are absent.

const benchN = 100_000

func benchTree(n int) Tree[int, int] {
	keys := make([]int, n)
	vals := make([]int, n)
	for i := range keys {
		keys[i], vals[i] = 2*i, i
	}
	return FromSorted(intCmp, keys, vals)
}

func benchKeys(n, count int, seed uint64) []int {
	r := rand.New(rand.NewPCG(seed, seed+1))
	ks := make([]int, count)
	for i := range ks {
		ks[i] = 2 * r.IntN(n)
	}
	return ks
}

var benchSink int

func BenchmarkGet(b *testing.B) {
	t := benchTree(benchN)
	ks := benchKeys(benchN, 4096, 1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v, _ := t.Get(ks[i&4095])
		benchSink += v
	}
}

// BenchmarkSet replaces the value of an existing key (path copy, no
// rebalancing); each op starts from the same tree.
func BenchmarkSet(b *testing.B) {
	t := benchTree(benchN)
	ks := benchKeys(benchN, 4096, 2)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nt, _ := t.Set(ks[i&4095], i)
		benchSink += nt.Len()
	}
}

// BenchmarkSetNew inserts an absent key (path copy plus rebalancing).
func BenchmarkSetNew(b *testing.B) {
	t := benchTree(benchN)
	ks := benchKeys(benchN, 4096, 3)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nt, _ := t.Set(ks[i&4095]+1, i)
		benchSink += nt.Len()
	}
}

func BenchmarkDelete(b *testing.B) {
	t := benchTree(benchN)
	ks := benchKeys(benchN, 4096, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nt, _, _ := t.Delete(ks[i&4095])
		benchSink += nt.Len()
	}
}

// BenchmarkDiff diffs a tree against one derived from it by k value changes.
func BenchmarkDiff(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			t := benchTree(benchN)
			d := t
			for j := 0; j < k; j++ {
				d, _ = d.Set(2*(j*(benchN/k)), -1)
			}
			eq := func(x, y int) bool { return x == y }
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				n := 0
				Diff(t, d, eq, func(int, *int, *int) bool { n++; return true })
				if n != k {
					b.Fatalf("diff: %d changes, want %d", n, k)
				}
			}
		})
	}
}

// BenchmarkDiffFull diffs two independently built equal trees: no shared
// subtrees, so every entry is compared (the O(n) worst case).
func BenchmarkDiffFull(b *testing.B) {
	t, u := benchTree(benchN), benchTree(benchN)
	eq := func(x, y int) bool { return x == y }
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Diff(t, u, eq, func(int, *int, *int) bool { return true })
	}
}
