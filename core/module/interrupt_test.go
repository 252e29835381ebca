package module

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/sys"
)

func TestInstrumentInterrupt(t *testing.T) {
	wasm := fixture(t, "fx")
	iw, err := instrumentInterrupt(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := instrumentInterrupt(iw); !errors.Is(err, errNoInstrument) {
		t.Fatalf("instrumenting twice (the import of %s exists): %v", interruptModule, err)
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), wasm[:len(wasm)/2]} {
		if _, err := instrumentInterrupt(bad); err == nil {
			t.Errorf("%d bytes: no error", len(bad))
		}
	}
	m := compileFixture(t, newRuntime(t, Config{}), "fx")
	var yields int
	for _, f := range m.compiled.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == interruptModule && name == yieldName {
			yields++
		}
	}
	if yields != 1 {
		t.Fatalf("fx imports %s.%s %d times, want 1", interruptModule, yieldName, yields)
	}
}

// wasmModule assembles a binary from (id, body) sections.
func wasmModule(secs ...[]byte) []byte {
	out := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range secs {
		out = append(out, s[0])
		out = appendU32(out, uint32(len(s)-1))
		out = append(out, s[1:]...)
	}
	return out
}

// vec encodes a vector of already encoded entries.
func vec(id byte, entries ...[]byte) []byte {
	out := appendU32([]byte{id}, uint32(len(entries)))
	for _, e := range entries {
		out = append(out, e...)
	}
	return out
}

// body encodes a function body without locals.
func body(code ...byte) []byte {
	b := append([]byte{0}, code...)
	return append(appendU32(nil, uint32(len(b))), b...)
}

// renumberFixture is a module that references its defined functions in
// every way instrumentInterrupt renumbers: an imported function (index 0),
// then defined ones called directly, through a table (element segment of
// flags 0 and an expression segment of flags 4), by ref.func in a global,
// as exports and from the start function:
//
//	0 import m.bump: () -> ()     (counts start runs)
//	1 run(x) = inc(x) + indirect(x)   (exported)
//	2 inc(x) = x + 1
//	3 twice(x) = x * 2
//	4 start: call bump
//	5 fib(n) = n < 2 ? n : fib(n-1) + fib(n-2)   (recursion, no loop; exported)
//	6 spin() = loop br 0 end      (exported)
func renumberFixture() []byte {
	types := vec(1,
		[]byte{0x60, 0, 0},             // 0: () -> ()
		[]byte{0x60, 1, 0x7F, 1, 0x7F}, // 1: i32 -> i32
	)
	imp := vec(2, append(appendName(appendName(nil, "m"), "bump"), 0x00, 0x00))
	funcs := vec(3, []byte{1}, []byte{1}, []byte{1}, []byte{0}, []byte{1}, []byte{0})
	table := vec(4, []byte{0x70, 0x00, 2})
	globals := vec(6, []byte{0x70, 0x00, 0xD2, 3, 0x0B}) // funcref = ref.func twice
	exports := vec(7,
		append(appendName(nil, "run"), 0x00, 1),
		append(appendName(nil, "fib"), 0x00, 5),
		append(appendName(nil, "spin"), 0x00, 6),
	)
	start := []byte{8, 4}
	elems := vec(9,
		[]byte{0x00, 0x41, 0x00, 0x0B, 1, 2},             // table[0] = inc
		[]byte{0x04, 0x41, 0x01, 0x0B, 1, 0xD2, 3, 0x0B}, // table[1] = twice
	)
	code := vec(10,
		// run: inc(x) + call_indirect table[1](x)
		body(0x20, 0, 0x10, 2, 0x20, 0, 0x41, 1, 0x11, 1, 0, 0x6A, 0x0B),
		body(0x20, 0, 0x41, 1, 0x6A, 0x0B),
		body(0x20, 0, 0x41, 2, 0x6C, 0x0B),
		body(0x10, 0, 0x0B),
		// fib: if n < 2 then n else fib(n-1) + fib(n-2)
		body(0x20, 0, 0x41, 2, 0x48, 0x04, 0x7F, 0x20, 0, 0x05,
			0x20, 0, 0x41, 1, 0x6B, 0x10, 5, 0x20, 0, 0x41, 2, 0x6B, 0x10, 5, 0x6A, 0x0B, 0x0B),
		body(0x03, 0x40, 0x0C, 0, 0x0B, 0x0B),
	)
	return wasmModule(types, imp, funcs, table, globals, exports, start, elems, code)
}

// The renumbered module computes what the original does: direct calls,
// table calls from both segment forms, the start function, exports.
func TestInstrumentRenumbers(t *testing.T) {
	ctx := context.Background()
	orig := renumberFixture()
	iw, err := instrumentInterrupt(orig)
	if err != nil {
		t.Fatal(err)
	}
	for _, wasm := range [][]byte{orig, iw} {
		rt := wazero.NewRuntime(ctx)
		var bumps atomic.Int32
		if _, err := rt.NewHostModuleBuilder("m").NewFunctionBuilder().
			WithFunc(func() { bumps.Add(1) }).Export("bump").Instantiate(ctx); err != nil {
			t.Fatal(err)
		}
		if err := instantiateInterrupt(ctx, rt); err != nil {
			t.Fatal(err)
		}
		mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(""))
		if err != nil {
			t.Fatalf("%d bytes: %v", len(wasm), err)
		}
		if bumps.Load() != 1 {
			t.Errorf("start function ran %d times, want 1", bumps.Load())
		}
		got, err := mod.ExportedFunction("run").Call(ctx, 20)
		if err != nil || api.DecodeI32(got[0]) != 61 { // (20+1) + 20*2
			t.Errorf("run(20) = %v, %v; want 61", got, err)
		}
		got, err = mod.ExportedFunction("fib").Call(ctx, 20)
		if err != nil || api.DecodeI32(got[0]) != 6765 {
			t.Errorf("fib(20) = %v, %v; want 6765", got, err)
		}
		rt.Close(ctx)
	}
}

// Deadline checks reach recursion without loops (function entries) and a
// loop without calls (loop headers), and a cancel stops them too.
func TestInstrumentStopsRecursionAndLoops(t *testing.T) {
	ctx := context.Background()
	iw, err := instrumentInterrupt(renumberFixture())
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, err := rt.NewHostModuleBuilder("m").NewFunctionBuilder().WithFunc(func() {}).Export("bump").Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := instantiateInterrupt(ctx, rt); err != nil {
		t.Fatal(err)
	}
	mod, err := rt.InstantiateWithConfig(ctx, iw, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		fn   string
		args []uint64
		code uint32
	}{
		{"fib", []uint64{60}, sys.ExitCodeDeadlineExceeded},
		{"spin", nil, sys.ExitCodeDeadlineExceeded},
		{"spin", nil, sys.ExitCodeContextCanceled},
	} {
		var cctx context.Context
		var cancel context.CancelFunc
		if tc.code == sys.ExitCodeDeadlineExceeded {
			cctx, cancel = context.WithTimeout(ctx, 100*time.Millisecond)
		} else {
			cctx, cancel = context.WithCancel(ctx)
			time.AfterFunc(100*time.Millisecond, cancel)
		}
		start := time.Now()
		_, err := mod.ExportedFunction(tc.fn).Call(cctx, tc.args...)
		cancel()
		var exit *sys.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
			t.Errorf("%s: %v, want exit code %d", tc.fn, err, tc.code)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: stopped after %s, want about 100ms", tc.fn, d)
		}
	}
}

// A module the rewriter does not understand (here a SIMD instruction) is
// refused at Compile with a clear reason: no module runs without the checks.
func TestInstrumentRefusesUnknownOpcodes(t *testing.T) {
	wasm := wasmModule(
		vec(1, []byte{0x60, 0, 0}),
		vec(3, []byte{0}),
		vec(10, body(0xFD, 0x0C, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x1A, 0x0B)),
	)
	if _, err := instrumentInterrupt(wasm); !errors.Is(err, errNoInstrument) {
		t.Fatalf("instrument: %v, want errNoInstrument", err)
	}
	_, err := newRuntime(t, Config{}).Compile(context.Background(), wasm)
	var me *ModuleError
	if !errors.As(err, &me) || !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("Compile: %v, want a *ModuleError (ErrInvalidModule)", err)
	}
}

// A guest spinning in a loop without host calls while other goroutines
// force garbage collections: the collections complete during the call (the
// yields are Go safepoints), and the deadline still stops the guest. Under
// GOMAXPROCS 1 and 2 (the instrumentation without yields deadlocked here:
// the stop-the-world waited for the guest, the guest for the deadline).
func TestSpinningGuestUnderGC(t *testing.T) {
	r := newRuntime(t, Config{CallTimeout: 400 * time.Millisecond})
	m := compileFixture(t, r, "fx")
	for _, procs := range []int{1, 2} {
		prev := runtime.GOMAXPROCS(procs)
		s := &Session{Workspace: fxWorkspace(t)}
		h := s.Workspace.Hash()
		done := make(chan struct{})
		var gcs atomic.Int32
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				runtime.GC()
				gcs.Add(1)
			}
		}()
		start := time.Now()
		_, err := m.Call(context.Background(), s, "put_then_loop", json.RawMessage(`{"id":"z","n":1}`))
		elapsed := time.Since(start)
		// Collections completed while the guest was still looping.
		during := gcs.Load()
		close(done)
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != ErrDeadline {
			t.Fatalf("GOMAXPROCS=%d: got %v, want a deadline error", procs, err)
		}
		if elapsed < 400*time.Millisecond || elapsed > 5*time.Second {
			t.Errorf("GOMAXPROCS=%d: the call took %s, want about its 400ms deadline", procs, elapsed)
		}
		if during < 1 {
			t.Errorf("GOMAXPROCS=%d: no garbage collection completed during the spinning call", procs)
		}
		// The failed call rolled back its insert.
		if s.Workspace.Hash() != h {
			t.Errorf("GOMAXPROCS=%d: the failed call left a trace in the workspace", procs)
		}
		t.Logf("GOMAXPROCS=%d: deadline after %s, %d collections during the call", procs, elapsed.Round(time.Millisecond), during)
	}
}
