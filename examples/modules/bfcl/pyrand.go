package main

// pyRandom reproduces CPython's random.Random (Lib/random.py over
// Modules/_randommodule.c): MT19937 (Matsumoto & Nishimura 1998) seeded
// from an int by init_by_array over the 32-bit words of |seed|, with
// getrandbits, _randbelow (rejection sampling on getrandbits of the bound's
// bit length), randint and random()/uniform (53-bit floats from two words).
// BFCL's classes draw from one such generator per instance; its position is
// persisted as (seed, words drawn) and restored by replay.
type pyRandom struct {
	mt    [624]uint32
	idx   int
	draws int64
}

func newPyRandom(seed int64) *pyRandom {
	r := &pyRandom{}
	if seed < 0 {
		seed = -seed
	}
	u := uint64(seed)
	var key []uint32
	for u > 0 {
		key = append(key, uint32(u))
		u >>= 32
	}
	if len(key) == 0 {
		key = []uint32{0}
	}
	r.initGenrand(19650218)
	i, j := 1, 0
	k := max(624, len(key))
	for ; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1664525)) + key[j] + uint32(j)
		i++
		j++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
		if j >= len(key) {
			j = 0
		}
	}
	for k = 623; k > 0; k-- {
		r.mt[i] = (r.mt[i] ^ ((r.mt[i-1] ^ (r.mt[i-1] >> 30)) * 1566083941)) - uint32(i)
		i++
		if i >= 624 {
			r.mt[0] = r.mt[623]
			i = 1
		}
	}
	r.mt[0] = 0x80000000
	r.idx = 624
	return r
}

func (r *pyRandom) initGenrand(s uint32) {
	r.mt[0] = s
	for i := 1; i < 624; i++ {
		r.mt[i] = 1812433253*(r.mt[i-1]^(r.mt[i-1]>>30)) + uint32(i)
	}
	r.idx = 624
}

func (r *pyRandom) genrand() uint32 {
	const upper, lower = 0x80000000, 0x7fffffff
	if r.idx >= 624 {
		for k := 0; k < 624; k++ {
			y := (r.mt[k] & upper) | (r.mt[(k+1)%624] & lower)
			v := r.mt[(k+397)%624] ^ (y >> 1)
			if y&1 != 0 {
				v ^= 0x9908b0df
			}
			r.mt[k] = v
		}
		r.idx = 0
	}
	y := r.mt[r.idx]
	r.idx++
	r.draws++
	y ^= y >> 11
	y ^= (y << 7) & 0x9d2c5680
	y ^= (y << 15) & 0xefc60000
	y ^= y >> 18
	return y
}

// getrandbits returns k random bits (1 <= k <= 64), words little-endian as
// CPython assembles them.
func (r *pyRandom) getrandbits(k int) uint64 {
	if k <= 32 {
		return uint64(r.genrand() >> (32 - k))
	}
	lo := uint64(r.genrand())
	hi := uint64(r.genrand() >> (64 - k))
	return hi<<32 | lo
}

func bitLength(n uint64) int {
	b := 0
	for n > 0 {
		b++
		n >>= 1
	}
	return b
}

// randbelow is random._randbelow_with_getrandbits: 0 <= x < n.
func (r *pyRandom) randbelow(n int64) int64 {
	if n <= 0 {
		return 0
	}
	k := bitLength(uint64(n))
	x := r.getrandbits(k)
	for x >= uint64(n) {
		x = r.getrandbits(k)
	}
	return int64(x)
}

// randint is random.randint(a, b): a <= x <= b.
func (r *pyRandom) randint(a, b int64) int64 { return a + r.randbelow(b-a+1) }

// random is random.random(): [0, 1) with 53 bits.
func (r *pyRandom) random() float64 {
	a := r.genrand() >> 5
	b := r.genrand() >> 6
	return (float64(a)*67108864.0 + float64(b)) * (1.0 / 9007199254740992.0)
}

// uniform is random.uniform(a, b) = a + (b-a) * random().
func (r *pyRandom) uniform(a, b float64) float64 { return a + (b-a)*r.random() }

// restore returns a generator seeded with seed that has drawn draws words.
func restoreRandom(seed, draws int64) *pyRandom {
	r := newPyRandom(seed)
	for r.draws < draws {
		r.genrand()
	}
	return r
}
