package paritytest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/module"
)

// TestOracleParity runs every call of both oracle files through the C and
// the Go module, each case on its own pair of forks of the seed, and
// compares every answer byte for byte, the final states by their content
// hash and, on every 25th case, the export hook's answers byte for byte.
// -short (and -race) runs the train tasks and every tenth random-sequence
// case; make module-test runs the rest through the CLI as well.
func TestOracleParity(t *testing.T) {
	f := setup(t)
	for _, file := range []string{"tasks-train.json", "fuzz-public.json"} {
		o := readOracle(t, file)
		calls, exports, tools := 0, 0, map[string]int{}
		for i, c := range o.Cases {
			if (testing.Short() || raceEnabled) && file == "fuzz-public.json" && i%10 != 0 {
				continue
			}
			sc, sg := f.session(), f.session()
			for k, cl := range c.Calls {
				got, want := call(f.c, sc, cl.Name, cl.Arguments), call(f.gomod, sg, cl.Name, cl.Arguments)
				if d := cmp.Diff(want, got); d != "" {
					t.Errorf("%s %s call %d %s %s: C module differs from Go (-go +c):\n%s", file, c.ID, k, cl.Name, cl.Arguments, d)
				}
				calls++
				tools[cl.Name]++
			}
			if hc, hg := sc.Workspace.Hash(), sg.Workspace.Hash(); hc != hg {
				t.Errorf("%s %s: final state differs: C %v, Go %v", file, c.ID, hc, hg)
			}
			// The export hook's bytes (a 1.2 MB answer, slow in the Go
			// module) on every 25th case; the states are compared above.
			if i%25 == 0 {
				got, want := call(f.c, sc, module.ExportTool, nil), call(f.gomod, sg, module.ExportTool, nil)
				if want.Err != "" || want.IsError || len(want.Structured) < 1000 {
					t.Fatalf("%s %s: Go export: %+v", file, c.ID, want.Err)
				}
				if got != want {
					t.Errorf("%s %s: export differs: C %d bytes (err %q), Go %d", file, c.ID, len(got.Text), got.Err, len(want.Text))
				}
				exports++
			}
		}
		t.Logf("%s: %d calls and %d exports compared, by tool %v", file, calls, exports, tools)
		if calls < 100 {
			t.Errorf("%s: only %d calls", file, calls)
		}
	}
}
