package airline

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/module/moduletest/spectest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/spec"
)

// The oracle tests replay every case of the tau2-bench airline oracle files
// (examples/data/tau2-airline/oracle, rules in ../../data/tau2-airline's
// README) with core/module/moduletest, the harness of `weft module test`,
// against the server run natively by module.NewNativeServer (spectest):
// the real host libraries on a core/state workspace forked from the seed,
// each call one unit of work, the final state through export_changed()
// over the seed's export(). The same files through the wasm interpreter:
// scripts/oracle-test.sh airline FILE (make module-test).

const dataDir = "../../data/tau2-airline"

// casesFile, when set, replays that cases file instead (TestOracleCases);
// scripts/oracle-test.sh --native passes it.
var casesFile = flag.String("cases", "", "a cases file of the oracle format for TestOracleCases")

// load reads the spec directory and its seed once.
func load(t testing.TB) (*spec.Server, *state.Version) {
	t.Helper()
	s := spectest.Load(t, ".")
	return s.Spec, s.Seed
}

// nativeModule serves the spec natively.
func nativeModule(t testing.TB) *module.Module {
	t.Helper()
	return spectest.Load(t, ".").Native(t)
}

func runCases(t *testing.T, path string, want int) {
	_, v0 := load(t)
	spectest.RunFile(t, nativeModule(t), v0, path, want)
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

// TestExportChanged: export_changed() of every seed row gives export()'s
// records exactly (what moduletest lays over the seed's export).
func TestExportChanged(t *testing.T) {
	s := spectest.Load(t, ".")
	if n := spectest.CheckExportChanged(t, s.Native(t), s); n != 300+500+2000 {
		t.Errorf("%d records compared, want 2800 (300 flights, 500 users, 2000 reservations)", n)
	}
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
