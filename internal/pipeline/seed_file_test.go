package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
)

// TestInstallModuleBadSeedNamesFile: a seed file that is truncated when the
// run builds the module (it may have changed since the config was checked)
// fails naming the file and saying seed, before the compile, and the
// registry is left empty; before, the error was "invalid module bundle:
// seed: state: malformed state JSON: unexpected EOF" with no file (trial
// F11).
func TestInstallModuleBadSeedNamesFile(t *testing.T) {
	dir := t.TempDir()
	seed := filepath.Join(dir, "trunc.state.json")
	if err := os.WriteFile(seed, []byte(`{"format":"weft.state/v1","tables":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	reg, err := module.OpenRegistry(filepath.Join(dir, "registry"))
	if err != nil {
		t.Fatal(err)
	}
	m := config.Module{Name: "hello", Path: "../../examples/modules/hello", Seed: seed}
	_, err = installModule(context.Background(), Env{}, reg, m)
	want := "seed file " + seed + " is not valid JSON: it ends early at byte 36 (truncated?)"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	if refs, err := reg.List(); err != nil || len(refs) != 0 {
		t.Fatalf("registry after the refusal: %v, %v", refs, err)
	}
}
