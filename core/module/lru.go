package module

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/tetratelabs/wazero"
)

// Resident compiled modules under a memory budget.
//
// With Config.ModuleMemoryMiB set, the Runtime keeps its compiled wasm
// modules in a least-recently-used list and charges each resident module
// its estimated compiled code (codeBytesPerWasmByte × the instrumented
// wasm's size) plus the linear memory of its idle pooled instances (and
// instanceOverhead each). When the charge goes over the budget, the least
// recently used modules are evicted: their idle instances are closed and
// their compiled code released; instances still running a call finish it
// and are closed when released. The *Module stays valid (sessions and
// servers keep their pointers): its next call recompiles the module from
// the instrumented wasm it keeps, which the file compilation cache
// (Config.CacheDir) turns into a read of the machine code from disk
// instead of a compilation. The module just used is never evicted, so one
// module larger than the budget still runs.
//
// Without a budget nothing is evicted and the wasm is not kept.

// codeBytesPerWasmByte estimates the memory of wazero's compiled code (the
// machine code and its tables, the decoded module) per byte of wasm,
// measured on the generated modules of BenchmarkModuleLRU (RSS growth per
// compiled module over its wasm size).
const codeBytesPerWasmByte = 8

// instanceOverhead is the host memory of one instance besides its linear
// memory (wazero's module instance, function and global tables, the
// binding), estimated.
const instanceOverhead = 32 << 10

// moduleLRU is the list of resident modules and their charge.
type moduleLRU struct {
	budget uint64 // bytes; 0: no budget, no list

	mu    sync.Mutex
	list  list.List // of *Module, front = most recently used
	bytes uint64    // charge of the resident modules
	stats LRUStats
}

// LRUStats counts the work of the module memory budget.
type LRUStats struct {
	// Resident is the number of compiled modules in memory, Bytes their
	// charge (estimated compiled code plus idle instances) and Budget the
	// Config.ModuleMemoryMiB in bytes (0: no budget).
	Resident      int
	Bytes, Budget uint64
	// Evictions counts modules evicted, Reloads modules compiled again
	// (from the file cache when there is one) after an eviction.
	Evictions, Reloads int64
}

// LRUStats returns the counters of the module memory budget.
func (r *Runtime) LRUStats() LRUStats {
	l := &r.lru
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Resident, s.Bytes, s.Budget = l.list.Len(), l.bytes, l.budget
	return s
}

// residency is a module's place in the LRU.
type residency struct {
	wasm   []byte        // the instrumented wasm, to compile again
	code   uint64        // charged for the compiled code
	idle   uint64        // charged for idle instances (guarded by moduleLRU.mu)
	elem   *list.Element // nil when evicted (guarded by moduleLRU.mu)
	loadMu sync.Mutex    // one reload at a time
}

// admitModule records a newly compiled module as resident and evicts
// others over the budget.
func (r *Runtime) admitModule(ctx context.Context, m *Module, wasm []byte) {
	l := &r.lru
	if l.budget == 0 {
		return
	}
	m.res = &residency{wasm: wasm, code: uint64(len(wasm)) * codeBytesPerWasmByte}
	r.resident(ctx, m, false)
}

// resident puts m (compiled, off the list) at the front of the list,
// counting a reload if it is one, and evicts others over the budget.
func (r *Runtime) resident(ctx context.Context, m *Module, reload bool) {
	l := &r.lru
	l.mu.Lock()
	if reload {
		l.stats.Reloads++
	}
	m.res.elem = l.list.PushFront(m)
	l.bytes += m.res.code
	victims := l.overLocked()
	l.mu.Unlock()
	for _, v := range victims {
		v.evict(ctx)
	}
}

// overLocked removes modules from the back of the list until the charge
// fits the budget (never the front one) and returns them to be evicted.
func (l *moduleLRU) overLocked() []*Module {
	var victims []*Module
	for l.bytes > l.budget && l.list.Len() > 1 {
		e := l.list.Back()
		v := e.Value.(*Module)
		l.list.Remove(e)
		v.res.elem = nil
		l.bytes -= v.res.code + v.res.idle
		v.res.idle = 0
		l.stats.Evictions++
		victims = append(victims, v)
	}
	return victims
}

// touch marks m as just used.
func (r *Runtime) touch(m *Module) {
	if m.res == nil {
		return
	}
	l := &r.lru
	l.mu.Lock()
	if m.res.elem != nil {
		l.list.MoveToFront(m.res.elem)
	}
	l.mu.Unlock()
}

// chargeIdle adds delta bytes of idle instances to m's charge (when m is
// resident) and evicts others over the budget.
func (r *Runtime) chargeIdle(ctx context.Context, m *Module, delta int64) {
	if m.res == nil {
		return
	}
	l := &r.lru
	l.mu.Lock()
	if m.res.elem == nil {
		l.mu.Unlock()
		return
	}
	m.res.idle = uint64(int64(m.res.idle) + delta)
	l.bytes = uint64(int64(l.bytes) + delta)
	var victims []*Module
	if delta > 0 {
		victims = l.overLocked()
	}
	l.mu.Unlock()
	for _, v := range victims {
		v.evict(ctx)
	}
}

// instanceCharge is what one idle instance of inst's size costs.
func instanceCharge(inst *instance) int64 {
	return int64(inst.mem.Size()) + instanceOverhead
}

// evict releases m's compiled code and idle instances (m was taken off
// the list).
func (m *Module) evict(ctx context.Context) {
	m.mu.Lock()
	free, cm := m.free, m.compiled
	m.free, m.compiled = nil, nil
	m.mu.Unlock()
	for _, inst := range free {
		inst.close(ctx)
	}
	if cm != nil {
		cm.Close(ctx)
	}
}

// compiledModule returns m's compiled module, compiling it again when it
// was evicted.
func (m *Module) compiledModule(ctx context.Context) (wazero.CompiledModule, error) {
	m.mu.Lock()
	cm := m.compiled
	m.mu.Unlock()
	if cm != nil || m.res == nil {
		return cm, nil
	}
	m.res.loadMu.Lock()
	defer m.res.loadMu.Unlock()
	m.mu.Lock()
	cm = m.compiled
	m.mu.Unlock()
	if cm != nil {
		return cm, nil
	}
	cm, err := m.wrt.CompileModule(ctx, m.res.wasm)
	if err != nil {
		return nil, fmt.Errorf("module %s: compiling again after eviction: %w", m.digest, err)
	}
	m.mu.Lock()
	m.compiled = cm
	m.mu.Unlock()
	m.rt.resident(ctx, m, true)
	return cm, nil
}
