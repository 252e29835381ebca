package queue

import (
	"slices"
	"testing"
)

// keys lists the cache's keys, sorted.
func (c *builtCache) keys() []string {
	var ks []string
	for k := range c.m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// The cache keeps at most max experiments: a new key evicts the least
// recently used idle one, never one a job holds; while more are held than
// max it keeps them all and shrinks back as they are released.
func TestBuiltCacheLRU(t *testing.T) {
	c := newBuiltCache(2)
	a, ev := c.take("a")
	if len(ev) != 0 {
		t.Fatalf("evicted %d on the first take", len(ev))
	}
	c.release(a)
	b, _ := c.take("b")
	c.release(b)
	a2, _ := c.take("a") // a is now the most recently used
	if a2 != a {
		t.Fatal("take of a known key built a new entry")
	}
	c.release(a)
	_, ev = c.take("c")
	if len(ev) != 1 || ev[0] != b {
		t.Fatalf("evicted %v, want b (least recently used)", ev)
	}
	if got := c.keys(); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("keys %v, want [a c]", got)
	}
	// c is still held; a is idle. Two more held keys: a goes, c and d
	// stay held, e makes three held entries over a max of 2.
	d, ev := c.take("d")
	if len(ev) != 1 || ev[0] != a {
		t.Fatalf("evicted %v, want a", ev)
	}
	e, ev := c.take("e")
	if len(ev) != 0 || len(c.m) != 3 {
		t.Fatalf("evicted %v with every entry held; %d entries", ev, len(c.m))
	}
	if ev := c.release(d); len(ev) != 1 || ev[0] != d {
		t.Fatalf("release(d) evicted %v, want d", ev)
	}
	if got := c.keys(); !slices.Equal(got, []string{"c", "e"}) {
		t.Fatalf("keys %v, want [c e]", got)
	}
	c.release(e)
	// A failed build is dropped; the next take builds afresh.
	f, _ := c.take("f")
	c.drop("f", f)
	if f2, _ := c.take("f"); f2 == f {
		t.Fatal("a dropped entry came back")
	}
	if all := c.all(); len(all) != 2 || len(c.m) != 0 {
		t.Fatalf("all() = %d entries, %d left", len(all), len(c.m))
	}
	if newBuiltCache(0).max != DefaultMaxBuilt {
		t.Fatal("MaxBuilt 0 is not the default")
	}
}
