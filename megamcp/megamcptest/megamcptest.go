// Package megamcptest builds the tool modules weft's serving tests run
// against (examples/modules/hello and retail, and core/module's fx
// fixture) into a registry, once per test process; Interpreter and
// PutServer do the same for the interpreter module (modules/interp) and
// synthesized servers' spec directories. It reads the example
// modules' folders and the retail seed (examples/data/tau2-retail/
// db.state.json, weft's generic seed format) as files; it imports no
// example package (docs/design/011-domain-adapters.md).
package megamcptest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/spec"
)

// FxSchema is the schema of the fx fixture module: it owns items (and
// reads ro, which a task's version must bring).
const FxSchema = `CREATE TABLE items (id VARCHAR(40) PRIMARY KEY, n BIGINT NOT NULL);
`

var (
	once    sync.Once
	bundles map[string][]byte // name -> tar
	errOnce error
)

// Root returns the repository root (where go.mod is).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Modules is the list of module names Registry provides: "hello", "retail",
// "fx" and "notesfs" (workspace files).
var Modules = []string{"hello", "retail", "fx", "notesfs"}

// CacheDir is a compilation cache shared by the test processes of one
// machine (wazero's file cache, keyed by module content and wazero
// version): each test module is compiled once, not once per test (which
// costs seconds under the race detector).
func CacheDir() string { return filepath.Join(os.TempDir(), "weft-test-wazero-cache") }

func build(ctx context.Context) (map[string][]byte, error) {
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: CacheDir()})
	if err != nil {
		return nil, err
	}
	defer rt.Close(ctx)
	tmp, err := os.MkdirTemp("", "weft-megamcptest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	root := Root()
	out := map[string][]byte{}

	// retail: the tau2 retail state as seed, converted by the domain's
	// converter (make retail-seed) and committed.
	seedPath := filepath.Join(root, "examples/data/tau2-retail/db.state.json")
	fxSchema := filepath.Join(tmp, "fx.sql")
	if err := os.WriteFile(fxSchema, []byte(FxSchema), 0o644); err != nil {
		return nil, err
	}
	specs := []struct {
		name, dir string
		opts      module.BuildOptions
	}{
		{"hello", "examples/modules/hello", module.BuildOptions{}},
		{"retail", "examples/modules/retail", module.BuildOptions{Schema: filepath.Join(root, "examples/modules/retail/retaildb/schema.sql"), Seed: seedPath}},
		{"fx", "core/module/testdata/modules/fx", module.BuildOptions{Schema: fxSchema}},
		{"notesfs", "examples/modules/notesfs", module.BuildOptions{}},
	}
	for _, sp := range specs {
		b, err := module.Build(ctx, rt, filepath.Join(root, sp.dir), sp.opts)
		if err != nil {
			return nil, err
		}
		t, err := b.Tar()
		if err != nil {
			return nil, err
		}
		out[sp.name] = t
	}
	return out, nil
}

// Registry returns a fresh registry in a temporary directory holding the
// test modules, tagged "<name>:latest". The Wasm is built on first use
// (seconds; the Go build cache makes later runs fast).
func Registry(t testing.TB) *module.Registry {
	t.Helper()
	built(t)
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Modules {
		d, err := reg.PutTar(bundles[name], "")
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Tag(name, "latest", d); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// Bundle returns the tar of one test module.
func Bundle(t testing.TB, name string) []byte {
	t.Helper()
	built(t)
	return bundles[name]
}

// built builds the test modules once per process, failing t if that failed.
func built(t testing.TB) {
	t.Helper()
	once.Do(func() { bundles, errOnce = build(context.Background()) })
	if errOnce != nil {
		t.Fatalf("building test modules: %v", errOnce)
	}
}

var (
	interpOnce sync.Once
	interpTar  []byte
	interpErr  error
)

// Interpreter returns the tar of the interpreter module (modules/interp,
// the shared interpreter of synthesized servers), built once per process.
func Interpreter(t testing.TB) []byte {
	t.Helper()
	interpOnce.Do(func() {
		ctx := context.Background()
		rt, err := module.NewRuntime(ctx, module.Config{CacheDir: CacheDir()})
		if err != nil {
			interpErr = err
			return
		}
		defer rt.Close(ctx)
		b, err := module.Build(ctx, rt, filepath.Join(Root(), "modules/interp"), module.BuildOptions{})
		if err != nil {
			interpErr = err
			return
		}
		interpTar, interpErr = b.Tar()
	})
	if interpErr != nil {
		t.Fatalf("building the interpreter module: %v", interpErr)
	}
	return interpTar
}

// PutServer stores the interpreter module (tagged weft-interp:latest) and
// the synthesized server of the spec directory dir (relative to the
// repository root, or absolute) in reg, and returns the server bundle's
// digest; the server is tagged <name>:latest.
func PutServer(t testing.TB, reg *module.Registry, dir string) string {
	t.Helper()
	id, err := reg.PutTar(Interpreter(t), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.Tag(module.InterpreterName, "latest", id); err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(Root(), dir)
	}
	s, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := module.ServerBundle(s, id)
	if err != nil {
		t.Fatal(err)
	}
	d, err := reg.Put(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
