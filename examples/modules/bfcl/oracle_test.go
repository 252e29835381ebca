package main

import (
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
	"github.com/weft-dev/weft/sdk/tool"
)

// The oracle tests replay the BFCL oracle files
// (examples/data/bfcl-multiturn/oracle, rules in its README) with
// core/module/moduletest, the harness of `weft module test`, against the
// module's Go code run natively (module.NewNative over tool.Dispatch).
// Each case brings its own starting state: the case's initial_config
// becomes the seed rows of bfcl_class (seedFor), and the case runs from
// that version; the module loads each class from its row on first use.

const dataDir = "../../data/bfcl-multiturn"

var casesFile = flag.String("cases", "", "a BFCL cases file of the oracle format for TestOracleCases")

var (
	modOnce sync.Once
	mod     *module.Module
	modErr  error
)

func nativeModule(t testing.TB) *module.Module {
	t.Helper()
	modOnce.Do(func() {
		mod, modErr = module.NewNative(manifestJSON(), tool.Dispatch, module.Config{CallTimeout: 60 * time.Second})
	})
	if modErr != nil {
		t.Fatal(modErr)
	}
	return mod
}

// bfclCase is the part of a case the harness does not read.
type bfclCase struct {
	ID              string                     `json:"id"`
	InvolvedClasses []string                   `json:"involved_classes"`
	InitialConfig   map[string]json.RawMessage `json:"initial_config"`
}

func readCases(t testing.TB, path string) ([]moduletest.Case, []bfclCase) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := moduletest.Read(bytesReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var extra struct {
		Cases []bfclCase `json:"cases"`
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		t.Fatal(err)
	}
	return f.Cases, extra.Cases
}

func runOracle(t *testing.T, path string, want int, filter func(i int) bool) {
	if raceEnabled && filter == nil {
		t.Skip("oracle volume test: run without -race")
	}
	cases, extra := readCases(t, path)
	if want > 0 && len(cases) != want {
		t.Fatalf("%s: %d cases, want %d", path, len(cases), want)
	}
	ctx := context.Background()
	m := nativeModule(t)
	store := state.NewStore()
	total := &moduletest.Report{}
	skipped := 0
	for i, c := range cases {
		if filter != nil && !filter(i) {
			continue
		}
		if missing(extra[i].InvolvedClasses) {
			skipped++
			continue
		}
		ver, err := seedVersion(ctx, store, extra[i].InvolvedClasses, extra[i].InitialConfig)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		rep, err := moduletest.Run(ctx, m, ver, []moduletest.Case{c}, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.ID, err)
		}
		total.Passed += rep.Passed
		total.Failed += rep.Failed
		total.Calls += rep.Calls
		for _, mm := range rep.Mismatches {
			t.Error(mm)
		}
	}
	t.Logf("%s: %s (%d calls, %d skipped)", filepath.Base(path), total.Summary(), total.Calls, skipped)
	if total.Failed != 0 {
		t.Errorf("%s: %s", filepath.Base(path), total.Summary())
	}
	if testing.Verbose() && filter == nil {
		os.Stdout.WriteString(total.Summary() + "\n")
	}
}

func TestOracleTasksPublic(t *testing.T) {
	runOracle(t, filepath.Join(dataDir, "oracle", "tasks-public.json"), 100, nil)
}

func TestOracleFuzzPublic(t *testing.T) {
	runOracle(t, filepath.Join(dataDir, "oracle", "fuzz-public.json"), 200, nil)
}

// TestOracleSlice replays every 10th case of both files (the fast slice
// of normal test runs, also under -race).
func TestOracleSlice(t *testing.T) {
	every := func(i int) bool { return i%10 == 0 }
	runOracle(t, filepath.Join(dataDir, "oracle", "tasks-public.json"), 100, every)
	runOracle(t, filepath.Join(dataDir, "oracle", "fuzz-public.json"), 200, every)
}

// TestOracleCases replays the file given with -cases (skipped without it).
func TestOracleCases(t *testing.T) {
	if *casesFile == "" {
		t.Skip("no -cases file")
	}
	runOracle(t, *casesFile, 0, nil)
}

func missing(names []string) bool {
	for _, n := range names {
		if classes[n] == nil {
			return true
		}
	}
	return false
}
