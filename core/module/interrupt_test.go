package module

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func TestInstrumentInterrupt(t *testing.T) {
	wasm := fixture(t, "fx")
	iw, err := instrumentInterrupt(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := instrumentInterrupt(iw); !errors.Is(err, errNoInstrument) {
		t.Fatalf("instrumenting twice (export %s exists): %v", interruptExport, err)
	}
	for _, bad := range [][]byte{nil, []byte("\x00asm\x02\x00\x00\x00"), wasm[:len(wasm)/2]} {
		if _, err := instrumentInterrupt(bad); err == nil {
			t.Errorf("%d bytes: no error", len(bad))
		}
	}
	m := compileFixture(t, newRuntime(t, Config{FastInterrupt: true}), "fx")
	if m.wrt != m.rt.rt {
		t.Fatal("fx is not on the instrumented runtime")
	}
	// By default modules run with wazero's own check (Go safepoints in
	// loops), not instrumented.
	if d := compileFixture(t, newRuntime(t, Config{}), "fx"); d.wrt == d.rt.rt {
		t.Fatal("instrumented without FastInterrupt")
	}
	inst, err := m.acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if inst.interrupt == nil {
		t.Fatal("no interrupt global")
	}
	m.release(context.Background(), inst)
}

// A module the rewriter cannot handle runs on the runtime with wazero's
// own deadline check: still stopped at the deadline.
func TestUninstrumentedModuleDeadline(t *testing.T) {
	wasm := fixture(t, "fx")
	r := newRuntime(t, Config{CallTimeout: 300 * time.Millisecond})
	m, err := r.compile(context.Background(), "sha256:x", wasm)
	if err != nil {
		t.Fatal(err)
	}
	m.drain(context.Background())
	// Force the fallback path by compiling on the checked runtime directly.
	wrt, err := r.checkedRuntime(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cm, err := wrt.CompileModule(context.Background(), wasm)
	if err != nil {
		t.Fatal(err)
	}
	um := &Module{rt: r, wrt: wrt, compiled: cm, manifest: m.manifest, schemas: m.schemas, policy: m.policy}
	s := &Session{Workspace: fxWorkspace(t)}
	_, err = um.Call(context.Background(), s, "put_then_loop", json.RawMessage(`{"id":"z","n":1}`))
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != ErrDeadline {
		t.Fatalf("got %v, want a deadline error", err)
	}
}
