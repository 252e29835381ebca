package module

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/weft-dev/weft/hosts"
)

// instance is one wazero instance of a module, used by one call at a time.
type instance struct {
	mod                     api.Module
	mem                     api.Memory
	alloc, call, manifestFn api.Function
	b                       *binding
	// programs holds the digests of the synthesized servers' programs this
	// instance of the interpreter has been sent (server_module.go).
	programs map[string]bool
	// lin backs the linear memory: it enforces the memory cap and records
	// a refused grow (classify reads it).
	lin *capMemory
}

// maxPages is wasm32's whole address space in 64 KiB pages: wazero's own
// memory limit, so that every memory.grow reaches capMemory.
const maxPages = 1 << 16

// capMemory is an instance's linear memory (wazero's
// experimental.LinearMemory): a []byte grown on memory.grow up to limit
// bytes. A grow past limit is refused (memory.grow returns -1 to the guest,
// as past a declared maximum) and recorded, so that the call's failure is
// classified memory_limit whatever the guest does next (the Go runtime
// throws "out of memory", or some other fatal error, with a traceback that
// may not say so; C's malloc returns NULL and the module aborts).
//
// Reallocate runs on the calling goroutine of the guest; refused is read
// by classify after the call returned, and reset at each call's start
// (a guest may survive a refused grow).
type capMemory struct {
	limit uint64
	buf   []byte
	mu    sync.Mutex
	// refused is the size in bytes of the largest refused grow; 0 = none
	// since the last reset.
	refused uint64
}

func (c *capMemory) Reallocate(size uint64) []byte {
	if size > c.limit {
		c.mu.Lock()
		c.refused = max(c.refused, size)
		c.mu.Unlock()
		return nil
	}
	if size <= uint64(cap(c.buf)) {
		// Bytes past len were zeroed when allocated and never written.
		c.buf = c.buf[:size]
		return c.buf
	}
	// Grow like append (amortized), without going past the cap.
	n := max(size, min(uint64(cap(c.buf))*2, c.limit))
	b := make([]byte, size, n)
	copy(b, c.buf)
	c.buf = b
	return c.buf
}

func (c *capMemory) Free() { c.buf = nil }

// takeRefused returns the largest refused grow since the last call (0 =
// none) and resets it.
func (c *capMemory) takeRefused() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.refused
	c.refused = 0
	return r
}

// memoryLimit is the cap of each instance's linear memory, in bytes.
func (r *Runtime) memoryLimit() uint64 { return uint64(r.cfg.MemoryLimitMiB) << 20 }

// checkMemorySizes refuses a module whose memory's declared minimum or
// maximum is over the cap (what wazero's own limit refused before it was
// lifted to maxPages).
func (r *Runtime) checkMemorySizes(mem api.MemoryDefinition) error {
	capPages := uint32(r.memoryLimit() / pageSize)
	if mem.Min() > capPages {
		return fmt.Errorf("min %d pages over the memory cap of %d pages (%d MiB)", mem.Min(), capPages, r.cfg.MemoryLimitMiB)
	}
	if mx, encoded := mem.Max(); encoded && mx > capPages {
		return fmt.Errorf("max %d pages over the memory cap of %d pages (%d MiB)", mx, capPages, r.cfg.MemoryLimitMiB)
	}
	return nil
}

// binding is what an instance's WASI clock, random source and stdio read:
// the environment of the call in progress (set before each call, reset
// after), the same hosts.Call the host libraries read. Outside calls
// (start-up, manifest) the clock reads DefaultEpoch (the Go runtime refuses
// a zero monotonic clock) and the random stream is zero bytes, so start-up
// is deterministic.
var idleNanos = DefaultEpoch.UnixNano()

type binding struct {
	mu     sync.Mutex
	env    *hosts.Call
	stderr tail
}

func (b *binding) set(env *hosts.Call) {
	b.mu.Lock()
	b.env = env
	b.stderr.reset()
	b.mu.Unlock()
}

func (b *binding) reset() { b.set(nil) }

func (b *binding) current() *hosts.Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.env
}

// sleep is the guest's nanosleep (WASI poll_oneoff on a clock): time is
// virtual, so it returns at once and advances the call's clock (the
// environment's Now, which the clock library and the SQL sandbox read too)
// by ns; the session's clock is not moved (docs/abi.md, "Sleeping").
func (b *binding) sleep(ns int64) {
	if ns <= 0 {
		return
	}
	b.mu.Lock()
	if b.env != nil {
		b.env.Now += ns
	}
	b.mu.Unlock()
}

func (b *binding) nanos() int64 {
	if env := b.current(); env != nil {
		return env.Now
	}
	return idleNanos
}

func (b *binding) Read(p []byte) (int, error) {
	env := b.current()
	if env == nil || env.Rand == nil {
		clear(p)
		return len(p), nil
	}
	return io.ReadFull(env.Rand, p)
}

func (b *binding) write(level int, p []byte, isStderr bool) {
	b.mu.Lock()
	env := b.env
	if isStderr {
		b.stderr.write(p)
	}
	b.mu.Unlock()
	if env != nil && env.Log != nil {
		env.Log(level, string(bytes.TrimRight(p, "\n")))
	}
}

// tail keeps the last bytes written to stderr in a call, to recognise the
// Go runtime's "out of memory" death.
type tail struct{ buf []byte }

const tailMax = 4 << 10

func (t *tail) write(p []byte) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailMax {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailMax:]...)
	}
}

func (t *tail) reset() { t.buf = t.buf[:0] }

type stdio struct {
	b      *binding
	level  int
	stderr bool
}

func (s stdio) Write(p []byte) (int, error) {
	s.b.write(s.level, p, s.stderr)
	return len(p), nil
}

func (m *Module) instantiate(ctx context.Context) (*instance, error) {
	b := &binding{}
	cfg := wazero.NewModuleConfig().
		WithName("").
		WithStartFunctions("_initialize").
		WithWalltime(func() (int64, int32) {
			ns := b.nanos()
			sec, nsec := ns/1e9, ns%1e9
			if nsec < 0 {
				sec, nsec = sec-1, nsec+1e9
			}
			return sec, int32(nsec)
		}, 1).
		WithNanotime(b.nanos, 1).
		WithNanosleep(b.sleep).
		WithRandSource(b).
		WithStdout(stdio{b, 1, false}).
		WithStderr(stdio{b, 2, true})
	lin := &capMemory{limit: m.rt.memoryLimit()}
	actx := experimental.WithMemoryAllocator(ctx, experimental.MemoryAllocatorFunc(func(_, _ uint64) experimental.LinearMemory { return lin }))
	var mod api.Module
	for try := 0; ; try++ {
		cm, err := m.compiledModule(ctx)
		if err != nil {
			return nil, err
		}
		mod, err = m.wrt.InstantiateModule(actx, cm, cfg)
		if err == nil {
			break
		}
		m.mu.Lock()
		evicted := m.res != nil && m.compiled != cm
		m.mu.Unlock()
		if !evicted || try == 2 {
			return nil, err
		}
		// Evicted between its compilation and now (lru.go): compile again.
	}
	inst := &instance{
		mod:        mod,
		mem:        mod.Memory(),
		alloc:      mod.ExportedFunction("weft_v1_alloc"),
		call:       mod.ExportedFunction("weft_v1_call"),
		manifestFn: mod.ExportedFunction("weft_v1_manifest"),
		b:          b,
		lin:        lin,
	}
	if inst.mem == nil {
		mod.Close(ctx)
		return nil, errNoMemory
	}
	return inst, nil
}

func (inst *instance) close(ctx context.Context) { inst.mod.Close(ctx) }

// read copies a packed ptr<<32|len region out of guest memory.
func (inst *instance) read(packed uint64) ([]byte, error) {
	ptr, n := uint32(packed>>32), uint32(packed)
	b, ok := inst.mem.Read(ptr, n)
	if !ok {
		return nil, fmt.Errorf("region [%d, +%d) outside guest memory of %d bytes", ptr, n, inst.mem.Size())
	}
	return bytes.Clone(b), nil
}

func (inst *instance) manifest(ctx context.Context) ([]byte, error) {
	res, err := inst.manifestFn.Call(ctx)
	if err != nil {
		return nil, err
	}
	return inst.read(res[0])
}

// invoke writes req through weft_v1_alloc and runs weft_v1_call.
func (inst *instance) invoke(ctx context.Context, req []byte) ([]byte, error) {
	inst.lin.takeRefused()
	res, err := inst.alloc.Call(ctx, uint64(len(req)))
	if err != nil {
		return nil, err
	}
	ptr := uint32(res[0])
	if !inst.mem.Write(ptr, req) {
		return nil, &outputError{fmt.Sprintf("weft_v1_alloc(%d) returned %d, outside guest memory", len(req), ptr)}
	}
	res, err = inst.call.Call(ctx, uint64(ptr), uint64(len(req)))
	if err != nil {
		return nil, err
	}
	out, err := inst.read(res[0])
	if err != nil {
		return nil, &outputError{err.Error()}
	}
	return out, nil
}

// outputError is a protocol violation by the guest (bad pointers).
type outputError struct{ msg string }

func (e *outputError) Error() string { return e.msg }
