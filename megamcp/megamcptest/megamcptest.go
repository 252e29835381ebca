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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
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

// RetailCDir is the C retail module's folder (examples/modules/retail-c,
// built with its Makefile: clang --target=wasm32-wasi); the environment
// variable WEFT_RETAIL_C_DIR overrides it (another checkout's folder, read
// only: the build runs in a temporary copy).
func RetailCDir() string {
	if d := os.Getenv("WEFT_RETAIL_C_DIR"); d != "" {
		return d
	}
	return filepath.Join(Root(), "examples/modules/retail-c")
}

var (
	retailCOnce sync.Once
	retailCTar  []byte
	retailCSkip string
	retailCErr  error
)

// RetailC returns the tar of the C retail module (RetailCDir, its .c, .h
// and .inc files and Makefile copied to a temporary folder and built there
// with make) bundled with the Go retail module's schema and seed, built
// once per process. When the folder is missing or make or clang is not
// installed, tar is nil and skip says why; a build that fails fails t.
func RetailC(t testing.TB) (tar []byte, skip string) {
	t.Helper()
	retailCOnce.Do(func() { retailCTar, retailCSkip, retailCErr = buildRetailC(context.Background()) })
	if retailCErr != nil {
		t.Fatalf("building the C retail module: %v", retailCErr)
	}
	return retailCTar, retailCSkip
}

func buildRetailC(ctx context.Context) ([]byte, string, error) {
	src := RetailCDir()
	if _, err := os.Stat(filepath.Join(src, "Makefile")); err != nil {
		return nil, "the C retail module (" + src + "/Makefile) is not in this tree", nil
	}
	for _, tool := range []string{"make", "clang"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, "the C retail module needs " + tool + " (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32 make)", nil
		}
	}
	tmp, err := os.MkdirTemp("", "weft-retail-c-")
	if err != nil {
		return nil, "", err
	}
	defer os.RemoveAll(tmp)
	ents, err := os.ReadDir(src)
	if err != nil {
		return nil, "", err
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !(n == "Makefile" || strings.HasSuffix(n, ".c") || strings.HasSuffix(n, ".h") || strings.HasSuffix(n, ".inc")) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, n))
		if err != nil {
			return nil, "", err
		}
		if err := os.WriteFile(filepath.Join(tmp, n), data, 0o644); err != nil {
			return nil, "", err
		}
	}
	mk := exec.CommandContext(ctx, "make", "-s", "-C", tmp, "retail.wasm")
	if out, err := mk.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("make -C %s retail.wasm (a copy of %s): %v\n%s", tmp, src, err, out)
	}
	wasm, err := os.ReadFile(filepath.Join(tmp, "retail.wasm"))
	if err != nil {
		return nil, "", err
	}
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: CacheDir()})
	if err != nil {
		return nil, "", err
	}
	defer rt.Close(ctx)
	root := Root()
	b, err := module.BundleWasmFile(ctx, rt, wasm, tmp, module.BuildOptions{
		Schema: filepath.Join(root, "examples/modules/retail/retaildb/schema.sql"),
		Seed:   filepath.Join(root, "examples/data/tau2-retail/db.state.json")})
	if err != nil {
		return nil, "", err
	}
	tar, err := b.Tar()
	return tar, "", err
}
