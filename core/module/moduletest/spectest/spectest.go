package spectest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/module/moduletest"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/spec"
)

// Server is a spec directory with its seed state.
type Server struct {
	Spec *spec.Server
	Seed *state.Version
}

type loaded struct {
	once sync.Once
	srv  *Server
	err  error
}

var servers sync.Map // absolute directory -> *loaded

// Load reads the spec directory dir (spec.Load) and builds its seed state
// (module.Bundle.SeedVersion: seed rows or a weft.state/v1 export), once
// per directory and test process; a failure fails t.
func Load(t testing.TB, dir string) *Server {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := servers.LoadOrStore(abs, &loaded{})
	l := v.(*loaded)
	l.once.Do(func() {
		s, err := spec.Load(abs)
		if err != nil {
			l.err = err
			return
		}
		b := &module.Bundle{Schema: s.Schema, Seed: s.Seed}
		seed, err := b.SeedVersion(context.Background(), state.NewStore())
		if err != nil {
			l.err = err
			return
		}
		l.srv = &Server{Spec: s, Seed: seed}
	})
	if l.err != nil {
		t.Fatalf("loading the server %s: %v", dir, l.err)
	}
	return l.srv
}

// Native is the server behind core/module's Module API, run natively
// (module.NewNativeServer: the interpreter's Go code on the real host
// libraries). The call timeout is generous: oracle tests check outputs,
// not speed, on a machine that may be loaded.
func (s *Server) Native(t testing.TB) *module.Module {
	t.Helper()
	mod, err := module.NewNativeServer(s.Spec, module.Config{CallTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// RunFile replays the cases file at path against mod from seed
// (moduletest.Run), reports every mismatch with t.Error and fails unless
// every case passes; want > 0 is the number of cases the file must hold.
// Under the race detector it skips (oracle volume: the runs without it
// cover the program, sdk/interp and core/module cover the concurrency).
// In verbose mode it prints the summary line "N passed, M failed" on
// stdout, the line scripts/oracle-test.sh --native reports.
func RunFile(t *testing.T, mod *module.Module, seed *state.Version, path string, want int) *moduletest.Report {
	t.Helper()
	if RaceEnabled {
		t.Skip("oracle volume test: run without -race (make module-test does)")
	}
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := moduletest.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	if want > 0 && len(cases.Cases) != want {
		t.Fatalf("%s: %d cases, want %d", name, len(cases.Cases), want)
	}
	rep, err := moduletest.Run(context.Background(), mod, seed, cases.Cases, nil)
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
	if testing.Verbose() {
		os.Stdout.WriteString(rep.Summary() + "\n")
	}
	return rep
}

// CheckExportChanged checks a server's export of changed records against
// its export hook on seed: given every row of every table as changed,
// module.ExportChangedTool must answer exactly the export's collections and
// records, each JSON-equal to the export's (so every row maps to a record
// and every record is built as the whole export builds it). It returns the
// number of records compared.
func CheckExportChanged(t testing.TB, mod *module.Module, s *Server) int {
	t.Helper()
	ctx := context.Background()
	empty, err := state.NewStore().Load(ctx, s.Spec.Schema)
	if err != nil {
		t.Fatal(err)
	}
	all := moduletest.ChangedKeys(state.Diff(empty, s.Seed))
	args, err := json.Marshal(abi.ExportChangedArgs{Changed: all})
	if err != nil {
		t.Fatal(err)
	}
	call := func(tool string, args json.RawMessage) map[string]map[string]json.RawMessage {
		t.Helper()
		res, err := mod.Call(ctx, &module.Session{Workspace: s.Seed.Store().Fork(s.Seed)}, tool, args)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", tool, err, res)
		}
		var out map[string]map[string]json.RawMessage
		if err := json.Unmarshal([]byte(abi.FirstText(res.Content)), &out); err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return out
	}
	whole := call(module.ExportTool, nil)
	part := call(module.ExportChangedTool, args)
	if got, want := sortedKeys(part), sortedKeys(whole); !slices.Equal(got, want) {
		t.Fatalf("export of every row changed: collections %v, export %v", got, want)
	}
	n := 0
	for coll, recs := range whole {
		if len(part[coll]) != len(recs) {
			t.Errorf("%s: %d records of every row changed, %d exported", coll, len(part[coll]), len(recs))
		}
		for k, w := range recs {
			g, ok := part[coll][k]
			switch {
			case !ok:
				t.Errorf("%s[%s]: exported, not among the changed records", coll, k)
			case !bytes.Equal(g, w) && !moduletest.Equal(decode(t, g), decode(t, w)):
				t.Errorf("%s[%s]:\n changed  %s\n exported %s", coll, k, g, w)
			}
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func decode(t testing.TB, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decoding %.200s: %v", b, err)
	}
	return v
}
