package module

import (
	"fmt"
	"math/bits"
)

// Generated small tool modules, for the module memory budget (lru.go):
// distinct ABI v1 reactors of about 35 KB of wasm (the size of the C
// module examples/modules/c-notes), written as bytes so no toolchain is
// needed. Module i has one read-only tool, hash, answering
// {"content":[{"type":"text","text":"h=XXXXXXXX"}]} where XXXXXXXX is
// genHash(i, n) in hex, n the length of the call request: a chain of
// genFuncs functions whose constants come from i, so every module's code
// differs (its own digest, its own compilation) and the answer proves the
// compiled code ran.

const (
	genFuncs    = 280 // ~125 bytes of code each
	genRounds   = 6
	genManifest = 1024
	genHexDigit = 512
	genResponse = 8192
	genReqBuf   = 65536
)

// genConsts are the constants of module i's functions: per function and
// round a multiplier, an addend and a rotation.
func genConsts(i int) [][genRounds][3]uint32 {
	s := uint64(i)*0x9E3779B97F4A7C15 + 0x243F6A8885A308D3
	next := func() uint32 {
		s += 0x9E3779B97F4A7C15
		z := s
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
		z = (z ^ (z >> 27)) * 0x94D049BB133111EB
		return uint32(z ^ (z >> 31))
	}
	c := make([][genRounds][3]uint32, genFuncs)
	for f := range c {
		for r := range genRounds {
			c[f][r] = [3]uint32{next() | 1, next(), next() % 31}
		}
	}
	return c
}

// genHash is what module i's hash tool computes for a request of n bytes.
func genHash(i int, n uint32) uint32 {
	x := n
	for _, f := range genConsts(i) {
		for _, r := range f {
			x = bits.RotateLeft32(x*r[0]+r[1], int(r[2]))
		}
	}
	return x
}

func genManifestJSON(i int) string {
	return fmt.Sprintf(`{"abi":"weft/v1","name":"gen-%05d","version":"0.1.0","description":"generated module %d",`+
		`"tools":[{"name":"hash","description":"Hashes the request's length.",`+
		`"inputSchema":{"type":"object","properties":{"key":{"type":"string"}},"required":["key"],"additionalProperties":false},`+
		`"annotations":{"readOnlyHint":true}}],"tables":{"owns":[],"reads":[]},"hosts":{},"export":false}`, i, i)
}

const genResponseJSON = `{"content":[{"type":"text","text":"h=XXXXXXXX"}]}`

func i32const(b []byte, v uint32) []byte { return appendS32(append(b, 0x41), int32(v)) }

// genModule assembles module i.
func genModule(i int) []byte {
	const first = 5 // index of the first chain function
	man := genManifestJSON(i)
	types := vec(1,
		[]byte{0x60, 0, 0},                   // 0: () -> ()
		[]byte{0x60, 1, 0x7F, 1, 0x7F},       // 1: i32 -> i32
		[]byte{0x60, 0, 1, 0x7E},             // 2: () -> i64
		[]byte{0x60, 2, 0x7F, 0x7F, 1, 0x7E}, // 3: (i32, i32) -> i64
	)
	fidx := [][]byte{{0}, {0}, {1}, {2}, {3}}
	for range genFuncs {
		fidx = append(fidx, []byte{1})
	}
	funcs := vec(3, fidx...)
	mem := vec(5, []byte{0x00, 2}) // 2 pages
	exports := vec(7,
		append(appendName(nil, "memory"), 0x02, 0),
		append(appendName(nil, "_initialize"), 0x00, 0),
		append(appendName(nil, "weft_abi_v1"), 0x00, 1),
		append(appendName(nil, "weft_v1_alloc"), 0x00, 2),
		append(appendName(nil, "weft_v1_manifest"), 0x00, 3),
		append(appendName(nil, "weft_v1_call"), 0x00, 4),
	)
	bodies := [][]byte{
		body(0x0B),
		body(0x0B),
		body(append(i32const(nil, genReqBuf), 0x0B)...),
		body(append(appendS64([]byte{0x42}, int64(genManifest)<<32|int64(len(man))), 0x0B)...),
	}
	// weft_v1_call(ptr, len): h = chain(len), its hex into the response.
	hexAt := uint32(genResponse + len(`{"content":[{"type":"text","text":"h=`))
	c := []byte{1, 2, 0x7F} // locals: 2 x i32 (h = 2, i = 3)
	c = append(c, 0x20, 1, 0x10)
	c = appendU32(c, first)
	c = append(c, 0x21, 2, 0x41, 0, 0x21, 3, 0x03, 0x40)
	c = i32const(c, hexAt+7)
	c = append(c, 0x20, 3, 0x6B, 0x20, 2, 0x41, 15, 0x71, 0x2D, 0)
	c = appendU32(c, genHexDigit)
	c = append(c, 0x3A, 0, 0, 0x20, 2, 0x41, 4, 0x76, 0x21, 2,
		0x20, 3, 0x41, 1, 0x6A, 0x22, 3, 0x41, 8, 0x49, 0x0D, 0, 0x0B)
	c = append(appendS64(append(c, 0x42), int64(genResponse)<<32|int64(len(genResponseJSON))), 0x0B)
	bodies = append(bodies, append(appendU32(nil, uint32(len(c))), c...))
	for f, rounds := range genConsts(i) {
		var b []byte
		for _, r := range rounds {
			b = append(b, 0x20, 0)
			b = i32const(b, r[0])
			b = append(b, 0x6C)
			b = i32const(b, r[1])
			b = append(b, 0x6A)
			b = i32const(b, r[2])
			b = append(b, 0x77, 0x21, 0)
		}
		b = append(b, 0x20, 0)
		if f < genFuncs-1 {
			b = append(b, 0x10)
			b = appendU32(b, uint32(first+f+1))
		}
		bodies = append(bodies, body(append(b, 0x0B)...))
	}
	code := vec(10, bodies...)
	seg := func(off int, data string) []byte {
		s := append(i32const([]byte{0x00}, uint32(off)), 0x0B)
		return appendName(s, data)
	}
	data := vec(11, seg(genManifest, man), seg(genHexDigit, "0123456789abcdef"), seg(genResponse, genResponseJSON))
	return wasmModule(types, funcs, mem, exports, code, data)
}
