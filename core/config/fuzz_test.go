package config_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/weft-dev/weft/core/config"
)

// FuzzLoad: the loader never panics, every error it reports carries a
// source range, and a config it accepts encodes to valid JSON. The seed
// corpus is the shipped configs, the test configs and the files under
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"tau2-retail.hcl", "tau2-retail-vllm.hcl", "synth-compose-gen.hcl", "synth-compose3-gen.hcl"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "configs", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(head + tail))
	f.Add([]byte(varsConfig))
	f.Fuzz(func(t *testing.T, src []byte) {
		cfg, diags := config.Parse(src, filepath.Join("testdata", "fuzz.hcl"), config.LoadOptions{})
		for _, d := range diags {
			if d.Subject == nil {
				t.Errorf("diagnostic without a range: %s", config.FormatDiagnostic(d))
			}
		}
		if diags.HasErrors() != (cfg == nil) {
			t.Fatalf("errors %v but config %v", diags.HasErrors(), cfg != nil)
		}
		if cfg != nil && !json.Valid(cfg.Resolved()) {
			t.Fatal("resolved config is not JSON")
		}
	})
}
