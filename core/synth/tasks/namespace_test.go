package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/spec"
)

// TestClashingGroupKeepsOwnTables: tau2 retail and airline in one Env both
// own users and payment_methods; each keeps its own (namespaced) tables,
// clashing tools are reachable as module__tool, and a write of one server
// changes only its own tables.
func TestClashingGroupKeepsOwnTables(t *testing.T) {
	ctx := context.Background()
	env, _ := retailAirlineEnv(t)
	if !env.Tables.Namespaced() || !cmp.Equal(env.Tables.Namespaces, []string{"tau2_retail", "airline"}) {
		t.Fatalf("namespaces %v", env.Tables.Namespaces)
	}
	for _, tb := range []string{"tau2_retail__users", "airline__users", "tau2_retail__payment_methods", "airline__payment_methods"} {
		if _, err := env.Seed.RowCount(tb); err != nil {
			t.Errorf("table %s: %v", tb, err)
		}
	}
	if _, ok := env.ReadOnly("get_user_details"); ok {
		t.Error("a clashing tool is reachable by its bare name")
	}
	run, err := env.Exec(ctx, env.Seed, 1, []ExecCall{
		{Tool: "tau2-retail__get_user_details", Arguments: json.RawMessage(`{"user_id":"noah_brown_6181"}`)},
		{Tool: "airline__get_user_details", Arguments: json.RawMessage(`{"user_id":"aarav_ahmed_6699"}`)},
		{Tool: "tau2-retail__get_user_details", Arguments: json.RawMessage(`{"user_id":"aarav_ahmed_6699"}`)},
		{Tool: "send_certificate", Arguments: json.RawMessage(`{"user_id":"aarav_ahmed_6699","amount":50}`)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true, false} {
		if c := run.Calls[i]; c.Failed() != want {
			t.Errorf("call %d %s: failed %v (%s), want %v", i, c.Tool, c.Failed(), c.Output, want)
		}
	}
	var tables []string
	for _, td := range state.Diff(env.Seed, run.Final).Tables {
		tables = append(tables, td.Table)
	}
	if !cmp.Equal(tables, []string{"airline__payment_methods"}) {
		t.Fatalf("changed tables %v, want only airline__payment_methods", tables)
	}
}

// retailAirlineEnv is the Env of the tau2 retail and airline specs in one
// group (closed at cleanup) and the two servers.
func retailAirlineEnv(t *testing.T) (*Env, []*spec.Server) {
	t.Helper()
	var servers []*spec.Server
	for _, d := range []string{retailSpec, airlineSpec} {
		s, err := spec.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, s)
	}
	env, err := SpecEnv(context.Background(), module.Config{}, servers...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Store.Close() })
	return env, servers
}

// TestTableNamespacesBadInput: module names that give no namespace or
// clash are typed errors; a group with no clashing table is not
// namespaced.
func TestTableNamespacesBadInput(t *testing.T) {
	mf := func(name string, owns ...string) *module.Manifest {
		m := &module.Manifest{Name: name}
		m.Tables.Owns = owns
		return m
	}
	for _, c := range []struct {
		ms   []*module.Manifest
		want error
	}{
		{[]*module.Manifest{mf("a-b", "users"), mf("a_b", "users")}, module.ErrNamespaceClash},
		{[]*module.Manifest{mf("shop__v2", "users"), mf("air", "users")}, module.ErrBadNamespace},
		{[]*module.Manifest{mf("9shop", "users"), mf("air", "users")}, module.ErrBadNamespace},
	} {
		if _, err := module.TableNamespaces(c.ms); !errors.Is(err, c.want) {
			t.Errorf("%s + %s: %v, want %v", c.ms[0].Name, c.ms[1].Name, err, c.want)
		}
	}
	g, err := module.TableNamespaces([]*module.Manifest{mf("shop__v2", "orders"), mf("air", "users")})
	if err != nil || g.Namespaced() || !cmp.Equal(g.Namespaces, []string{"", ""}) {
		t.Fatalf("non-clashing group: %+v %v, want no namespaces", g, err)
	}
}
