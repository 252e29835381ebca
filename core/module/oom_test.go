package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero/api"

	"github.com/weft-dev/weft/sdk/failure"
)

// A guest that runs out of memory is memory_limit, not trap, however it
// dies of it (issue 15 item 22): blocks of 1 MiB reach the cap itself; 20
// and 40 MiB blocks are refused far below it, and the Go runtime's fatal
// error (with 64 parked goroutines) was classified trap before the
// allocator recorded refused grows. Each run leaves the session's state as
// it was, and the module serves the next call.
func TestGuestOOMIsMemoryLimit(t *testing.T) {
	ctx := context.Background()
	m := compileFixture(t, newRuntime(t, Config{MemoryLimitMiB: 64, CallTimeout: 20 * time.Second}), "fx")
	ws := fxWorkspace(t)
	s := &Session{Workspace: ws}
	if _, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"keep","n":1}`)); err != nil {
		t.Fatal(err)
	}
	h := ws.Hash()
	for _, block := range []int{1, 20, 40} {
		for run := 0; run < 3; run++ {
			res, err := m.Call(ctx, s, "put_then_hoard", json.RawMessage(fmt.Sprintf(`{"id":"gone","n":%d}`, block)))
			var ce *CallError
			if !errors.Is(err, ErrMemoryLimit) || !errors.As(err, &ce) || res != nil {
				t.Fatalf("block %d MiB, run %d: err %v, res %+v; want memory_limit", block, run, err, res)
			}
			if k := failure.Of(err); k != failure.MemoryLimit {
				t.Errorf("block %d MiB, run %d: failure kind %q, want %q", block, run, k, failure.MemoryLimit)
			}
			if !strings.HasPrefix(ce.Message, "memory cap of 64 MiB exceeded") {
				t.Errorf("block %d MiB, run %d: message %q", block, run, ce.Message)
			}
			if ws.Hash() != h {
				t.Fatalf("block %d MiB, run %d: the failed call left a trace in the workspace", block, run)
			}
		}
	}
	// The next call runs on a fresh instance; a panic is still a trap (no
	// refusal carried over).
	if _, err := m.Call(ctx, s, "put_then_panic", json.RawMessage(`{"id":"gone","n":2}`)); !errors.Is(err, ErrTrap) {
		t.Fatalf("panic after the OOMs: %v, want trap", err)
	}
	res, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"next","n":3}`))
	if err != nil || string(res.StructuredContent) != `{"count":2}` {
		t.Fatalf("next call: %v %+v", err, res)
	}
	res, err = m.Call(ctx, s, "get", json.RawMessage(`{"id":"keep"}`))
	if err != nil || string(res.StructuredContent) != `{"id":"keep","n":1}` {
		t.Fatalf("get keep: %v %+v", err, res)
	}
}

// memDef is an api.MemoryDefinition with given sizes.
type memDef struct {
	api.MemoryDefinition
	min, max uint32
	encoded  bool
}

func (d memDef) Min() uint32         { return d.min }
func (d memDef) Max() (uint32, bool) { return d.max, d.encoded }

// A module's declared memory sizes are checked against the cap (wazero's
// own limit is the whole 4 GiB so that the allocator sees every grow).
func TestCheckMemorySizes(t *testing.T) {
	r := &Runtime{cfg: Config{MemoryLimitMiB: 64}} // 1024 pages
	for _, c := range []struct {
		def  memDef
		want string
	}{
		{memDef{min: 17}, ""},
		{memDef{min: 17, max: 1024, encoded: true}, ""},
		{memDef{min: 1025}, "min 1025 pages over the memory cap of 1024 pages (64 MiB)"},
		{memDef{min: 2, max: 2048, encoded: true}, "max 2048 pages over the memory cap of 1024 pages (64 MiB)"},
	} {
		err := r.checkMemorySizes(c.def)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%+v: %q, want %q", c.def, got, c.want)
		}
	}
}
