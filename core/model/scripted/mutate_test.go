package scripted

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An array loses an element or has one changed; with these seeds both
// happen.
func TestWrongArrayValue(t *testing.T) {
	in := raw(`["1151293680","4983901480"]`)
	got := map[string]bool{}
	for seed := uint64(0); seed < 4; seed++ {
		v, ok := wrongValue(in, rand.New(rand.NewPCG(seed, 0)))
		if !ok {
			t.Fatal("array not changed")
		}
		got[string(v)] = true
	}
	want := map[string]bool{`["1151293680"]`: true, `["1155293680","4983901480"]`: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := wrongValue(raw(`[]`), rand.New(rand.NewPCG(0, 0))); ok {
		t.Error("empty array changed")
	}
	if _, ok := wrongArgument(raw(`{"a":null,"b":[]}`), rand.New(rand.NewPCG(0, 0))); ok {
		t.Error("unchangeable arguments changed")
	}
}
