package abi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyStandardLibrary: a guest built for wasip1 links this
// package, so it must pull in nothing outside the standard library (and
// nothing of the host side).
func TestImportsOnlyStandardLibrary(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var got []string
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/weft-dev/weft/sdk/abi" {
			got = append(got, p)
		}
	}
	if len(got) > 0 {
		t.Errorf("sdk/abi imports non-standard packages: %v", got)
	}
}
