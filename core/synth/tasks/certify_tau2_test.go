package tasks

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/spec"
)

func specEnv(t testing.TB, dir string) *Env {
	t.Helper()
	s, err := spec.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, err := SpecEnv(context.Background(), module.Config{}, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Store.Close() })
	return e
}

func TestDumpTau2(t *testing.T) {
	if os.Getenv("CERT_DUMP") == "" {
		t.Skip()
	}
	ctx := context.Background()
	for _, d := range []struct{ dir, tasks, name string }{
		{"../../../examples/servers/tau2-retail", "../../../examples/data/tau2-retail/tasks.json", "retail"},
		{"../../../examples/servers/tau2-airline", "../../../examples/data/tau2-airline/tasks.json", "airline"},
	} {
		e := specEnv(t, d.dir)
		ts, err := e.ConvertTau2(ctx, d.tasks, []string{d.name}, "tau2-"+d.name)
		if err != nil {
			t.Fatal(err)
		}
		rep, _, err := Certify(ctx, ts, func([]string) (*Env, error) { return e, nil }, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.MarshalIndent(rep.Rejections(), "", " ")
		t.Logf("%s\n", b)
	}
}
