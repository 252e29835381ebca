package pipeline

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// A module block whose path is a synthesized server's spec directory is
// bundled on the registry's interpreter; without the interpreter, or with
// a seed of its own, it is refused with a clear error and nothing is
// stored. (The served path is TestRunTau2Airline in internal/cli.)
func TestInstallServerErrors(t *testing.T) {
	dir := filepath.Join(megamcptest.Root(), "examples/servers/tau2-airline")
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, err = installServer(reg, config.Module{Name: "airline", Path: dir, Schema: filepath.Join(dir, "schema.sql")})
	if !errors.Is(err, module.ErrNoInterpreter) || !strings.Contains(err.Error(), "modules/interp") {
		t.Fatalf("no interpreter: error %v, want ErrNoInterpreter with its fix", err)
	}
	_, err = installServer(reg, config.Module{Name: "airline", Path: dir, Seed: "db.state.json"})
	if err == nil || !strings.Contains(err.Error(), "schema and seed come from server.json") {
		t.Fatalf("seed attribute: error %v", err)
	}
	_, err = installServer(reg, config.Module{Name: "airline", Path: dir, Schema: "other.sql"})
	if err == nil || !strings.Contains(err.Error(), "spec directory") {
		t.Fatalf("schema attribute: error %v", err)
	}
	if list, err := reg.List(); err != nil || len(list) != 0 {
		t.Fatalf("registry after refusals: %v %v, want empty", list, err)
	}
}
