package ptree

// node is immutable once published in a Tree.
type node[K, V any] struct {
	key         K
	val         V
	left, right *node[K, V]
	height      int32
	size        int32
}

// Tree is an immutable ordered map from K to V. The zero Tree is not usable:
// create one with New. Tree values may be copied freely.
type Tree[K, V any] struct {
	root *node[K, V]
	cmp  func(a, b K) int
}

// New returns an empty tree ordered by cmp, which returns <0, 0 or >0 as a is
// less than, equal to or greater than b.
func New[K, V any](cmp func(a, b K) int) Tree[K, V] {
	return Tree[K, V]{cmp: cmp}
}

// Len returns the number of entries. O(1).
func (t Tree[K, V]) Len() int { return int(size(t.root)) }

// SameRoot reports whether t and o are the very same snapshot (pointer
// equality of roots): a cheap "definitely equal" test.
func (t Tree[K, V]) SameRoot(o Tree[K, V]) bool { return t.root == o.root }

func height[K, V any](n *node[K, V]) int32 {
	if n == nil {
		return 0
	}
	return n.height
}

func size[K, V any](n *node[K, V]) int32 {
	if n == nil {
		return 0
	}
	return n.size
}

func mk[K, V any](k K, v V, l, r *node[K, V]) *node[K, V] {
	h := height(l)
	if hr := height(r); hr > h {
		h = hr
	}
	return &node[K, V]{key: k, val: v, left: l, right: r, height: h + 1, size: size(l) + size(r) + 1}
}

// balance builds a node from k, v, l, r where the heights of l and r differ by
// at most 2, restoring the AVL invariant with single or double rotations.
func balance[K, V any](k K, v V, l, r *node[K, V]) *node[K, V] {
	hl, hr := height(l), height(r)
	switch {
	case hl > hr+1:
		if height(l.left) >= height(l.right) {
			return mk(l.key, l.val, l.left, mk(k, v, l.right, r))
		}
		lr := l.right
		return mk(lr.key, lr.val, mk(l.key, l.val, l.left, lr.left), mk(k, v, lr.right, r))
	case hr > hl+1:
		if height(r.right) >= height(r.left) {
			return mk(r.key, r.val, mk(k, v, l, r.left), r.right)
		}
		rl := r.left
		return mk(rl.key, rl.val, mk(k, v, l, rl.left), mk(r.key, r.val, rl.right, r.right))
	}
	return mk(k, v, l, r)
}

// Get returns the value stored under k.
func (t Tree[K, V]) Get(k K) (V, bool) {
	n := t.root
	for n != nil {
		c := t.cmp(k, n.key)
		switch {
		case c < 0:
			n = n.left
		case c > 0:
			n = n.right
		default:
			return n.val, true
		}
	}
	var zero V
	return zero, false
}

// Set returns a tree with k mapped to v, and whether k was present before.
func (t Tree[K, V]) Set(k K, v V) (Tree[K, V], bool) {
	root, replaced := t.set(t.root, k, v)
	return Tree[K, V]{root: root, cmp: t.cmp}, replaced
}

func (t Tree[K, V]) set(n *node[K, V], k K, v V) (*node[K, V], bool) {
	if n == nil {
		return &node[K, V]{key: k, val: v, height: 1, size: 1}, false
	}
	c := t.cmp(k, n.key)
	switch {
	case c < 0:
		l, rep := t.set(n.left, k, v)
		return balance(n.key, n.val, l, n.right), rep
	case c > 0:
		r, rep := t.set(n.right, k, v)
		return balance(n.key, n.val, n.left, r), rep
	}
	return &node[K, V]{key: k, val: v, left: n.left, right: n.right, height: n.height, size: n.size}, true
}

// Delete returns a tree without k, the value k had, and whether it was present.
// When k is absent the returned tree is t itself.
func (t Tree[K, V]) Delete(k K) (Tree[K, V], V, bool) {
	root, v, ok := t.del(t.root, k)
	if !ok {
		return t, v, false
	}
	return Tree[K, V]{root: root, cmp: t.cmp}, v, true
}

func (t Tree[K, V]) del(n *node[K, V], k K) (*node[K, V], V, bool) {
	if n == nil {
		var zero V
		return nil, zero, false
	}
	c := t.cmp(k, n.key)
	switch {
	case c < 0:
		l, v, ok := t.del(n.left, k)
		if !ok {
			return n, v, false
		}
		return balance(n.key, n.val, l, n.right), v, true
	case c > 0:
		r, v, ok := t.del(n.right, k)
		if !ok {
			return n, v, false
		}
		return balance(n.key, n.val, n.left, r), v, true
	}
	if n.left == nil {
		return n.right, n.val, true
	}
	if n.right == nil {
		return n.left, n.val, true
	}
	r, mk, mv := delMin(n.right)
	return balance(mk, mv, n.left, r), n.val, true
}

func delMin[K, V any](n *node[K, V]) (*node[K, V], K, V) {
	if n.left == nil {
		return n.right, n.key, n.val
	}
	l, k, v := delMin(n.left)
	return balance(n.key, n.val, l, n.right), k, v
}

// FromSorted builds a perfectly balanced tree from keys in strictly ascending
// order (per cmp) and their values; len(vals) must equal len(keys). O(n).
func FromSorted[K, V any](cmp func(a, b K) int, keys []K, vals []V) Tree[K, V] {
	var build func(lo, hi int) *node[K, V]
	build = func(lo, hi int) *node[K, V] {
		if lo >= hi {
			return nil
		}
		mid := (lo + hi) / 2
		return mk(keys[mid], vals[mid], build(lo, mid), build(mid+1, hi))
	}
	return Tree[K, V]{root: build(0, len(keys)), cmp: cmp}
}

// Iter walks a tree in key order (or reverse order). It holds a snapshot: the
// tree it came from may be replaced while iterating without effect.
type Iter[K, V any] struct {
	stack   []*node[K, V]
	reverse bool
	// buf backs stack for trees of ordinary height, so an iterator is one
	// allocation instead of one per doubling of its stack.
	buf [24]*node[K, V]
}

// newIter returns an empty iterator whose stack uses its own buffer.
func newIter[K, V any](reverse bool) *Iter[K, V] {
	it := &Iter[K, V]{reverse: reverse}
	it.stack = it.buf[:0]
	return it
}

// Ascend returns an iterator over all entries in ascending order.
func (t Tree[K, V]) Ascend() *Iter[K, V] {
	it := newIter[K, V](false)
	for n := t.root; n != nil; n = n.left {
		it.stack = append(it.stack, n)
	}
	return it
}

// Descend returns an iterator over all entries in descending order.
func (t Tree[K, V]) Descend() *Iter[K, V] {
	it := newIter[K, V](true)
	for n := t.root; n != nil; n = n.right {
		it.stack = append(it.stack, n)
	}
	return it
}

// SeekGE returns an ascending iterator starting at the first key >= pivot.
func (t Tree[K, V]) SeekGE(pivot K) *Iter[K, V] {
	it := newIter[K, V](false)
	for n := t.root; n != nil; {
		if t.cmp(pivot, n.key) <= 0 {
			it.stack = append(it.stack, n)
			n = n.left
		} else {
			n = n.right
		}
	}
	return it
}

// SeekLE returns a descending iterator starting at the last key <= pivot.
func (t Tree[K, V]) SeekLE(pivot K) *Iter[K, V] {
	it := newIter[K, V](true)
	for n := t.root; n != nil; {
		if t.cmp(pivot, n.key) >= 0 {
			it.stack = append(it.stack, n)
			n = n.right
		} else {
			n = n.left
		}
	}
	return it
}

// Next returns the next entry, or ok == false when the iterator is exhausted.
func (it *Iter[K, V]) Next() (k K, v V, ok bool) {
	if len(it.stack) == 0 {
		return k, v, false
	}
	n := it.stack[len(it.stack)-1]
	it.stack = it.stack[:len(it.stack)-1]
	if it.reverse {
		for c := n.left; c != nil; c = c.right {
			it.stack = append(it.stack, c)
		}
	} else {
		for c := n.right; c != nil; c = c.left {
			it.stack = append(it.stack, c)
		}
	}
	return n.key, n.val, true
}

// diffItem is a pending piece of a tree during Diff: a whole subtree, or one
// node standing for its own entry only.
type diffItem[K, V any] struct {
	n      *node[K, V]
	single bool
}

func pushSubtree[K, V any](s []diffItem[K, V], n *node[K, V]) []diffItem[K, V] {
	if n != nil {
		s = append(s, diffItem[K, V]{n: n})
	}
	return s
}

// expand replaces the whole subtree on top of s with right, the node itself,
// and left, so the smallest remaining entry stays on top.
func expand[K, V any](s []diffItem[K, V]) []diffItem[K, V] {
	top := s[len(s)-1]
	s = s[:len(s)-1]
	s = pushSubtree(s, top.n.right)
	s = append(s, diffItem[K, V]{n: top.n, single: true})
	return pushSubtree(s, top.n.left)
}

// Diff calls fn for every key whose presence or value differs between a and b,
// in ascending key order: (k, &va, nil) for a key only in a, (k, nil, &vb) for
// a key only in b, (k, &va, &vb) for a key in both whose values are not equal
// by eq. Subtrees shared by a and b (same pointer) are skipped, so the cost is
// proportional to the changes times the tree height. a and b must use the same
// ordering. fn returns false to stop early.
func Diff[K, V any](a, b Tree[K, V], eq func(x, y V) bool, fn func(k K, va, vb *V) bool) {
	cmp := a.cmp
	if cmp == nil {
		cmp = b.cmp
	}
	sa := pushSubtree(nil, a.root)
	sb := pushSubtree(nil, b.root)
	for len(sa) > 0 || len(sb) > 0 {
		if len(sb) == 0 || len(sa) == 0 {
			s := &sa
			if len(sa) == 0 {
				s = &sb
			}
			top := (*s)[len(*s)-1]
			if !top.single {
				*s = expand(*s)
				continue
			}
			*s = (*s)[:len(*s)-1]
			var cont bool
			if s == &sa {
				cont = fn(top.n.key, &top.n.val, nil)
			} else {
				cont = fn(top.n.key, nil, &top.n.val)
			}
			if !cont {
				return
			}
			continue
		}
		ta, tb := sa[len(sa)-1], sb[len(sb)-1]
		if !ta.single && !tb.single {
			if ta.n == tb.n {
				sa, sb = sa[:len(sa)-1], sb[:len(sb)-1]
				continue
			}
			switch {
			case ta.n.size > tb.n.size:
				sa = expand(sa)
			case ta.n.size < tb.n.size:
				sb = expand(sb)
			default:
				sa, sb = expand(sa), expand(sb)
			}
			continue
		}
		if !ta.single {
			sa = expand(sa)
			continue
		}
		if !tb.single {
			sb = expand(sb)
			continue
		}
		c := cmp(ta.n.key, tb.n.key)
		cont := true
		switch {
		case c < 0:
			sa = sa[:len(sa)-1]
			cont = fn(ta.n.key, &ta.n.val, nil)
		case c > 0:
			sb = sb[:len(sb)-1]
			cont = fn(tb.n.key, nil, &tb.n.val)
		default:
			sa, sb = sa[:len(sa)-1], sb[:len(sb)-1]
			if ta.n != tb.n && !eq(ta.n.val, tb.n.val) {
				cont = fn(ta.n.key, &ta.n.val, &tb.n.val)
			}
		}
		if !cont {
			return
		}
	}
}

// check verifies the AVL and size invariants and the key order; tests use it.
func (t Tree[K, V]) check() bool {
	var walk func(n *node[K, V], lo, hi *K) (int32, int32, bool)
	walk = func(n *node[K, V], lo, hi *K) (int32, int32, bool) {
		if n == nil {
			return 0, 0, true
		}
		if lo != nil && t.cmp(*lo, n.key) >= 0 || hi != nil && t.cmp(n.key, *hi) >= 0 {
			return 0, 0, false
		}
		hl, sl, okl := walk(n.left, lo, &n.key)
		hr, sr, okr := walk(n.right, &n.key, hi)
		h := max(hl, hr) + 1
		d := hl - hr
		ok := okl && okr && d >= -1 && d <= 1 && n.height == h && n.size == sl+sr+1
		return h, sl + sr + 1, ok
	}
	_, _, ok := walk(t.root, nil, nil)
	return ok
}
