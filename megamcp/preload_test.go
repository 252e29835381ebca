package megamcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/sdk/spec"
)

// manyServers stores n generated variants of the bank spec (each its own
// name bank-vNNN, description and program) in reg and returns their names.
func manyServers(t testing.TB, reg *module.Registry, n int) []string {
	t.Helper()
	megamcptest.PutServer(t, reg, bankSpec)
	interp, err := reg.Resolve(module.InterpreterName)
	if err != nil {
		t.Fatal(err)
	}
	base, err := spec.Load(megamcptest.Root() + "/" + bankSpec)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, n)
	for i := range n {
		v := *base
		v.Name = fmt.Sprintf("bank-v%03d", i)
		v.Description = fmt.Sprintf("generated variant %d of the bank spec", i)
		v.Program = fmt.Sprintf("# generated variant %d\n%s", i, base.Program)
		b, err := module.ServerBundle(&v, interp)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reg.Put(b); err != nil {
			t.Fatal(err)
		}
		names[i] = v.Name
	}
	return names
}

func liveHeap() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// The slice of the many-servers figure (make scale-servers): 50 servers
// registered at once by PreloadAll on one interpreter, listed by GET
// /v1/modules, each answering its first call in a new session exactly,
// all on one interpreter Module; the live heap per server (loaded, seed
// imported, one session after a call) stays under a bound that a
// per-server instance or compiled module (megabytes each) would break.
func TestManyServersSlice(t *testing.T) {
	const n = 50
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	names := manyServers(t, reg, n)
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 10e9, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	s, err := Open(ctx, Config{Runtime: rt, Registry: reg, CheckpointInterval: -1, Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The interpreter compiled and one server called: the fixed cost.
	if _, err := s.Preload(ctx, []string{"bank"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := firstResult(ctx, s, []string{"bank"}, CallRequest{Tool: "get_account", Arguments: json.RawMessage(`{"account_id":"a1"}`)}); err != nil {
		t.Fatal(err)
	}
	h0 := liveHeap()
	rep, err := s.PreloadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// bank, weft-interp and the n variants.
	if rep.Loaded != n+2 || rep.Servers != n+1 {
		t.Fatalf("PreloadAll: %+v, want %d loaded, %d servers", rep, n+2, n+1)
	}
	h, err := s.Handler(ctx, HTTPOptions{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{header: http.Header{}}
	req, _ := http.NewRequest(http.MethodGet, "/v1/modules", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	h.ServeHTTP(rec, req)
	var listed struct {
		Count   int            `json:"count"`
		Servers int            `json:"servers"`
		Modules []LoadedModule `json:"modules"`
	}
	if err := json.Unmarshal(rec.body, &listed); err != nil || rec.status != http.StatusOK {
		t.Fatalf("GET /v1/modules: %d %s %v", rec.status, rec.body, err)
	}
	if listed.Count != n+2 || listed.Servers != n+1 || listed.Modules[1].Name != "bank-v000" || listed.Modules[1].Tools != 5 || !listed.Modules[1].Server {
		t.Fatalf("GET /v1/modules: count %d servers %d, second %+v", listed.Count, listed.Servers, listed.Modules[1])
	}
	var interp *module.Module
	for i, name := range names {
		info, err := s.Create(ctx, CreateOptions{Modules: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Call(ctx, info.ID, CallRequest{Tool: "get_account", Arguments: json.RawMessage(fmt.Sprintf(`{"account_id":"a%d"}`, 1+i%2))})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := map[int]string{0: `{"id":"a1","owner":"Ada","balance":100}`, 1: `{"id":"a2","owner":"Bob","balance":20}`}[i%2]
		if got := text(r); got != want {
			t.Fatalf("%s get_account = %s, want %s", name, got, want)
		}
		g, err := s.group(ctx, []string{name})
		if err != nil {
			t.Fatal(err)
		}
		in := g.Modules()[0].Interpreter()
		if interp == nil {
			interp = in
		}
		if in == nil || in != interp {
			t.Fatalf("%s runs on interpreter %p, want the shared %p", name, in, interp)
		}
	}
	perServer := (liveHeap() - h0) / n
	t.Logf("live heap per server (loaded, one session after a call): %d KiB", perServer>>10)
	if perServer > 512<<10 {
		t.Errorf("live heap per server %d KiB, over the 512 KiB bound", perServer>>10)
	}
}

// Preload of a reference the registry does not hold names it and keeps
// what it loaded before; PreloadAll of an empty registry says so.
func TestPreloadErrors(t *testing.T) {
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	megamcptest.PutServer(t, reg, bankSpec)
	s := newServer(t, "", reg)
	defer s.Close()
	ctx := context.Background()
	rep, err := s.Preload(ctx, []string{"bank", "nonesuch", "weft-interp"})
	if !errors.Is(err, ErrNoSuchModule) || rep.Loaded != 1 || rep.Servers != 1 {
		t.Fatalf("Preload: %+v %v", rep, err)
	}
	if got := err.Error(); got != `preload nonesuch: no such module: nonesuch: module not found: nonesuch` {
		t.Errorf("error = %q", got)
	}
	if l := s.Loaded(); len(l) != 1 || l[0].Name != "bank" || !l[0].Server {
		t.Errorf("loaded after the failure: %+v", l)
	}
	empty, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e := newServer(t, "", empty)
	defer e.Close()
	if _, err := e.PreloadAll(ctx); !errors.Is(err, ErrNoRegistryRefs) {
		t.Fatalf("PreloadAll of an empty registry: %v", err)
	}
	if l := e.Loaded(); len(l) != 0 {
		t.Errorf("loaded: %+v", l)
	}
}

// recorder is a minimal http.ResponseWriter.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body = append(r.body, b...)
	return len(b), nil
}
func (r *recorder) WriteHeader(code int) { r.status = code }
