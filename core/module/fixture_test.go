package module

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/state"
)

var (
	fixtureDir  string
	fixtureMu   sync.Mutex
	fixtureWasm = map[string][]byte{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weft-module-fixtures-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// fixture builds testdata/modules/<name> for wasip1 once per test run.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if b, ok := fixtureWasm[name]; ok {
		return b
	}
	out := filepath.Join(fixtureDir, name+".wasm")
	gobin := goCommand()
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, "./testdata/modules/"+name)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building fixture %s: %v\n%s", name, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fixtureWasm[name] = b
	return b
}

const fxDDL = `
CREATE TABLE items (id VARCHAR(40) PRIMARY KEY, n BIGINT NOT NULL);
CREATE TABLE ro (id INT PRIMARY KEY, v VARCHAR(10));
CREATE TABLE secrets (id INT PRIMARY KEY, v VARCHAR(10));
`

var (
	fxStoreOnce sync.Once
	fxStore     *state.Store
	fxBase      *state.Version
)

func fxWorkspace(t testing.TB) *state.Workspace {
	t.Helper()
	fxStoreOnce.Do(func() {
		fxStore = state.NewStore()
		v, err := fxStore.Load(context.Background(), fxDDL,
			state.TableRows{Table: "ro", Columns: []string{"id", "v"}, Rows: [][]any{{1, "a"}}},
			state.TableRows{Table: "secrets", Columns: []string{"id", "v"}, Rows: [][]any{{1, "s"}}})
		if err != nil {
			panic(err)
		}
		fxBase = v
	})
	return fxStore.Fork(fxBase)
}

func newRuntime(t testing.TB, cfg Config) *Runtime {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = filepath.Join(fixtureDir, "cache") // shared: compile each fixture once per run
	}
	r, err := NewRuntime(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(context.Background()) })
	return r
}

func compileFixture(t testing.TB, r *Runtime, name string) *Module {
	t.Helper()
	m, err := r.Compile(context.Background(), fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// goCommand is the go command that runs the tests: $GOROOT/bin/go from
// `go env`, else "go" on PATH.
func goCommand() string {
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if p := filepath.Join(strings.TrimSpace(string(out)), "bin", "go"); fileExists(p) {
			return p
		}
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
