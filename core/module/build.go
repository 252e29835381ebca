package module

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildOptions configures Build. Empty paths take the defaults.
type BuildOptions struct {
	Schema string    // DDL file; default DIR/schema.sql
	Seed   string    // seed rows file; default DIR/seed.json when it exists
	Go     string    // go command; default "go" on PATH
	Log    io.Writer // the go command's output; nil discards it
}

// ErrBuild: the Go toolchain failed to compile the module.
var ErrBuild = errors.New("module build failed")

// Build compiles the Go package in dir to a wasip1 reactor
// (GOOS=wasip1 GOARCH=wasm -buildmode=c-shared, -trimpath so the bytes do not
// depend on where the source lives), reads and validates its manifest by
// loading it in rt, and bundles it with its schema and seed. The result is
// checked (Bundle.Check) but not stored; Registry.Put stores it.
func Build(ctx context.Context, rt *Runtime, dir string, opts BuildOptions) (*Bundle, error) {
	goCmd := opts.Go
	if goCmd == "" {
		goCmd = "go"
	}
	// Fail on a missing schema before spending seconds compiling.
	schema := opts.Schema
	if schema == "" {
		schema = filepath.Join(dir, BundleSchema)
	}
	if _, err := os.Stat(schema); err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrInvalidBundle, err)
	}
	tmp, err := os.MkdirTemp("", "weft-build-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, BundleWasm)
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-buildmode=c-shared", "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	// The compiler's messages go into the error (once), not also to Log.
	var stderr bytes.Buffer
	cmd.Stdout = opts.Log
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w: go build in %s: %v\n%s", ErrBuild, dir, err, stderr.String())
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return BundleWasmFile(ctx, rt, wasm, dir, opts)
}

// BundleWasmFile bundles an already compiled module (any language) with the
// schema and seed found as Build describes.
func BundleWasmFile(ctx context.Context, rt *Runtime, wasm []byte, dir string, opts BuildOptions) (*Bundle, error) {
	m, err := rt.Compile(ctx, wasm)
	if err != nil {
		return nil, err
	}
	b := &Bundle{Wasm: wasm}
	if err := json.Unmarshal(m.ManifestJSON(), &b.Manifest); err != nil {
		return nil, fmt.Errorf("%w: manifest: %v", ErrInvalidBundle, err)
	}
	schema := opts.Schema
	if schema == "" {
		schema = filepath.Join(dir, BundleSchema)
	}
	ddl, err := os.ReadFile(schema)
	if err != nil {
		return nil, fmt.Errorf("%w: schema: %v", ErrInvalidBundle, err)
	}
	b.Schema = string(ddl)
	seed := opts.Seed
	if seed == "" {
		if _, err := os.Stat(filepath.Join(dir, BundleSeed)); err == nil {
			seed = filepath.Join(dir, BundleSeed)
		}
	}
	if seed != "" {
		if b.Seed, err = os.ReadFile(seed); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: seed: %v", ErrInvalidBundle, err)
		} else if err != nil {
			return nil, fmt.Errorf("%w: seed: %v", ErrInvalidBundle, err)
		}
	}
	if err := b.Check(ctx); err != nil {
		return nil, err
	}
	return b, nil
}
