package module

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/weft-dev/weft/core/state"
)

// The host's own cost of a call through Module.Call (argument validation,
// the call environment, the unit of work, the instance, the answer's
// decoding), measured with cheap guests:
//
//   - gen-hash: a generated reactor (genModule) whose hash tool runs no SQL
//     and answers a few bytes: the host floor of a call;
//   - c-notes-count: the C module examples/modules/c-notes (built with
//     clang for wasm32-wasi; skipped without clang), count_notes: one
//     SELECT COUNT(*) through weft_sql_v1.
//
// CPU per call is process user+system time (getrusage), cpu-µs/op.

func BenchmarkCallHostFloor(b *testing.B) {
	ctx := context.Background()
	b.Run("gen-hash", func(b *testing.B) {
		r := newRuntime(b, Config{CacheDir: b.TempDir()})
		m, err := r.Compile(ctx, genModule(3))
		if err != nil {
			b.Fatal(err)
		}
		s := &Session{Workspace: fxWorkspace(b)}
		callGen(b, m, 3, s) // checks the answer against genHash
		args := json.RawMessage(`{"key":"k3"}`)
		want := ""
		benchCalls(b, func() {
			res, err := m.Call(ctx, s, "hash", args)
			if err != nil || res.IsError || len(res.Content) != 1 || (want != "" && res.Content[0].Text != want) {
				b.Fatalf("hash: %v %+v", err, res)
			}
			want = res.Content[0].Text
		})
	})
	b.Run("c-notes-count", func(b *testing.B) {
		wasm := buildCNotes(b)
		r := newRuntime(b, Config{CacheDir: b.TempDir()})
		m, err := r.Compile(ctx, wasm)
		if err != nil {
			b.Fatal(err)
		}
		schema, err := os.ReadFile("../../examples/modules/c-notes/schema.sql")
		if err != nil {
			b.Fatal(err)
		}
		st := state.NewStore()
		v, err := st.Load(ctx, string(schema))
		if err != nil {
			b.Fatal(err)
		}
		s := &Session{Workspace: st.Fork(v)}
		if _, err := m.Call(ctx, s, "add_note", json.RawMessage(`{"text":"a"}`)); err != nil {
			b.Fatal(err)
		}
		benchCalls(b, func() {
			res, err := m.Call(ctx, s, "count_notes", json.RawMessage(`{}`))
			if err != nil || res.IsError || string(res.StructuredContent) != `{"count":1}` {
				b.Fatalf("count_notes: %v %+v", err, res)
			}
		})
	})
}

// benchCalls runs call b.N times, reporting allocations and cpu-µs/op.
func benchCalls(b *testing.B, call func()) {
	call() // warm: the instance pool, the plan caches
	runtime.GC()
	b.ReportAllocs()
	c0 := processCPU()
	for b.Loop() {
		call()
	}
	b.ReportMetric(float64((processCPU()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
}

// buildCNotes compiles examples/modules/c-notes/notes.c as its Makefile
// does, or skips b without clang.
func buildCNotes(b *testing.B) []byte {
	if _, err := exec.LookPath("clang"); err != nil {
		b.Skip("no clang")
	}
	out := filepath.Join(b.TempDir(), "notes.wasm")
	cmd := exec.Command("clang", "--target=wasm32-wasi", "-O2", "-std=c11", "-mexec-model=reactor",
		"-Wl,--strip-all", "-o", out, "../../examples/modules/c-notes/notes.c")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.Skipf("clang: %v\n%s", err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		b.Fatal(err)
	}
	return wasm
}
