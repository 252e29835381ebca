package module

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestToolNames: a name two modules share is prefixed by each module's
// name, the others stay as they are, in group and manifest order.
func TestToolNames(t *testing.T) {
	mf := func(name string, tools ...string) *Manifest {
		m := &Manifest{Name: name}
		for _, n := range tools {
			m.Tools = append(m.Tools, Tool{Name: n})
		}
		return m
	}
	got := ToolNames([]*Manifest{mf("retail", "get_user", "cancel"), mf("airline", "book", "get_user"), mf("empty")})
	want := [][]string{{"retail__get_user", "cancel"}, {"book", "airline__get_user"}, nil}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("ToolNames (-want +got):\n%s", d)
	}
}
