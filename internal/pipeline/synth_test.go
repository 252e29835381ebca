package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/synth"
	"github.com/weft-dev/weft/sdk/abi"
)

// TestInstallModuleFromDocs: a module block with docs is synthesized,
// validated and stored as a server bundle tagged with its label; one that
// does not pass leaves the registry unchanged.
func TestInstallModuleFromDocs(t *testing.T) {
	reg, err := module.OpenRegistry(filepath.Join(t.TempDir(), "registry"))
	if err != nil {
		t.Fatal(err)
	}
	stand := &module.Bundle{Manifest: module.Manifest{ABI: abi.Version, Name: module.InterpreterName, Version: "test", Tables: abi.Tables{Owns: []string{}}},
		Wasm: []byte("\x00asm\x01\x00\x00\x00")}
	if _, err := reg.Put(stand); err != nil {
		t.Fatal(err)
	}
	m := config.Module{Name: "lib", Docs: "../../core/synth/testdata/library.docs.json", Synthesizer: "scripted", Script: "../../core/synth/testdata/library.script.json"}
	ref, err := installModule(context.Background(), Env{}, reg, m)
	if err != nil || ref != "lib" {
		t.Fatalf("installModule = %q, %v", ref, err)
	}
	b, _, err := reg.Get("lib")
	if err != nil || !b.IsServer() || b.Manifest.Name != "library" || len(b.Manifest.Tools) != 6 {
		t.Fatalf("registered bundle: %+v, %v", b, err)
	}

	// A server that never passes (the unfixable fault) is not stored.
	raw, err := os.ReadFile(m.Docs)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "docs.json")
	if err := os.WriteFile(bad, []byte(`{"name":"library-unfixable",`+string(raw[len(`{"name": "library",`):])), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := reg.List()
	m.Name, m.Docs = "bad", bad
	_, err = installModule(context.Background(), Env{}, reg, m)
	var np *synth.NotPassedError
	if !errors.As(err, &np) || !np.Report.HasCode(synth.CodeOutputShape) {
		t.Fatalf("err = %v, want NotPassedError with output_shape", err)
	}
	if after, _ := reg.List(); len(after) != len(before) {
		t.Errorf("registry grew from %d to %d entries", len(before), len(after))
	}
}
