package tool

import (
	"context"
	"sync"
)

// EntryFunc answers one call request (docs/abi.md, "Call request") with the
// response JSON, using h for the host libraries: Dispatch's shape.
type EntryFunc func(ctx context.Context, h Host, request []byte) []byte

var entry struct {
	mu       sync.Mutex
	manifest []byte
	dispatch EntryFunc
}

// Serve makes the module answer weft_v1_manifest with manifest (the
// manifest JSON, used as is) and weft_v1_call with dispatch instead of the
// registered tools (ManifestJSON, Dispatch): for a module whose requests
// are not Go functions, such as the shared interpreter of synthesized
// servers (modules/interp runs sdk/interp.Dispatch). Call it once, from
// init; it panics on a second call, a nil dispatch or an empty manifest.
// The wasm exports and imports stay this package's, so such a module has
// the same ABI glue as every Go module. Dispatch and ManifestJSON are
// unaffected (they serve the registered tools).
func Serve(manifest []byte, dispatch EntryFunc) {
	entry.mu.Lock()
	defer entry.mu.Unlock()
	switch {
	case entry.dispatch != nil:
		panic("tool: Serve called twice")
	case dispatch == nil:
		panic("tool: Serve with a nil dispatch function")
	case len(manifest) == 0:
		panic("tool: Serve with an empty manifest")
	}
	entry.manifest = append([]byte(nil), manifest...)
	entry.dispatch = dispatch
}
