package tau2retail_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
)

// TestExportSeed checks export() on the seed state: it gives db.json back,
// value for value (JSON columns keep no key order; numbers are the same
// doubles, so they decode to equal float64s).
func TestExportSeed(t *testing.T) {
	_, v0 := server(t)
	s := &module.Session{Workspace: v0.Store().Fork(v0)}
	res, err := nativeServer(t).Call(context.Background(), s, module.ExportTool, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := abi.FirstText(res.Content)
	if res.IsError || text == "" {
		t.Fatalf("export failed: %+v", res)
	}
	raw, err := os.ReadFile("../../data/tau2-retail/db.json")
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want["orders"].(map[string]any)) != 1000 || len(want["users"].(map[string]any)) != 500 || len(want["products"].(map[string]any)) != 50 {
		t.Fatal("db.json is not the tau2 retail database")
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("export differs from db.json (-db.json +export):\n%.3000s", d)
	}
}
