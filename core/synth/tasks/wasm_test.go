package tasks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/spec"
)

// wasmEnv loads dir's server on the interpreter wasm module
// (Runtime.LoadServer), building modules/interp for wasip1.
func wasmEnv(t *testing.T, dir string) *Env {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the interpreter module")
	}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "interp.wasm")
	gobin := "go"
	cmd := exec.Command(gobin, "build", "-trimpath", "-buildmode=c-shared", "-o", out, "../../../modules/interp")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building modules/interp: %v\n%s", err, msg)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := module.NewRuntime(ctx, module.Config{CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	in, err := rt.Compile(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.LoadServer(ctx, in, s)
	if err != nil {
		t.Fatal(err)
	}
	st := state.NewStore()
	t.Cleanup(func() { st.Close() })
	seed, err := (&module.Bundle{Schema: s.Schema, Seed: s.Seed}).SeedVersion(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	env, err := NewEnv(st, seed, m)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// Certification and generation on the wasm path give the native path's
// report and tasks.
func TestWasmMatchesNative(t *testing.T) {
	ctx := context.Background()
	wenv := wasmEnv(t, walletDir)
	nenv := specEnv(t, walletDir)
	s, _ := spec.Load(walletDir)
	var reps []*GenReport
	var files [][]string
	for _, env := range []*Env{nenv, wenv} {
		res, err := Generate(ctx, env, []*spec.Server{s}, GenOptions{Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, res.Report)
		files = append(files, taskIDs(res.Tasks))
	}
	if d := cmp.Diff(reps[0], reps[1]); d != "" {
		t.Errorf("generation report, native vs wasm (-native +wasm):\n%s", d)
	}
	if d := cmp.Diff(files[0], files[1]); d != "" || len(files[0]) != 3 {
		t.Errorf("tasks (-native +wasm):\n%s", d)
	}
}
