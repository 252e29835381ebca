// Command garbage is a hand-written ABI v1 module (no SDK) whose tools
// answer with malformed responses.
package main

import "unsafe"

func main() {}

var (
	keep     [][]byte
	reqBuf   []byte
	manifest = []byte(`{"abi":"weft/v1","name":"garbage","version":"0.0.1","tools":[` +
		`{"name":"notjson","description":"","inputSchema":{"type":"object"}},` +
		`{"name":"noshape","description":"","inputSchema":{"type":"object"}},` +
		`{"name":"badtype","description":"","inputSchema":{"type":"object"}},` +
		`{"name":"badptr","description":"","inputSchema":{"type":"object"}},` +
		`{"name":"internal","description":"","inputSchema":{"type":"object"}},` +
		`{"name":"ok","description":"","inputSchema":{"type":"object"}}],` +
		`"tables":{"owns":[]},"hosts":{}}`)
)

func pack(b []byte) uint64 {
	keep = append(keep[:0], b)
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(len(b))
}

//go:wasmexport weft_abi_v1
func abi() {}

//go:wasmexport weft_v1_alloc
func alloc(size int32) int32 {
	reqBuf = make([]byte, size)
	return int32(uintptr(unsafe.Pointer(unsafe.SliceData(reqBuf))))
}

//go:wasmexport weft_v1_manifest
func man() uint64 { return pack(manifest) }

//go:wasmexport weft_v1_call
func call(ptr, n int32) uint64 {
	req := string(reqBuf[:n])
	switch {
	case contains(req, `"notjson"`):
		return pack([]byte("\x00\x01 not json"))
	case contains(req, `"noshape"`):
		return pack([]byte(`{"foo": 1}`))
	case contains(req, `"badtype"`):
		return pack([]byte(`{"content": [{"type": "video", "text": "x"}]}`))
	case contains(req, `"badptr"`):
		return uint64(0xfff00000)<<32 | 1<<20
	case contains(req, `"internal"`):
		return pack([]byte(`{"internalError": "something broke"}`))
	}
	return pack([]byte(`{"content": [{"type": "text", "text": "ok"}], "unknownField": true}`))
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
