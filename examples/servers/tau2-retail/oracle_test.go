package tau2retail_test

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest/spectest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/spec"
)

// The oracle test replays every case of the tau2-bench retail oracle files
// (examples/data/tau2-retail/oracle, rules in its README) with
// core/module/moduletest, the harness of `weft module test`, against the
// synthesized server run natively (spectest: module.NewNativeServer, the
// shared interpreter's Go code on a core/state workspace forked from the
// spec's seed), the final state through the program's export_changed()
// over the seed's export(). The same files through the wasm interpreter:
// scripts/oracle-test.sh retail-spec FILE (make module-test).

const oracleDir = "../../data/tau2-retail/oracle"

// casesFile, when set, is replayed by TestOracleCases;
// scripts/oracle-test.sh --native retail-spec passes it.
var casesFile = flag.String("cases", "", "a cases file of the oracle format for TestOracleCases")

// server loads the spec directory and its seed state once.
func server(t testing.TB) (*spec.Server, *state.Version) {
	t.Helper()
	s := spectest.Load(t, ".")
	return s.Spec, s.Seed
}

// nativeServer is the spec behind core/module's Module API.
func nativeServer(t testing.TB) *module.Module {
	t.Helper()
	return spectest.Load(t, ".").Native(t)
}

func testOracleFile(t *testing.T, path string, want int) {
	_, v0 := server(t)
	spectest.RunFile(t, nativeServer(t), v0, path, want)
}

func TestOracleTasksTrain(t *testing.T) {
	testOracleFile(t, filepath.Join(oracleDir, "tasks-train.json"), 74)
}

func TestOracleFuzzPublic(t *testing.T) {
	testOracleFile(t, filepath.Join(oracleDir, "fuzz-public.json"), 200)
}

// TestOracleCases replays the file given with -cases (skipped without it).
func TestOracleCases(t *testing.T) {
	if *casesFile == "" {
		t.Skip("no -cases file")
	}
	testOracleFile(t, *casesFile, 0)
}

// TestExportChanged: export_changed() of every seed row gives export()'s
// records exactly (what moduletest lays over the seed's export).
func TestExportChanged(t *testing.T) {
	s := spectest.Load(t, ".")
	if n := spectest.CheckExportChanged(t, s.Native(t), s); n != 50+500+1000 {
		t.Errorf("%d records compared, want 1550 (50 products, 500 users, 1000 orders)", n)
	}
}
