//go:build !wasip1

package tool

// hasPlatformFS: outside wasm only a host implementing abi.FSHost serves
// workspace files (wasm.go has the weft_fs_v1 imports).
const hasPlatformFS = false

func platformFS([]byte) []byte { return nil }
