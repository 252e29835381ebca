package airline

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/spec"
)

// The oracle tests replay every case of the tau2-bench airline oracle files
// (examples/data/tau2-airline/oracle, rules in ../../data/tau2-airline's
// README) with core/module/moduletest, the harness of `weft module test`,
// against the server run natively by module.NewNativeServer: the real host
// libraries on a core/state workspace forked from the seed, each call one
// unit of work, the final state through export().

const dataDir = "../../data/tau2-airline"

// casesFile, when set, replays that cases file instead (TestOracleCases);
// scripts/oracle-test.sh passes it.
var casesFile = flag.String("cases", "", "a cases file of the oracle format for TestOracleCases")

var (
	loadOnce sync.Once
	server   *spec.Server
	seedVer  *state.Version
	loadErr  error
)

// load reads the spec directory and its seed once.
func load(t testing.TB) (*spec.Server, *state.Version) {
	t.Helper()
	loadOnce.Do(func() {
		server, loadErr = spec.Load(".")
		if loadErr != nil {
			return
		}
		b := &module.Bundle{Schema: server.Schema, Seed: server.Seed}
		seedVer, loadErr = b.SeedVersion(context.Background(), state.NewStore())
	})
	if loadErr != nil {
		t.Fatalf("loading the server: %v", loadErr)
	}
	return server, seedVer
}

// nativeModule serves the spec natively. The call timeout is generous: the
// tests check outputs, not speed, on a machine that may be loaded.
func nativeModule(t testing.TB) *module.Module {
	t.Helper()
	s, _ := load(t)
	mod, err := module.NewNativeServer(s, module.Config{CallTimeout: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func runCases(t *testing.T, path string, want int) {
	if raceEnabled {
		t.Skip("oracle volume test: run without -race (make test does)")
	}
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
		t.Fatalf("%s: %d cases, want %d", path, len(cases.Cases), want)
	}
	_, v0 := load(t)
	rep, err := moduletest.Run(context.Background(), nativeModule(t), v0, cases.Cases, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range rep.Mismatches {
		t.Error(m)
	}
	if rep.Passed != len(cases.Cases) || rep.Failed != 0 {
		t.Errorf("%s: %s of %d cases", filepath.Base(path), rep.Summary(), len(cases.Cases))
	}
	t.Logf("%s: %s (%d calls)", filepath.Base(path), rep.Summary(), rep.Calls)
	// The line scripts/oracle-test.sh reports.
	if testing.Verbose() {
		os.Stdout.WriteString(rep.Summary() + "\n")
	}
}

func TestOracleTasksTrain(t *testing.T) {
	runCases(t, filepath.Join(dataDir, "oracle", "tasks-train.json"), 30)
}

func TestOracleFuzzPublic(t *testing.T) {
	runCases(t, filepath.Join(dataDir, "oracle", "fuzz-public.json"), 200)
}

// TestOracleCases replays the file given with -cases (skipped without it).
func TestOracleCases(t *testing.T) {
	if *casesFile == "" {
		t.Skip("no -cases file")
	}
	runCases(t, *casesFile, 0)
}

// TestExportIsDB checks export() on the seed: it gives db.json back.
func TestExportIsDB(t *testing.T) {
	ctx := context.Background()
	_, v0 := load(t)
	res, err := nativeModule(t).Call(ctx, &module.Session{Workspace: v0.Store().Fork(v0)}, module.ExportTool, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := abi.FirstText(res.Content)
	if res.IsError || text == "" {
		t.Fatalf("export failed: %+v", res)
	}
	raw, err := os.ReadFile(filepath.Join(dataDir, "db.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := decode(t, []byte(text)), decode(t, raw)
	if !moduletest.Equal(got, want) {
		g, w := got.(map[string]any), want.(map[string]any)
		for _, coll := range []string{"flights", "users", "reservations"} {
			gc, _ := g[coll].(map[string]any)
			wc, _ := w[coll].(map[string]any)
			if len(gc) != len(wc) {
				t.Errorf("%s: %d records, want %d", coll, len(gc), len(wc))
			}
			for k, wr := range wc {
				if !moduletest.Equal(gc[k], wr) {
					gb, _ := json.Marshal(gc[k])
					wb, _ := json.Marshal(wr)
					t.Errorf("%s[%s]:\n got  %s\n want %s", coll, k, gb, wb)
					break
				}
			}
		}
		t.Fatal("export differs from db.json")
	}
}

func decode(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %.200s: %v", b, err)
	}
	return v
}
