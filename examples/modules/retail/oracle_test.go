package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

// The oracle test replays every case of the tau2-bench oracle files
// (examples/data/tau2-retail/oracle, rules in its README) with
// core/module/moduletest, the harness of `weft module test`, against the
// module's Go code run natively (module.NewNative over tool.Dispatch): the
// real host libraries on a core/state workspace forked from db.json, the
// session's virtual clock and seeded random stream, each call one unit of
// work, the final state through the module's export hook. `make
// module-test` runs the same cases through the wasm build.

const dataDir = "../../data/tau2-retail"

var (
	loadOnce  sync.Once
	baseStore *state.Store
	baseVer   *state.Version
	loadErr   error
)

func baseState(t testing.TB) (*state.Store, *state.Version) {
	t.Helper()
	loadOnce.Do(func() {
		f, err := os.Open(filepath.Join(dataDir, "db.json"))
		if err != nil {
			loadErr = err
			return
		}
		defer f.Close()
		baseStore = state.NewStore()
		baseVer, loadErr = retaildb.Load(context.Background(), baseStore, f)
	})
	if loadErr != nil {
		t.Fatalf("loading db.json: %v", loadErr)
	}
	return baseStore, baseVer
}

// nativeModule is the module's Go code behind core/module's Module API. The
// call timeout is generous: the test checks outputs, not speed, on a machine
// that may be loaded.
func nativeModule(t testing.TB) *module.Module {
	t.Helper()
	mod, err := module.NewNative(tool.ManifestJSON(), tool.Dispatch, module.Config{CallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

func testOracleFile(t *testing.T, name string) {
	if raceEnabled {
		t.Skip("oracle volume test: run without -race (make test does)")
	}
	f, err := os.Open(filepath.Join(dataDir, "oracle", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := moduletest.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	_, v0 := baseState(t)
	rep, err := moduletest.Run(context.Background(), nativeModule(t), v0, cases.Cases, nil)
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
}

func TestOracleTasksTrain(t *testing.T) { testOracleFile(t, "tasks-train.json") }

func TestOracleFuzzPublic(t *testing.T) { testOracleFile(t, "fuzz-public.json") }

// TestExportHook checks the weft.export hook: on the unmodified state it
// gives db.json back (as JSON), including key order of every object.
func TestExportHook(t *testing.T) {
	ctx := context.Background()
	store, v0 := baseState(t)
	s := &module.Session{Workspace: store.Fork(v0)}
	res, err := nativeModule(t).Call(ctx, s, module.ExportTool, nil)
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
	if !moduletest.Equal(decode(t, []byte(text)), decode(t, raw)) {
		t.Fatal("export differs from db.json")
	}
	// Key order too.
	if kg, kw := keys(t, []byte(text)), keys(t, raw); kg != kw || len(kw) < 100000 {
		t.Fatal("export key order differs from db.json")
	}
}

// decode parses JSON with numbers as json.Number (moduletest.Equal's form).
func decode(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %.200s: %v", b, err)
	}
	return v
}

// keys lists every object key of a JSON document in document order.
func keys(t testing.TB, b []byte) string {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	var sb strings.Builder
	type frame struct{ object, wantKey bool }
	var stack []frame
	value := func() { // a value ended: the enclosing object wants a key next
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].wantKey = false
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			sb.WriteString(tok.(string))
			sb.WriteByte('\n')
			stack[n-1].wantKey = false
			continue
		}
		value()
	}
	return sb.String()
}

func TestManifest(t *testing.T) {
	var m struct {
		Name   string `json:"name"`
		Export bool   `json:"export"`
		Tools  []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(tool.ManifestJSON(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "retail" || !m.Export || len(m.Tools) != 16 {
		t.Fatalf("manifest: name %q, export %v, %d tools", m.Name, m.Export, len(m.Tools))
	}
}
