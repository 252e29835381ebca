package module

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestModuleLRUScale is the volume run of the module memory budget
// (docs/benchmarks.md, "Distinct compiled modules under a memory budget";
// `make scale-modules`): WEFT_SCALE_MODULES distinct generated modules of
// ~35 KB (genModule), each compiled and called once under a budget of
// WEFT_SCALE_BUDGET_MIB (default 64) smaller than all of them, then
//
//   - RSS (VmRSS) before and after, per module;
//   - cold first calls: a new session's first call on a module evicted by
//     the budget (compiled again from the file cache, instantiated,
//     called), p50/p99 of the wall time;
//   - warm first calls: a new session's first call on a resident module
//     (an idle instance in its pool), p50/p99.
//
// Skipped unless WEFT_SCALE_MODULES is set; TestModuleLRU is the slice in
// the normal go test.
func TestModuleLRUScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("WEFT_SCALE_MODULES"))
	if n <= 0 {
		t.Skip("set WEFT_SCALE_MODULES=N (make scale-modules)")
	}
	budget := 64
	if v, err := strconv.Atoi(os.Getenv("WEFT_SCALE_BUDGET_MIB")); err == nil && v > 0 {
		budget = v
	}
	ctx := context.Background()
	wasms := make([][]byte, n)
	var wasmBytes int
	for i := range wasms {
		wasms[i] = genModule(i)
		wasmBytes += len(wasms[i])
	}
	fxWorkspace(t) // the store, before the baseline
	runtime.GC()
	rss0 := vmRSS(t)
	r := newRuntime(t, Config{CacheDir: filepath.Join(t.TempDir(), "cache"), ModuleMemoryMiB: budget})
	mods := make([]*Module, n)
	start := time.Now()
	for i := range mods {
		m, err := r.Compile(ctx, wasms[i])
		if err != nil {
			t.Fatal(err)
		}
		mods[i] = m
		callGen(t, m, i, &Session{Workspace: fxWorkspace(t)})
	}
	compileAll := time.Since(start)
	runtime.GC()
	rss1 := vmRSS(t)
	st := r.LRUStats()
	t.Logf("%d distinct modules, %.1f KB of wasm each on average, budget %d MiB", n, float64(wasmBytes)/float64(n)/1024, budget)
	t.Logf("compile (cold file cache) + first call of every module: %s, %.1f ms per module", compileAll.Round(time.Millisecond), float64(compileAll.Milliseconds())/float64(n))
	t.Logf("RSS %d MiB before, %d MiB after: %.1f KiB per module; resident %d of %d, charge %.1f MiB, evictions %d",
		rss0>>20, rss1>>20, float64(rss1-rss0)/1024/float64(n), st.Resident, n, float64(st.Bytes)/(1<<20), st.Evictions)

	rng := rand.New(rand.NewPCG(1, 2))
	samples := min(300, n)
	var cold, warm []time.Duration
	for len(cold) < samples {
		i := rng.IntN(n)
		m := mods[i]
		m.mu.Lock()
		evicted := m.compiled == nil
		m.mu.Unlock()
		if !evicted {
			continue
		}
		s := &Session{Workspace: fxWorkspace(t)}
		t0 := time.Now()
		callGen(t, m, i, s)
		cold = append(cold, time.Since(t0))
		// warm: the module is now resident with an idle instance
		s2 := &Session{Workspace: fxWorkspace(t)}
		t0 = time.Now()
		callGen(t, m, i, s2)
		warm = append(warm, time.Since(t0))
	}
	p := func(d []time.Duration, q float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[min(len(s)-1, int(q*float64(len(s))))]
	}
	st = r.LRUStats()
	t.Logf("cold first call (evicted, reloaded from the file cache): p50 %s, p99 %s over %d", p(cold, .5), p(cold, .99), len(cold))
	t.Logf("warm first call in a new session: p50 %s, p99 %s over %d", p(warm, .5), p(warm, .99), len(warm))
	t.Logf("after: %+v", st)
	if p(cold, .99) > 100*time.Millisecond {
		t.Errorf("cold first call p99 %s, goal <= 100ms", p(cold, .99))
	}
	if p(warm, .5) > 2*time.Millisecond {
		t.Errorf("warm first call p50 %s, goal <= 2ms", p(warm, .5))
	}
}

// vmRSS is the process's resident set size in bytes.
func vmRSS(t testing.TB) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
