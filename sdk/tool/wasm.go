//go:build wasip1

package tool

import (
	"context"
	"runtime"
	"unsafe"
)

// The ABI v1 exports and imports (docs/abi.md). Buffers handed to the host
// are Go memory; Go's collector does not move objects, and package
// variables keep them alive for as long as the ABI promises.

func init() { defaultHost = wasmHost{} }

var (
	allocs   [][]byte // weft_v1_alloc buffers, valid until the next weft_v1_call returns
	response []byte   // the last result, valid until the host's next call into the instance
	calls    int
)

//go:wasmexport weft_abi_v1
func weftABIv1() {}

//go:wasmexport weft_v1_alloc
func weftV1Alloc(size int32) unsafe.Pointer {
	b := make([]byte, max(int(size), 1))
	allocs = append(allocs, b)
	return unsafe.Pointer(unsafe.SliceData(b))
}

//go:wasmexport weft_v1_manifest
func weftV1Manifest() uint64 {
	manifest, _ := entryPoint()
	response = manifest()
	return pack(response)
}

//go:wasmexport weft_v1_call
func weftV1Call(ptr unsafe.Pointer, n int32) uint64 {
	req := unsafe.Slice((*byte)(ptr), max(int(n), 0))
	_, dispatch := entryPoint()
	response = dispatch(context.Background(), wasmHost{}, req)
	clear(allocs)
	allocs = allocs[:0]
	// A long-lived reactor only runs other goroutines (among them the
	// garbage collector's workers) when the guest yields; without this the
	// GC stops completing and the heap grows until the memory cap. Yield
	// after every call, and after a large call (an export hook, a big
	// query) finish a collection outright: linear memory never shrinks, so
	// letting garbage pile up across large calls would push a pooled
	// instance into its memory cap.
	calls++
	runtime.Gosched()
	if len(response) > largeCall || n > largeCall || calls%256 == 0 {
		runtime.GC()
	}
	return pack(response)
}

// largeCall is the request or response size (bytes) after which a call is
// followed by a full garbage collection.
const largeCall = 256 << 10

func pack(b []byte) uint64 {
	return uint64(uintptr(unsafe.Pointer(unsafe.SliceData(b))))<<32 | uint64(uint32(len(b)))
}

//go:wasmimport weft_sql_v1 query
func sqlQuery(req unsafe.Pointer, reqLen int32, out unsafe.Pointer, outCap int32) int32

//go:wasmimport weft_sql_v1 take
func sqlTake(out unsafe.Pointer, outCap int32) int32

//go:wasmimport weft_sql_v2 batch
func sqlBatch(req unsafe.Pointer, reqLen int32, out unsafe.Pointer, outCap int32) int32

//go:wasmimport weft_sql_v2 take
func sqlBatchTake(out unsafe.Pointer, outCap int32) int32

//go:wasmimport weft_clock_v1 now
func clockNow() int64

//go:wasmimport weft_rand_v1 fill
func randFill(p unsafe.Pointer, n int32)

//go:wasmimport weft_log_v1 write
func logWrite(level int32, msg unsafe.Pointer, n int32)

//go:wasmimport weft_log_v1 progress
func logProgress(progress, total float64, msg unsafe.Pointer, n int32)

//go:wasmimport weft_fs_v1 call
func fsCallImport(req unsafe.Pointer, reqLen int32, out unsafe.Pointer, outCap int32) int32

//go:wasmimport weft_fs_v1 take
func fsTake(out unsafe.Pointer, outCap int32) int32

// hasPlatformFS: on wasm the weft_fs_v1 imports serve workspace files
// when the call's host does not.
const hasPlatformFS = true

// fsBuf is the first result buffer of every weft_fs_v1.call.
var fsBuf = make([]byte, 64<<10)

// platformFS serves weft_fs_v1 through the imports. Only modules that use
// Files reach it, so only they import weft_fs_v1 (the linker drops
// unreferenced imports) and must declare "fs" in their manifest.
func platformFS(req []byte) []byte {
	n := fsCallImport(unsafe.Pointer(unsafe.SliceData(req)), int32(len(req)), unsafe.Pointer(unsafe.SliceData(fsBuf)), int32(len(fsBuf)))
	runtime.KeepAlive(req)
	if n < 0 {
		n = 0
	}
	if int(n) <= len(fsBuf) {
		return append([]byte(nil), fsBuf[:n]...)
	}
	big := make([]byte, n)
	m := fsTake(unsafe.Pointer(unsafe.SliceData(big)), n)
	return big[:min(max(m, 0), n)]
}

// sqlBuf is the first result buffer of every weft_sql_v1.query.
var sqlBuf = make([]byte, 64<<10)

// wasmHost is Host over the imports.
type wasmHost struct{}

func (wasmHost) SQL(req []byte) []byte {
	n := sqlQuery(unsafe.Pointer(unsafe.SliceData(req)), int32(len(req)), unsafe.Pointer(unsafe.SliceData(sqlBuf)), int32(len(sqlBuf)))
	runtime.KeepAlive(req)
	if n < 0 {
		n = 0
	}
	if int(n) <= len(sqlBuf) {
		return append([]byte(nil), sqlBuf[:n]...)
	}
	big := make([]byte, n)
	m := sqlTake(unsafe.Pointer(unsafe.SliceData(big)), n)
	return big[:min(max(m, 0), n)]
}

// SQLBatch serves weft_sql_v2 (abi.SQLBatchHost). The answer is handed
// to abi.DecodeSQLResults, which copies it into one string at once, so
// a result that fits is returned as a view of sqlBuf.
func (wasmHost) SQLBatch(req []byte) []byte {
	n := sqlBatch(unsafe.Pointer(unsafe.SliceData(req)), int32(len(req)), unsafe.Pointer(unsafe.SliceData(sqlBuf)), int32(len(sqlBuf)))
	runtime.KeepAlive(req)
	if n < 0 {
		n = 0
	}
	if int(n) <= len(sqlBuf) {
		return sqlBuf[:n]
	}
	big := make([]byte, n)
	m := sqlBatchTake(unsafe.Pointer(unsafe.SliceData(big)), n)
	return big[:min(max(m, 0), n)]
}

func (wasmHost) Now() int64 { return clockNow() }

func (wasmHost) Rand(p []byte) {
	if len(p) > 0 {
		randFill(unsafe.Pointer(unsafe.SliceData(p)), int32(len(p)))
	}
}

func (wasmHost) Log(level int, msg string) {
	logWrite(int32(level), unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

func (wasmHost) Progress(progress, total float64, msg string) {
	logProgress(progress, total, unsafe.Pointer(unsafe.StringData(msg)), int32(len(msg)))
}

// entryPoint returns what the wasm exports serve: Serve's manifest and
// dispatch function when set, else ManifestJSON and Dispatch.
func entryPoint() (manifest func() []byte, dispatch EntryFunc) {
	entry.mu.Lock()
	defer entry.mu.Unlock()
	if entry.dispatch == nil {
		return ManifestJSON, Dispatch
	}
	m, d := entry.manifest, entry.dispatch
	return func() []byte { return m }, d
}
