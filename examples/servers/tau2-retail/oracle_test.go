package tau2retail_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/spec"
)

// The oracle test replays every case of the tau2-bench retail oracle files
// (examples/data/tau2-retail/oracle, rules in its README) with
// core/module/moduletest, the harness of `weft module test`, against the
// synthesized server run natively (module.NewNativeServer: the shared
// interpreter's Go code on a core/state workspace forked from the spec's
// seed), the final state through the program's export().

const oracleDir = "../../data/tau2-retail/oracle"

// casesFile, when set, is replayed by TestOracleCases;
// scripts/oracle-test.sh retail-spec passes it.
var casesFile = flag.String("cases", "", "a cases file of the oracle format for TestOracleCases")

var (
	loadOnce sync.Once
	srv      *spec.Server
	seedVer  *state.Version
	loadErr  error
)

// server loads the spec directory and its seed state once.
func server(t testing.TB) (*spec.Server, *state.Version) {
	t.Helper()
	loadOnce.Do(func() {
		if srv, loadErr = spec.Load("."); loadErr != nil {
			return
		}
		seedVer, loadErr = state.NewStore().LoadJSON(context.Background(), srv.Schema, bytes.NewReader(srv.Seed))
	})
	if loadErr != nil {
		t.Fatalf("loading the spec: %v", loadErr)
	}
	return srv, seedVer
}

// nativeServer is the spec behind core/module's Module API. The call
// timeout is generous: the test checks outputs, not speed, on a machine
// that may be loaded.
func nativeServer(t testing.TB) *module.Module {
	t.Helper()
	s, _ := server(t)
	mod, err := module.NewNativeServer(s, module.Config{CallTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func testOracleFile(t *testing.T, path string, want int) {
	if raceEnabled {
		t.Skip("oracle volume test: run without -race")
	}
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := moduletest.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if want > 0 && len(cases.Cases) != want {
		t.Fatalf("%s: %d cases, want %d", name, len(cases.Cases), want)
	}
	_, v0 := server(t)
	rep, err := moduletest.Run(context.Background(), nativeServer(t), v0, cases.Cases, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	if rep.Passed != len(cases.Cases) || rep.Failed != 0 {
		t.Errorf("%s: %s of %d cases", name, rep.Summary(), len(cases.Cases))
	}
	t.Logf("%s: %s (%d calls)", name, rep.Summary(), rep.Calls)
	if testing.Verbose() { // the line scripts/oracle-test.sh reports
		os.Stdout.WriteString(rep.Summary() + "\n")
	}
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
