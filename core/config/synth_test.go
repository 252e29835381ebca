package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/config"
)

// TestModuleFromDocs: a module block may start from documentation (docs,
// synthesizer, script); the combinations that make no sense point at the
// module or the attribute.
func TestModuleFromDocs(t *testing.T) {
	src := strings.Replace(head, `path = "mod"`, `docs = "tasks.weft.json"`, 1) + tail
	cfg, diags := parse(t, src, nil)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "tasks.weft.json"))
	want := config.Module{Name: "m", Docs: abs, Synthesizer: "deterministic"}
	if diff := cmp.Diff(want, cfg.Modules[0]); diff != "" {
		t.Errorf("module (-want +got):\n%s", diff)
	}
	src = strings.Replace(head, `path = "mod"`, "docs = \"tasks.weft.json\"\n  synthesizer = \"scripted\"\n  script = \"tasks.weft.json\"", 1) + tail
	if cfg, diags = parse(t, src, nil); diags.HasErrors() || cfg.Modules[0].Synthesizer != "scripted" || cfg.Modules[0].Script != abs {
		t.Errorf("scripted module: %+v %v", cfg, diags)
	}
	for _, tc := range []struct {
		name, replace   string
		line, col       int
		summary, detail string
	}{
		{"synthesizer without docs", "path = \"mod\"\n  synthesizer = \"scripted\"", 3, 17, "Attribute needs docs", `synthesizer applies only to a module synthesized from documentation (docs); module "m" has none.`},
		{"scripted without script", "docs = \"tasks.weft.json\"\n  synthesizer = \"scripted\"", 1, 1, "Invalid synthesizer", `Module "m": script is required with synthesizer = "scripted"`},
		{"unknown synthesizer", "docs = \"tasks.weft.json\"\n  synthesizer = \"oracle\"", 3, 17, "Unknown synthesizer", `"oracle" is not a synthesizer; use one of "deterministic", "scripted".`},
		{"docs and path", "path = \"mod\"\n  docs = \"tasks.weft.json\"", 1, 1, "Invalid module source", `Module "m" needs exactly one of path, bundle, digest and docs; it has 2.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, diags := parse(t, strings.Replace(head, `path = "mod"`, tc.replace, 1)+tail, nil)
			wantDiag(t, cfg, diags, tc.line, tc.col, tc.summary, tc.detail)
		})
	}
}
