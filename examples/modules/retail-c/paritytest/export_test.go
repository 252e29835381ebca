package paritytest

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/module"
)

// TestExportSeed: the export hook of both modules on the untouched seed,
// byte for byte, and the same records as tau2's db.json.
func TestExportSeed(t *testing.T) {
	f := setup(t)
	got, want := call(f.c, f.session(), module.ExportTool, nil), call(f.gomod, f.session(), module.ExportTool, nil)
	if want.Err != "" || want.IsError {
		t.Fatalf("Go export: %+v", want.Err)
	}
	if got.Err != "" || got.IsError {
		t.Fatalf("C export: %s %s", got.Err, got.Text)
	}
	if got.Text != want.Text || got.Structured != want.Structured {
		i := 0
		for i < len(got.Text) && i < len(want.Text) && got.Text[i] == want.Text[i] {
			i++
		}
		t.Fatalf("export differs at byte %d: C %q, Go %q", i, snippet(got.Text, i), snippet(want.Text, i))
	}
	var exp, db map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got.Text), &exp); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dbJSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &db); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"products", "users", "orders"} {
		if len(exp[k]) != len(db[k]) || len(exp[k]) < 50 {
			t.Errorf("%s: export has %d records, db.json %d", k, len(exp[k]), len(db[k]))
		}
	}
}

func snippet(s string, i int) string {
	lo, hi := max(i-40, 0), min(i+40, len(s))
	return strings.ToValidUTF8(s[lo:hi], "?")
}
