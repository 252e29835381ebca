package megamcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/sdk/spec"
)

const bankSpec = "core/module/testdata/servers/bank"

// A synthesized server (a server bundle on the interpreter module) is
// served like a module: sessions, tool calls, its tool-level table policy,
// the ledger, replay.
func TestServeServerBundle(t *testing.T) {
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	megamcptest.PutServer(t, reg, bankSpec)
	s := newServer(t, t.TempDir(), reg)
	defer s.Close()
	ctx := context.Background()
	info, err := s.Create(ctx, CreateOptions{Modules: []string{"bank"}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	g, err := s.group(ctx, []string{"bank"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range g.Tools() {
		names = append(names, tl.Name)
	}
	if d := cmp.Diff([]string{"get_account", "transfer", "list_transfers", "sneaky_close", "spin"}, names); d != "" {
		t.Errorf("tools (-want +got):\n%s", d)
	}
	r := call(t, s, id, 0, "transfer", `{"from_id":"a1","to_id":"a2","amount":30}`)
	if r.Result.IsError || r.RowsChanged != 3 || text(r) != `{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}` {
		t.Fatalf("transfer = %+v %s", r, text(r))
	}
	if got := text(call(t, s, id, 0, "get_account", `{"account_id":"a2"}`)); got != `{"id":"a2","owner":"Bob","balance":50}` {
		t.Fatalf("get_account = %s", got)
	}
	if r := call(t, s, id, 0, "transfer", `{"from_id":"a2","to_id":"a1","amount":999}`); !r.Result.IsError || text(r) != "account a2 holds 50, less than 999" {
		t.Fatalf("overdraft = %s", text(r))
	}
	h := mustInfo(t, s, id).Hash
	// A write outside the tool's declared tables: refused, reported, nothing changed.
	_, err = s.Call(ctx, id, CallRequest{Tool: "sneaky_close", Arguments: json.RawMessage(`{"account_id":"a2"}`)})
	var ce *module.CallError
	if !errors.Is(err, module.ErrTrap) || !errors.As(err, &ce) || len(ce.Denied) != 1 || ce.Denied[0] != "DELETE FROM transfers WHERE from_id = ?" {
		t.Fatalf("sneaky_close: %v", err)
	}
	if got := mustInfo(t, s, id).Hash; got != h {
		t.Fatal("a refused call changed the state")
	}
	recs, err := s.Ledger(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, rec := range recs {
		k := rec.Kind
		if rec.Kind == KindCall {
			k = rec.Module + "/" + rec.Tool
			if rec.Error != nil {
				k += ":" + rec.Error.Kind
			}
		}
		kinds = append(kinds, k)
	}
	want := []string{"bank/transfer", "bank/get_account", "bank/transfer", "bank/sneaky_close:trap"}
	if d := cmp.Diff(want, kinds); d != "" {
		t.Errorf("ledger (-want +got):\n%s", d)
	}
	rr, err := s.Replay(ctx, id)
	if err != nil || !rr.Equal {
		t.Fatalf("replay = %+v, %v", rr, err)
	}
}

// Two servers in one MegaMCP server share the interpreter's compiled
// module; a server bundle whose interpreter is missing is refused with the
// fix in the error.
func TestServeServersShareInterpreter(t *testing.T) {
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	megamcptest.PutServer(t, reg, bankSpec)
	interp, err := reg.Resolve(module.InterpreterName)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := spec.Load(megamcptest.Root() + "/" + bankSpec)
	if err != nil {
		t.Fatal(err)
	}
	sp.Name = "bank2"
	b, err := module.ServerBundle(sp, interp)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(b); err != nil {
		t.Fatal(err)
	}
	orphan := *sp
	orphan.Name = "orphan"
	ob, err := module.ServerBundle(&orphan, "sha256:"+strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Put(ob); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, "", reg)
	defer s.Close()
	ctx := context.Background()
	g1, err := s.group(ctx, []string{"bank"})
	if err != nil {
		t.Fatal(err)
	}
	g2, err := s.group(ctx, []string{"bank2"})
	if err != nil {
		t.Fatal(err)
	}
	m1, m2 := g1.Modules()[0], g2.Modules()[0]
	if m1.Interpreter() == nil || m1.Interpreter() != m2.Interpreter() {
		t.Fatalf("interpreters %p %p, want one shared", m1.Interpreter(), m2.Interpreter())
	}
	for _, name := range []string{"bank", "bank2"} {
		info, err := s.Create(ctx, CreateOptions{Modules: []string{name}})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(call(t, s, info.ID, 0, "get_account", `{"account_id":"a1"}`)); got != `{"id":"a1","owner":"Ada","balance":100}` {
			t.Fatalf("%s: get_account = %s", name, got)
		}
	}
	_, err = s.Create(ctx, CreateOptions{Modules: []string{"orphan"}})
	if !errors.Is(err, module.ErrNoInterpreter) || !strings.Contains(err.Error(), "run make build") {
		t.Fatalf("orphan server: %v", err)
	}
}
