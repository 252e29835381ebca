package module

import (
	"context"
	"encoding/json"
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

// fixturePkg builds the Go package at pkg (relative to core/module, e.g.
// "../../examples/modules/everything") for wasip1 with -trimpath, once per
// test run.
func fixturePkg(t testing.TB, pkg string) []byte {
	t.Helper()
	return buildFixture(t, "pkg:"+pkg, nil, pkg)
}

// fixtureSource builds a module from src, the source of a package main
// written in the test, once per test run: go build -overlay places it at
// testdata/modules/<name>/main.go, which does not exist on disk, so the
// package builds inside this Go module.
func fixtureSource(t testing.TB, name, src string) []byte {
	t.Helper()
	virt, err := filepath.Abs(filepath.Join("testdata", "modules", name, "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	if fileExists(filepath.Dir(virt)) {
		t.Fatalf("fixtureSource %s: %s exists on disk", name, filepath.Dir(virt))
	}
	return buildFixture(t, "src:"+name, map[string]string{virt: src}, "./testdata/modules/"+name)
}

// buildFixture runs go build for pkg once per key, with files (absolute
// path -> content) overlaid.
func buildFixture(t testing.TB, key string, files map[string]string, pkg string) []byte {
	t.Helper()
	fixtureMu.Lock()
	defer fixtureMu.Unlock()
	if b, ok := fixtureWasm[key]; ok {
		return b
	}
	n := len(fixtureWasm)
	out := filepath.Join(fixtureDir, fmt.Sprintf("build%d.wasm", n))
	args := []string{"build", "-trimpath", "-buildmode=c-shared", "-o", out}
	if len(files) > 0 {
		replace := map[string]string{}
		for virt, src := range files {
			p := filepath.Join(fixtureDir, fmt.Sprintf("src%d-%d.go", n, len(replace)))
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			replace[virt] = p
		}
		ov, err := json.Marshal(map[string]any{"Replace": replace})
		if err != nil {
			t.Fatal(err)
		}
		ovPath := filepath.Join(fixtureDir, fmt.Sprintf("overlay%d.json", n))
		if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "-overlay", ovPath)
	}
	cmd := exec.Command(goCommand(), append(args, pkg)...)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", key, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	fixtureWasm[key] = b
	return b
}
