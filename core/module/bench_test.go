package module

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkAcquireWarm: take an instance from a warm pool and put it back.
func BenchmarkAcquireWarm(b *testing.B) {
	ctx := context.Background()
	m := compileFixture(b, newRuntime(b, Config{}), "fx")
	b.ReportAllocs()
	for b.Loop() {
		inst, err := m.acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		m.release(ctx, inst)
	}
}

// BenchmarkInstantiate: a new instance (pool miss), including _initialize.
func BenchmarkInstantiate(b *testing.B) {
	ctx := context.Background()
	m := compileFixture(b, newRuntime(b, Config{}), "fx")
	for b.Loop() {
		inst, err := m.instantiate(ctx)
		if err != nil {
			b.Fatal(err)
		}
		inst.close(ctx)
	}
}

// BenchmarkFirstCall: a new Runtime, Compile and the first call, with the
// compilation cache directory cold (empty) or warm.
func BenchmarkFirstCall(b *testing.B) {
	wasm := fixture(b, "fx")
	run := func(b *testing.B, dir string) {
		ctx := context.Background()
		r, err := NewRuntime(ctx, Config{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close(ctx)
		m, err := r.Compile(ctx, wasm)
		if err != nil {
			b.Fatal(err)
		}
		s := &Session{Workspace: fxWorkspace(b)}
		if _, err := m.Call(ctx, s, "get", json.RawMessage(`{"id":"x"}`)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("cold", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			dir := filepath.Join(b.TempDir(), "c")
			run(b, dir)
		}
	})
	b.Run("warm", func(b *testing.B) {
		dir := filepath.Join(b.TempDir(), "c")
		run(b, dir)
		for b.Loop() {
			run(b, dir)
		}
	})
}

// BenchmarkCallRoundTrip: one read-only call (one SELECT by key) through a
// warm pool.
func BenchmarkCallRoundTrip(b *testing.B) {
	ctx := context.Background()
	m := compileFixture(b, newRuntime(b, Config{}), "fx")
	ws := fxWorkspace(b)
	s := &Session{Workspace: ws}
	if _, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"a","n":1}`)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		res, err := m.Call(ctx, s, "get", json.RawMessage(`{"id":"a"}`))
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkPooledInstanceMemory reports the guest linear memory and the Go
// heap growth per pooled instance.
func BenchmarkPooledInstanceMemory(b *testing.B) {
	ctx := context.Background()
	const n = 16
	for b.Loop() {
		r := newRuntime(b, Config{MaxIdleInstances: n})
		m := compileFixture(b, r, "fx")
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		insts := make([]*instance, n)
		for i := range insts {
			inst, err := m.instantiate(ctx)
			if err != nil {
				b.Fatal(err)
			}
			insts[i] = inst
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(insts[0].mem.Size())/(1<<20), "guestMiB/inst")
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n/(1<<20), "heapMiB/inst")
		for _, inst := range insts {
			inst.close(ctx)
		}
		r.Close(ctx)
	}
	_ = os.Getpid
}
