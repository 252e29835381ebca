package train

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPureOfFileFormats checks that the training algorithms and drivers do
// not depend on a file-format library: the exporters live in core/dataset.
func TestPureOfFileFormats(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "parquet") || strings.HasSuffix(dep, "/core/dataset") {
			t.Errorf("core/train depends on %s; file formats belong in core/dataset", dep)
		}
	}
}
