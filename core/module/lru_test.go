package module

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weft-dev/weft/sdk/abi"
)

// callGen calls module i's hash tool and checks its answer.
func callGen(t testing.TB, m *Module, i int, s *Session) {
	t.Helper()
	args := json.RawMessage(fmt.Sprintf(`{"key":"k%d"}`, i))
	req, _ := json.Marshal(abi.CallRequest{Tool: "hash", Arguments: args})
	res, err := m.Call(context.Background(), s, "hash", args)
	if err != nil || res.IsError {
		t.Fatalf("gen-%05d: %v %+v", i, err, res)
	}
	want := fmt.Sprintf("h=%08x", genHash(i, uint32(len(req))))
	if len(res.Content) != 1 || res.Content[0].Text != want {
		t.Fatalf("gen-%05d: answered %+v, want text %s", i, res.Content, want)
	}
}

// The generated modules are distinct, about the size of the C module, and
// compute what genHash says.
func TestGeneratedModules(t *testing.T) {
	a, b := genModule(1), genModule(2)
	if Digest(a) == Digest(b) {
		t.Fatal("two generated modules share a digest")
	}
	if len(a) < 30<<10 || len(a) > 45<<10 {
		t.Errorf("generated module is %d bytes, want about 35 KB", len(a))
	}
	r := newRuntime(t, Config{CacheDir: t.TempDir()})
	m, err := r.Compile(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	callGen(t, m, 1, &Session{Workspace: fxWorkspace(t)})
}

// Under a budget smaller than the modules, the least recently used are
// evicted and compiled again (from the file cache) on their next call,
// which still answers right; the charge stays within the budget; calls
// running on many modules at once (under -race) see no error.
func TestModuleLRU(t *testing.T) {
	ctx := context.Background()
	const n = 24
	cache := filepath.Join(t.TempDir(), "cache")
	r := newRuntime(t, Config{CacheDir: cache, ModuleMemoryMiB: 2})
	mods := make([]*Module, n)
	for i := range mods {
		m, err := r.Compile(ctx, genModule(i))
		if err != nil {
			t.Fatal(err)
		}
		mods[i] = m
	}
	st := r.LRUStats()
	if st.Evictions == 0 || st.Resident >= n || st.Bytes > st.Budget {
		t.Fatalf("after compiling %d modules under 2 MiB: %+v, want evictions and the charge within the budget", n, st)
	}
	if mods[0].Idle() != 0 {
		t.Errorf("evicted module 0 keeps %d idle instances", mods[0].Idle())
	}
	// The first module was evicted; its next call compiles it again.
	s := &Session{Workspace: fxWorkspace(t)}
	callGen(t, mods[0], 0, s)
	if got := r.LRUStats().Reloads; got != st.Reloads+1 {
		t.Errorf("reloads %d after calling an evicted module, want %d", got, st.Reloads+1)
	}
	// Reloaded from the file cache: the cache directory holds the code.
	if entries, err := os.ReadDir(cache); err != nil || len(entries) == 0 {
		t.Errorf("file cache %s: %v, %d entries", cache, err, len(entries))
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &Session{Workspace: fxWorkspace(t)}
			for k := range 3 * n {
				i := (k*7 + w*5) % n
				callGen(t, mods[i], i, s)
			}
		}()
	}
	wg.Wait()
	st = r.LRUStats()
	if st.Bytes > st.Budget || st.Reloads < n {
		t.Errorf("after calls over all modules: %+v, want reloads and the charge within the budget", st)
	}
	t.Logf("%+v", st)
}

// A module alone larger than the budget still runs (the module in use is
// never evicted), and without a budget nothing is tracked.
func TestModuleLRUEdges(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, Config{ModuleMemoryMiB: 1})
	m := compileFixture(t, r, "fx") // megabytes of wasm
	for k := range 3 {
		res, err := m.Call(ctx, &Session{Workspace: fxWorkspace(t)}, "put", json.RawMessage(fmt.Sprintf(`{"id":"a%d","n":1}`, k)))
		if err != nil || string(res.StructuredContent) != `{"count":1}` {
			t.Fatalf("call %d: %v %+v", k, err, res)
		}
	}
	if st := r.LRUStats(); st.Resident != 1 || st.Evictions != 0 || st.Bytes <= st.Budget {
		t.Errorf("one module over the budget: %+v, want it resident, over the budget, never evicted", st)
	}
	big := genModule(7)
	u := newRuntime(t, Config{})
	if _, err := u.Compile(ctx, big); err != nil {
		t.Fatal(err)
	}
	if st := u.LRUStats(); st.Resident != 0 || st.Budget != 0 {
		t.Errorf("no budget: %+v", st)
	}
	if _, err := NewRuntime(ctx, Config{ModuleMemoryMiB: -1}); err == nil {
		t.Error("a negative budget was accepted")
	}
}
