package pipeline

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAssignEqualWeights(t *testing.T) {
	pairs := []Pair{{"a", "x", 1}, {"a", "y", 1}, {"b", "x", 1}}
	got, err := Assign(pairs, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 1, 2, 0, 1, 2, 0}, got); diff != "" {
		t.Fatalf("slots (-want +got):\n%s", diff)
	}
}

func TestAssignWeighted(t *testing.T) {
	// 5:1:1 gives the nginx sequence a a b a c a a.
	pairs := []Pair{{"v", "a", 5}, {"v", "b", 1}, {"v", "c", 1}}
	got, err := Assign(pairs, 7)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{0, 0, 1, 0, 2, 0, 0}, got); diff != "" {
		t.Fatalf("slots (-want +got):\n%s", diff)
	}
	counts := map[int]int{}
	all, _ := Assign(pairs, 700)
	for _, i := range all {
		counts[i]++
	}
	if counts[0] != 500 || counts[1] != 100 || counts[2] != 100 {
		t.Fatalf("counts over 700 slots = %v, want 500/100/100", counts)
	}
}

func TestAssignZeroWeights(t *testing.T) {
	if _, err := Assign([]Pair{{"v", "a", 0}, {"v", "b", -1}}, 3); err == nil {
		t.Fatal("all-zero weights: want an error")
	}
	got, err := Assign([]Pair{{"v", "a", 0}, {"v", "b", 2}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 1, 1}, got); diff != "" {
		t.Fatalf("zero-weight pair got slots (-want +got):\n%s", diff)
	}
}
