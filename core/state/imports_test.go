package state

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoNetworkServer checks that the engine package serves nothing over the
// network: the MySQL wire server lives in megamcp/inspect, so core/state
// imports neither net nor vitess's wire-protocol package.
func TestNoNetworkServer(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command(goBin, "list", "-f", `{{join .Imports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		if imp == "net" || imp == "github.com/dolthub/vitess/go/mysql" {
			t.Errorf("core/state imports %s; network servers belong outside the engine (megamcp/inspect)", imp)
		}
	}
}
