package module

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	clockhost "github.com/weft-dev/weft/hosts/clock"
	fshost "github.com/weft-dev/weft/hosts/fs"
	loghost "github.com/weft-dev/weft/hosts/log"
	randhost "github.com/weft-dev/weft/hosts/rand"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
)

// Config configures a Runtime. Zero values take the defaults.
type Config struct {
	// CacheDir is wazero's file compilation cache directory, shared across
	// processes; empty keeps compiled code in memory only.
	CacheDir string
	// MemoryLimitMiB caps each instance's linear memory (default 256).
	MemoryLimitMiB uint32
	// CallTimeout bounds one tool call (default 2s); the caller's context
	// deadline applies too.
	CallTimeout time.Duration
	// ModuleMemoryMiB bounds the memory of the compiled wasm modules kept
	// resident (their estimated compiled code and idle instances, lru.go):
	// over it the least recently used are evicted and compiled again on
	// their next call, from the file compilation cache when CacheDir is
	// set. 0 (the default): no bound, nothing evicted.
	ModuleMemoryMiB int
	// ExportTimeout bounds a call of the export hook (ExportTool), which
	// serializes the module's whole state (default 60s).
	ExportTimeout time.Duration
	// MaxIdleInstances bounds the warm instances kept per module (default
	// 2 × GOMAXPROCS). More run concurrently when needed; extra ones are
	// closed when released.
	MaxIdleInstances int
	// MaxConcurrentCalls bounds the module calls (tool calls, resource
	// reads, prompts, exports) running at once over all modules of the
	// runtime (default GOMAXPROCS). Further calls wait for a slot; their
	// deadline starts when they run, so an overloaded server queues calls
	// instead of timing them out, and keeps instance churn low.
	MaxConcurrentCalls int
}

const (
	defaultMemoryMiB     = 256
	defaultCallTimeout   = 2 * time.Second
	defaultExportTimeout = 60 * time.Second
	pageSize             = 64 << 10
)

// Runtime compiles and runs tool modules: one wazero runtime with the WASI
// and weft host libraries, a compiled-module table keyed by the wasm's
// sha256 digest, and per-module pools of warm instances shared by all
// sessions. It is safe for concurrent use.
type Runtime struct {
	cfg   Config
	rt    wazero.Runtime // every module, instrumented with interrupt checks (interrupt.go)
	cache wazero.CompilationCache

	mu      sync.Mutex
	closed  bool
	modules map[string]*compileEntry
	slots   chan struct{} // MaxConcurrentCalls admission tokens
	// interps maps an interpreter bundle's digest to its compiled Module
	// (Load of a server bundle): thousands of servers name one interpreter,
	// whose bundle (megabytes of wasm) is then read and hashed once, not
	// once per server.
	interps map[string]*Module
	lru     moduleLRU // resident modules under ModuleMemoryMiB (lru.go)
}

type compileEntry struct {
	done chan struct{}
	mod  *Module
	err  error
}

// withDefaults fills in the defaults of zero fields.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.MemoryLimitMiB == 0 {
		cfg.MemoryLimitMiB = defaultMemoryMiB
	}
	if cfg.MemoryLimitMiB > 4096 {
		return cfg, fmt.Errorf("module: memory limit %d MiB exceeds the 4 GiB of wasm32", cfg.MemoryLimitMiB)
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = defaultCallTimeout
	}
	if cfg.ExportTimeout <= 0 {
		cfg.ExportTimeout = defaultExportTimeout
	}
	if cfg.MaxIdleInstances <= 0 {
		cfg.MaxIdleInstances = 2 * runtime.GOMAXPROCS(0)
	}
	if cfg.MaxConcurrentCalls <= 0 {
		cfg.MaxConcurrentCalls = runtime.GOMAXPROCS(0)
	}
	if cfg.ModuleMemoryMiB < 0 {
		return cfg, fmt.Errorf("module: negative module memory budget %d MiB", cfg.ModuleMemoryMiB)
	}
	return cfg, nil
}

// NewRuntime creates a Runtime.
func NewRuntime(ctx context.Context, cfg Config) (*Runtime, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	var cache wazero.CompilationCache
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("module: compilation cache: %w", err)
		}
		cache = c
	} else {
		cache = wazero.NewCompilationCache()
	}
	rt, err := newWazero(ctx, cache)
	if err != nil {
		cache.Close(ctx)
		return nil, err
	}
	r := &Runtime{cfg: cfg, rt: rt, cache: cache, modules: map[string]*compileEntry{}, interps: map[string]*Module{},
		slots: make(chan struct{}, cfg.MaxConcurrentCalls)}
	if cfg.ModuleMemoryMiB > 0 {
		r.lru.budget = uint64(cfg.ModuleMemoryMiB) << 20
	}
	return r, nil
}

// admit waits for one of the MaxConcurrentCalls slots; the returned func
// frees it. A ctx done while waiting gives ErrCanceled.
func (r *Runtime) admit(ctx context.Context) (func(), error) {
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }, nil
	default:
	}
	select {
	case r.slots <- struct{}{}:
		return func() { <-r.slots }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: while waiting for a free call slot: %v", ErrCanceled, ctx.Err())
	}
}

// newWazero creates a wazero runtime with the WASI and weft host libraries
// and the interrupt module's yield (interrupt.go; wazero's own
// close-on-deadline check stays off).
func newWazero(ctx context.Context, cache wazero.CompilationCache) (wazero.Runtime, error) {
	rc := wazero.NewRuntimeConfig().
		// wazero's own limit is wasm32's whole 4 GiB so that every grow
		// reaches the instance's allocator, which enforces the cap and
		// records a refusal (capMemory): a guest's out-of-memory is then
		// memory_limit however the guest dies of it. compile checks a
		// module's declared sizes against the cap.
		WithMemoryLimitPages(maxPages).
		WithCompilationCache(cache)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	for _, inst := range []func(context.Context, wazero.Runtime) error{
		func(ctx context.Context, rt wazero.Runtime) error {
			_, err := wasi_snapshot_preview1.Instantiate(ctx, rt)
			return err
		},
		func(ctx context.Context, rt wazero.Runtime) error { _, err := sqlhost.Instantiate(ctx, rt); return err },
		func(ctx context.Context, rt wazero.Runtime) error {
			_, err := clockhost.Instantiate(ctx, rt)
			return err
		},
		func(ctx context.Context, rt wazero.Runtime) error {
			_, err := randhost.Instantiate(ctx, rt)
			return err
		},
		func(ctx context.Context, rt wazero.Runtime) error { _, err := loghost.Instantiate(ctx, rt); return err },
		func(ctx context.Context, rt wazero.Runtime) error { _, err := fshost.Instantiate(ctx, rt); return err },
		instantiateInterrupt,
	} {
		if err := inst(ctx, rt); err != nil {
			rt.Close(ctx)
			return nil, fmt.Errorf("module: host libraries: %w", err)
		}
	}
	return rt, nil
}

// cachedInterpreter is the Module of interpreter bundle digest ref loaded
// before, or nil.
func (r *Runtime) cachedInterpreter(ref string) *Module {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.interps[ref]
}

// keepInterpreter remembers m as the Module of interpreter bundle digest
// ref.
func (r *Runtime) keepInterpreter(ref string, m *Module) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.interps != nil && strings.HasPrefix(ref, "sha256:") {
		r.interps[ref] = m
	}
}

// Config returns the effective configuration (defaults filled in).
func (r *Runtime) Config() Config { return r.cfg }

// Close closes every instance and compiled module. Calls in progress fail.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	mods := r.modules
	r.modules = nil
	r.interps = nil
	r.mu.Unlock()
	for _, e := range mods {
		select {
		case <-e.done:
			if e.mod != nil {
				e.mod.drain(ctx)
			}
		default:
		}
	}
	err := r.rt.Close(ctx)
	if cerr := r.cache.Close(ctx); err == nil {
		err = cerr
	}
	return err
}

// Digest is the content address of a wasm module: "sha256:<hex>".
func Digest(wasm []byte) string {
	sum := sha256.Sum256(wasm)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Compile compiles wasm once per digest (concurrent calls for the same
// bytes share one compilation), reads its manifest from a first instance and
// validates it. Errors are *ModuleError (ErrInvalidModule) or ErrClosed.
func (r *Runtime) Compile(ctx context.Context, wasm []byte) (*Module, error) {
	digest := Digest(wasm)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if e, ok := r.modules[digest]; ok {
		r.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return e.mod, e.err
	}
	e := &compileEntry{done: make(chan struct{})}
	r.modules[digest] = e
	r.mu.Unlock()

	e.mod, e.err = r.compile(ctx, digest, wasm)
	if e.err != nil {
		r.mu.Lock()
		if r.modules != nil {
			delete(r.modules, digest) // a later Compile may retry
		}
		r.mu.Unlock()
	}
	close(e.done)
	return e.mod, e.err
}

// required exports of ABI v1.
var abiExports = []string{"_initialize", "weft_abi_v1", "weft_v1_alloc", "weft_v1_manifest", "weft_v1_call"}

// provided import namespaces and the host library they belong to ("" for
// WASI, always available).
var providedImports = map[string]string{
	wasi_snapshot_preview1.ModuleName: "",
	sqlhost.ModuleName:                "sql",
	sqlhost.ModuleNameV2:              "sql",
	clockhost.ModuleName:              "clock",
	randhost.ModuleName:               "rand",
	loghost.ModuleName:                "log",
	fshost.ModuleName:                 "fs",
}

func (r *Runtime) compile(ctx context.Context, digest string, wasm []byte) (*Module, error) {
	bad := func(reason string, err error) error {
		return &ModuleError{Digest: digest, Reason: reason, Err: err}
	}
	wrt := r.rt
	wasm, err := instrumentInterrupt(wasm)
	if err != nil {
		return nil, bad("adding the deadline checks (interrupt.go)", err)
	}
	cm, err := wrt.CompileModule(ctx, wasm)
	if err != nil {
		return nil, bad("compiling", err)
	}
	ok := false
	defer func() {
		if !ok {
			cm.Close(ctx)
		}
	}()
	exp := cm.ExportedFunctions()
	for _, name := range abiExports {
		if _, found := exp[name]; !found {
			return nil, bad(fmt.Sprintf("missing export %s (not an ABI v1 reactor)", name), nil)
		}
	}
	mem, found := cm.ExportedMemories()["memory"]
	if !found {
		return nil, bad("missing exported memory", nil)
	}
	if err := r.checkMemorySizes(mem); err != nil {
		return nil, bad("memory", err)
	}
	usedHosts := map[string]bool{}
	for _, f := range cm.ImportedFunctions() {
		mod, name, _ := f.Import()
		if mod == interruptModule {
			continue // added by instrumentInterrupt, refused in the original
		}
		lib, found := providedImports[mod]
		if !found {
			return nil, bad(fmt.Sprintf("imports %s.%s: namespace not provided", mod, name), nil)
		}
		if lib != "" {
			usedHosts[lib] = true
		}
	}
	m := &Module{rt: r, wrt: wrt, digest: digest, compiled: cm}
	inst, err := m.instantiate(ctx)
	if err != nil {
		return nil, bad("instantiating", err)
	}
	raw, err := inst.manifest(ctx)
	if err != nil {
		inst.close(ctx)
		return nil, bad("reading the manifest", err)
	}
	if err := json.Unmarshal(raw, &m.manifest); err != nil {
		inst.close(ctx)
		return nil, bad("manifest is not JSON", err)
	}
	schemas, err := m.manifest.compileSchemas()
	if err != nil {
		inst.close(ctx)
		return nil, bad("manifest", err)
	}
	for lib := range usedHosts {
		if _, declared := m.manifest.Hosts[lib]; !declared {
			inst.close(ctx)
			return nil, bad(fmt.Sprintf("imports host library %s without declaring it in the manifest", lib), nil)
		}
	}
	m.schemas = schemas
	m.manifestJSON = raw
	m.policy = m.manifest.SQLPolicy()
	ok = true
	r.admitModule(ctx, m, wasm)
	m.release(ctx, inst)
	return m, nil
}

// Module is a compiled, validated tool module with its pool of warm
// instances (or, from NewNative, a module's Go code run natively). It is
// safe for concurrent use; Call runs each call on its own instance.
type Module struct {
	rt           *Runtime
	wrt          wazero.Runtime // r.rt
	digest       string
	compiled     wazero.CompiledModule
	manifest     Manifest
	manifestJSON []byte
	schemas      map[string]*jsonschema.Schema
	policy       sqlhost.Policy
	native       Dispatch   // NewNative: the module's Go code, run without wasm
	nativeMu     sync.Mutex // native calls run one at a time
	// srv is set for a synthesized server (server_module.go): its program
	// and the interpreter Module whose instances run its calls.
	srv *serverLayer
	// toolPolicy, when set, is the table policy of each tool (a
	// synthesized server's reads/writes); other requests use policy.
	toolPolicy map[string]sqlhost.Policy
	// res is the module's place among the resident modules under
	// Config.ModuleMemoryMiB (lru.go); nil without a budget. compiled is
	// nil while the module is evicted.
	res *residency

	mu      sync.Mutex
	free    []*instance
	drained bool
}

// Manifest returns the module's manifest. Callers must not modify it.
func (m *Module) Manifest() *Manifest { return &m.manifest }

// ManifestJSON returns the manifest exactly as the module returned it.
func (m *Module) ManifestJSON() []byte { return m.manifestJSON }

// Digest returns the module's content address, "sha256:<hex>" of the wasm.
func (m *Module) Digest() string { return m.digest }

// Idle returns the number of warm instances in the pool.
func (m *Module) Idle() int {
	if m.srv != nil {
		return m.srv.interp.Idle()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.free)
}

// acquire takes a warm instance from the pool or instantiates a new one.
// For a synthesized server it takes an instance of its interpreter that
// holds the server's program when one is idle (program affinity: a pooled
// instance that has not been sent the program must decode and initialize
// it first, several times the cost of the call itself in wasm).
func (m *Module) acquire(ctx context.Context) (*instance, error) {
	if m.srv != nil {
		return m.srv.interp.acquireFor(ctx, m.srv.digest)
	}
	return m.acquireFor(ctx, "")
}

// acquireFor is acquire preferring, among the idle instances, the most
// recently released one holding program (any, when program is "").
func (m *Module) acquireFor(ctx context.Context, program string) (*instance, error) {
	m.rt.touch(m)
	m.mu.Lock()
	if m.drained {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	if n := len(m.free); n > 0 {
		i := n - 1
		if program != "" {
			for j := n - 1; j >= 0; j-- {
				if m.free[j].programs[program] {
					i = j
					break
				}
			}
		}
		inst := m.free[i]
		copy(m.free[i:], m.free[i+1:])
		m.free[n-1] = nil
		m.free = m.free[:n-1]
		m.mu.Unlock()
		m.rt.chargeIdle(ctx, m, -instanceCharge(inst))
		return inst, nil
	}
	m.mu.Unlock()
	return m.instantiate(ctx)
}

// release returns a healthy instance to the pool (or closes it when the
// pool is full).
func (m *Module) release(ctx context.Context, inst *instance) {
	if m.srv != nil {
		m.srv.interp.release(ctx, inst)
		return
	}
	inst.b.reset()
	// The charge is read while inst is still ours: once it is in the pool
	// another call may take it and grow its memory.
	charge := instanceCharge(inst)
	m.mu.Lock()
	if !m.drained && len(m.free) < m.rt.cfg.MaxIdleInstances && (m.res == nil || m.compiled != nil) {
		m.free = append(m.free, inst)
		m.mu.Unlock()
		m.rt.chargeIdle(ctx, m, charge)
		return
	}
	m.mu.Unlock()
	inst.close(ctx)
}

func (m *Module) drain(ctx context.Context) {
	m.mu.Lock()
	free := m.free
	m.free = nil
	m.drained = true
	m.mu.Unlock()
	for _, inst := range free {
		inst.close(ctx)
	}
}

var errNoMemory = errors.New("module exports no memory")
