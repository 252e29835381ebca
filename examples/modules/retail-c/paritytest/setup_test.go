package paritytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
)

const (
	cDir    = ".."
	goPkg   = "../../retail"
	dbJSON  = "../../../data/tau2-retail/db.json"
	oracles = "../../../data/tau2-retail/oracle"
)

// fixture is what every test shares: both modules compiled once, the seed
// loaded once.
type fixture struct {
	rt       *module.Runtime
	c, gomod *module.Module
	cWasm    []byte
	goWasm   []byte
	store    *state.Store
	seed     *state.Version
}

var (
	fxOnce sync.Once
	fx     *fixture
	fxErr  error
	tmpDir string
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "retail-c-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	tmpDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// buildC runs the module's Makefile (clang, lld, wasi-libc: .ci/run installs
// them) and returns retail.wasm; RETAIL_C_WASM names a prebuilt file to use
// instead.
func buildC() ([]byte, error) {
	if p := os.Getenv("RETAIL_C_WASM"); p != "" {
		return os.ReadFile(p)
	}
	cmd := exec.Command("make", "--no-print-directory", "-C", cDir)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("make -C examples/modules/retail-c: %v\n%s", err, out)
	}
	return os.ReadFile(filepath.Join(cDir, "retail.wasm"))
}

func buildGo() ([]byte, error) {
	gobin := filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	out := filepath.Join(tmpDir, "retail-go.wasm")
	cmd := exec.Command(gobin, "build", "-trimpath", "-buildmode=c-shared", "-o", out, goPkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the Go retail.wasm: %v\n%s", err, msg)
	}
	return os.ReadFile(out)
}

func setup(t testing.TB) *fixture {
	t.Helper()
	if _, err := exec.LookPath("clang"); err != nil {
		t.Skip("clang not installed (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32)")
	}
	fxOnce.Do(func() {
		f := &fixture{}
		ctx := context.Background()
		if f.cWasm, fxErr = buildC(); fxErr != nil {
			return
		}
		if f.goWasm, fxErr = buildGo(); fxErr != nil {
			return
		}
		if f.rt, fxErr = module.NewRuntime(ctx, module.Config{CacheDir: filepath.Join(tmpDir, "cache")}); fxErr != nil {
			return
		}
		if f.c, fxErr = f.rt.Compile(ctx, f.cWasm); fxErr != nil {
			fxErr = fmt.Errorf("compiling the C module: %w", fxErr)
			return
		}
		if f.gomod, fxErr = f.rt.Compile(ctx, f.goWasm); fxErr != nil {
			return
		}
		db, err := os.Open(dbJSON)
		if err != nil {
			fxErr = err
			return
		}
		defer db.Close()
		f.store = state.NewStore()
		f.seed, fxErr = retaildb.Load(ctx, f.store, db)
		fx = f
	})
	if fxErr != nil {
		t.Fatal(fxErr)
	}
	return fx
}

func (f *fixture) session() *module.Session {
	return &module.Session{Workspace: f.store.Fork(f.seed), Seed: 1}
}

// answer is what a caller sees of one call: the result's wire parts, or
// the error.
type answer struct {
	Text       string
	Structured string
	IsError    bool
	Err        string
}

func call(m *module.Module, s *module.Session, tool string, args json.RawMessage) answer {
	res, err := m.Call(context.Background(), s, tool, args)
	if err != nil {
		return answer{Err: err.Error()}
	}
	a := answer{Structured: string(res.StructuredContent), IsError: res.IsError}
	if len(res.Content) > 0 {
		a.Text = res.Content[0].Text
	}
	if len(res.Content) != 1 {
		a.Err = fmt.Sprintf("%d content items", len(res.Content))
	}
	return a
}

// oracleFile is the shared oracle format (docs/module-test.md).
type oracleFile struct {
	Cases []struct {
		ID    string `json:"id"`
		Calls []struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"calls"`
	} `json:"cases"`
}

func readOracle(t testing.TB, name string) *oracleFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(oracles, name))
	if err != nil {
		t.Fatal(err)
	}
	var o oracleFile
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatal(err)
	}
	return &o
}
