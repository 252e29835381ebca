package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/failure"
	"github.com/weft-dev/weft/sdk/spec"
)

const bankDir = "testdata/servers/bank"

var (
	interpOnce sync.Once
	interpBin  []byte
	interpErr  error
)

// interpWasm builds modules/interp for wasip1 once per test process.
func interpWasm(t testing.TB) []byte {
	t.Helper()
	interpOnce.Do(func() {
		out := filepath.Join(fixtureDir, "interp.wasm")
		cmd := exec.Command(goCommand(), "build", "-trimpath", "-buildmode=c-shared", "-o", out, "../../modules/interp")
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			interpErr = fmt.Errorf("building modules/interp: %v\n%s", err, msg)
			return
		}
		interpBin, interpErr = os.ReadFile(out)
	})
	if interpErr != nil {
		t.Fatal(interpErr)
	}
	return interpBin
}

func loadBank(t testing.TB) *spec.Server {
	t.Helper()
	s, err := spec.Load(bankDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// bankSeed loads the bank's schema and seed.
func bankSeed(t testing.TB, s *spec.Server) (*state.Store, *state.Version) {
	t.Helper()
	b := &Bundle{Schema: s.Schema, Seed: s.Seed}
	st := state.NewStore()
	t.Cleanup(func() { st.Close() })
	v, err := b.SeedVersion(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	return st, v
}

// wasmServer compiles the interpreter in a new runtime and loads s on it.
func wasmServer(t testing.TB, cfg Config, s *spec.Server) (*Runtime, *Module) {
	t.Helper()
	ctx := context.Background()
	rt, err := NewRuntime(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	in, err := rt.Compile(ctx, interpWasm(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := rt.LoadServer(ctx, in, s)
	if err != nil {
		t.Fatal(err)
	}
	return rt, m
}

type outcome struct {
	Text    string
	Struct  string
	IsError bool
	Failure string
	Denied  []string
}

func callOutcome(t testing.TB, m *Module, s *Session, tool, args string) outcome {
	t.Helper()
	res, err := m.Call(context.Background(), s, tool, json.RawMessage(args))
	if err != nil {
		var ce *CallError
		o := outcome{Failure: string(failure.Of(err))}
		if errors.As(err, &ce) {
			o.Denied = ce.Denied
		}
		return o
	}
	return outcome{Text: res.Content[0].Text, Struct: string(res.StructuredContent), IsError: res.IsError, Denied: res.Denied}
}

var bankCalls = []struct{ tool, args string }{
	{"get_account", `{"account_id":"a1"}`},
	{"get_account", `{"account_id":"zz"}`},
	{"transfer", `{"from_id":"a1","to_id":"a2","amount":30}`},
	{"transfer", `{"from_id":"a2","to_id":"a1","amount":500}`},
	{"list_transfers", `{"account_id":"a1"}`},
	{"sneaky_close", `{"account_id":"a2"}`},
	{"get_account", `{"account_id":"a2"}`},
}

// The same calls through the wasm interpreter and natively give the same
// results, failures and final state; the expected values are written out.
func TestServerWasmMatchesNative(t *testing.T) {
	s := loadBank(t)
	st, seed := bankSeed(t, s)
	native, err := NewNativeServer(s, Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, wasm := wasmServer(t, Config{CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")}, s)
	want := []outcome{
		{Text: `{"id":"a1","owner":"Ada","balance":100}`, Struct: `{"id":"a1","owner":"Ada","balance":100}`},
		{Text: "no account zz", Struct: `{"error":"not_found","message":"no account zz"}`, IsError: true},
		{Text: `{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}`, Struct: `{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}`},
		{Text: "account a2 holds 50, less than 500", Struct: `{"error":"insufficient_funds","message":"account a2 holds 50, less than 500"}`, IsError: true},
		{Text: `{"transfers":[{"id":1,"from_id":"a2","to_id":"a1","amount":5,"at":"2024-12-31T12:00:00"},{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}]}`,
			Struct: `{"transfers":[{"id":1,"from_id":"a2","to_id":"a1","amount":5,"at":"2024-12-31T12:00:00"},{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}]}`},
		{Failure: string(failure.Trap), Denied: []string{"DELETE FROM transfers WHERE from_id = ?"}},
		{Text: `{"id":"a2","owner":"Bob","balance":50}`, Struct: `{"id":"a2","owner":"Bob","balance":50}`},
	}
	var exports []string
	for _, m := range []*Module{native, wasm} {
		sess := &Session{Workspace: st.Fork(seed), Seed: 3}
		var got []outcome
		for _, c := range bankCalls {
			got = append(got, callOutcome(t, m, sess, c.tool, c.args))
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", m.Digest(), d)
		}
		res, err := m.Call(context.Background(), sess, ExportTool, nil)
		if err != nil {
			t.Fatal(err)
		}
		exports = append(exports, res.Content[0].Text)
	}
	const wantExport = `{"accounts":{"a1":{"id":"a1","owner":"Ada","balance":70},"a2":{"id":"a2","owner":"Bob","balance":50}},"transfers":{"1":{"id":1,"from_id":"a2","to_id":"a1","amount":5,"at":"2024-12-31T12:00:00"},"2":{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}}}`
	if d := cmp.Diff([]string{wantExport, wantExport}, exports); d != "" {
		t.Errorf("exports (-want +got):\n%s", d)
	}
}

// Each tool runs under its own declared tables: a read tool cannot write,
// and a table outside the declared reads is denied too, at the host and in
// the engine; the refused call changes nothing.
func TestServerToolPolicy(t *testing.T) {
	s := loadBank(t)
	m, err := NewNativeServer(s, Config{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ owns, reads []string }{
		"get_account":    {[]string{}, []string{"accounts"}},
		"transfer":       {[]string{"accounts", "transfers"}, []string{}},
		"list_transfers": {[]string{}, []string{"transfers"}},
		"sneaky_close":   {[]string{"accounts"}, []string{}},
		"spin":           {[]string{}, []string{}},
		ExportTool:       {[]string{}, []string{"accounts", "transfers"}},
	}
	for tool, w := range want {
		p := m.ToolPolicy(tool)
		if d := cmp.Diff([]any{w.owns, w.reads}, []any{p.Owns, p.Reads}); d != "" {
			t.Errorf("%s policy (-want +got):\n%s", tool, d)
		}
	}
	// A program that reads a table its tool does not declare.
	s2 := loadBank(t)
	s2.Program = strings.Replace(s2.Program, `"SELECT id, from_id, to_id, amount, at FROM transfers WHERE from_id = ? OR to_id = ? ORDER BY id"`,
		`"SELECT t.id, t.from_id, t.to_id, t.amount, t.at FROM transfers t JOIN accounts a ON a.id = t.from_id WHERE t.from_id = ? OR t.to_id = ? ORDER BY t.id"`, 1)
	m2, err := NewNativeServer(s2, Config{})
	if err != nil {
		t.Fatal(err)
	}
	st, seed := bankSeed(t, s)
	sess := &Session{Workspace: st.Fork(seed)}
	got := callOutcome(t, m2, sess, "list_transfers", `{"account_id":"a1"}`)
	if got.Failure != string(failure.Trap) || len(got.Denied) != 1 || !strings.Contains(got.Denied[0], "JOIN accounts") {
		t.Errorf("undeclared read: %+v", got)
	}
	got = callOutcome(t, m, sess, "sneaky_close", `{"account_id":"a2"}`)
	if got.Failure != string(failure.Trap) {
		t.Errorf("sneaky_close: %+v", got)
	}
	// Nothing changed: the first UPDATE (allowed) was rolled back with the call.
	if d := cmp.Diff(outcome{Text: `{"id":"a2","owner":"Bob","balance":20}`, Struct: `{"id":"a2","owner":"Bob","balance":20}`},
		callOutcome(t, m, sess, "get_account", `{"account_id":"a2"}`)); d != "" {
		t.Errorf("after the refused call (-want +got):\n%s", d)
	}
	if d := cmp.Diff(`{"transfers":[{"id":1,"from_id":"a2","to_id":"a1","amount":5,"at":"2024-12-31T12:00:00"}]}`,
		callOutcome(t, m, sess, "list_transfers", `{"account_id":"a2"}`).Text); d != "" {
		t.Errorf("transfers after the refused call (-want +got):\n%s", d)
	}
}

// A call out of its step budget is its own failure kind, step_budget (not
// the agent's error, not a retryable deadline: the same call loops the same
// way); its writes before the loop are rolled back and the next call runs
// normally.
func TestServerStepBudget(t *testing.T) {
	s := loadBank(t)
	s.Tools = append(s.Tools, spec.Tool{Name: "spin_after_write", Description: "Zeroes an account, then loops.",
		Writes: []string{"accounts"}, InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)})
	s.Program += `
def spin_after_write():
    execute("UPDATE accounts SET balance = 0 WHERE id = 'a1'")
    n = 0
    while True:
        n += 1
`
	st, seed := bankSeed(t, s)
	m, err := NewNativeServer(s, Config{CallTimeout: 60e9})
	if err != nil {
		t.Fatal(err)
	}
	sess := &Session{Workspace: st.Fork(seed)}
	for _, tool := range []string{"spin", "spin_after_write"} {
		hash := sess.Workspace.Hash()
		_, err = m.Call(context.Background(), sess, tool, json.RawMessage(`{}`))
		var ce *CallError
		if !errors.As(err, &ce) || !errors.Is(err, ErrStepBudget) || ce.Code != abi.InternalSteps ||
			!strings.Contains(ce.Message, "ran out of its step budget (20000000 steps)") {
			t.Fatalf("%s: %v", tool, err)
		}
		k := failure.Of(err)
		if k != failure.StepBudget || k.Retryable() || !k.Infra() || !k.InModule() || k.Blame() != failure.BlameEnvironment {
			t.Errorf("%s: kind %s (retryable %v, infra %v, in module %v, blame %s)", tool, k, k.Retryable(), k.Infra(), k.InModule(), k.Blame())
		}
		if errors.Is(err, ErrDeadline) {
			t.Errorf("%s: a step budget failure is not a deadline: %v", tool, err)
		}
		if sess.Workspace.Hash() != hash {
			t.Errorf("%s: the failed call changed the state", tool)
		}
	}
	if got := callOutcome(t, m, sess, "get_account", `{"account_id":"a1"}`); got.Text != `{"id":"a1","owner":"Ada","balance":100}` {
		t.Errorf("after the loops: %+v", got)
	}
}

// variant is server s renamed name-i with a program that differs by a
// comment: a generated variant (same tools, its own digest).
func variant(s *spec.Server, i int) *spec.Server {
	v := *s
	v.Name = fmt.Sprintf("%s-%d", s.Name, i)
	v.Program = fmt.Sprintf("# generated variant %d\n%s", i, s.Program)
	return &v
}

// Many servers share one compiled interpreter and one pool under
// concurrent calls; each gets its own program (sent by digest) and its own
// results.
func TestServersSharePool(t *testing.T) {
	s := loadBank(t)
	st, seed := bankSeed(t, s)
	ctx := context.Background()
	rt, first := wasmServer(t, Config{MaxIdleInstances: 2, CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")}, s)
	in := first.Interpreter()
	const n = 40
	servers := make([]*Module, n)
	for i := range servers {
		m, err := rt.LoadServer(ctx, in, variant(s, i))
		if err != nil {
			t.Fatal(err)
		}
		if m.Manifest().Name != fmt.Sprintf("bank-%d", i) || m.Interpreter() != in {
			t.Fatalf("server %d: %s", i, m.Manifest().Name)
		}
		servers[i] = m
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, m := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := &Session{Workspace: st.Fork(seed)}
			amount := i + 1
			res, err := m.Call(ctx, sess, "transfer", json.RawMessage(fmt.Sprintf(`{"from_id":"a1","to_id":"a2","amount":%d}`, amount)))
			if err != nil {
				errs <- fmt.Errorf("server %d: %v", i, err)
				return
			}
			got := callOutcome(t, m, sess, "get_account", `{"account_id":"a2"}`)
			want := fmt.Sprintf(`{"id":"a2","owner":"Bob","balance":%d}`, 20+amount)
			if res.IsError || got.Text != want {
				errs <- fmt.Errorf("server %d: %s / %+v, want %s", i, res.Content[0].Text, got, want)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if idle := in.Idle(); idle > 2 {
		t.Errorf("%d idle interpreter instances, want <= 2 (one shared pool)", idle)
	}
	rt.mu.Lock()
	compiled := len(rt.modules)
	rt.mu.Unlock()
	if compiled != 1 {
		t.Errorf("%d compiled modules, want 1", compiled)
	}
}

// An instance that no longer holds a program it was sent (the guest's
// program cache, sdk/interp.DefaultMaxProgramBytes, evicted it) answers
// program_missing and is sent the program compiled again, not its source;
// a compiled form the guest cannot decode is followed by the source. The
// eviction is forged: the host is told the instance holds a program it
// was never sent (filling the guest's 128 MiB would take ~15,000 servers).
func TestServerProgramResent(t *testing.T) {
	s := loadBank(t)
	st, seed := bankSeed(t, s)
	ctx := context.Background()
	rt, first := wasmServer(t, Config{MaxIdleInstances: 1, MaxConcurrentCalls: 1, CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")}, s)
	in := first.Interpreter()
	sess := &Session{Workspace: st.Fork(seed)}
	if got := callOutcome(t, first, sess, "get_account", `{"account_id":"a1"}`); got.Failure != "" || got.IsError {
		t.Fatalf("first call: %+v", got)
	}
	forgeHeld := func(m *Module) {
		t.Helper()
		inst, err := in.acquireFor(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		inst.programs[m.srv.digest] = true
		in.release(ctx, inst)
	}
	for _, tc := range []struct {
		name       string
		damage     bool // the compiled form is not decodable: the source follows
		wantResent int64
	}{{"compiled", false, 1}, {"source", true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := rt.LoadServer(ctx, in, variant(s, len(tc.name)))
			if err != nil {
				t.Fatal(err)
			}
			if tc.damage {
				bad, err := abi.Marshal(abi.Program{Digest: m.srv.digest, Compiled: []byte("not a compiled program")})
				if err != nil {
					t.Fatal(err)
				}
				m.srv.withProgram = append(append([]byte(`,"program":`), bad...), '}')
			}
			forgeHeld(m)
			if got := callOutcome(t, m, sess, "get_account", `{"account_id":"a2"}`); got.Text != `{"id":"a2","owner":"Bob","balance":20}` {
				t.Fatalf("after the forged eviction: %+v", got)
			}
			if n := m.srv.resent.Load(); n != tc.wantResent {
				t.Errorf("program resent %d times, want %d", n, tc.wantResent)
			}
			// Now held for real: the next call goes by digest, nothing resent.
			if got := callOutcome(t, m, sess, "get_account", `{"account_id":"a1"}`); got.Failure != "" || got.IsError {
				t.Fatalf("second call: %+v", got)
			}
			if n := m.srv.resent.Load(); n != tc.wantResent {
				t.Errorf("program resent %d times after a held call, want %d", n, tc.wantResent)
			}
		})
	}
}

func TestLoadServerRefusesNonInterpreter(t *testing.T) {
	s := loadBank(t)
	ctx := context.Background()
	rt, srv := wasmServer(t, Config{CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")}, s)
	native, err := NewNativeServer(s, Config{})
	if err != nil {
		t.Fatal(err)
	}
	for name, in := range map[string]*Module{"nil": nil, "server": srv, "native": native} {
		if _, err := rt.LoadServer(ctx, in, s); !errors.Is(err, ErrNotInterpreter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	bad := loadBank(t)
	bad.Tools[0].Reads = []string{"ledger"}
	_, err = rt.LoadServer(ctx, srv.Interpreter(), bad)
	if !errors.Is(err, ErrInvalidModule) || !strings.Contains(err.Error(), `server "bank", tool "get_account", field reads: table "ledger" is not created by the schema`) {
		t.Errorf("invalid spec: %v", err)
	}
}

// bankExportChanged is the bank program's export_changed(): the accounts
// and transfers of the changed rows, None for a removed one.
const bankExportChanged = `
def export_changed(changed):
    out = {}
    for coll, table, col in [("accounts", "accounts", "id"), ("transfers", "transfers", "id")]:
        rows = changed.get(table, [])
        if rows:
            recs = {}
            for r in rows:
                rec = query_one("SELECT * FROM " + table + " WHERE id = ?", r[col])
                recs[str(r[col])] = rec
            out[coll] = recs
    return out
`

// The export of changed records (ExportChangedTool) answers the records of
// the rows named, in the export's encoding, through wasm and natively; a
// module whose manifest does not say export_changed refuses it as an
// unknown tool and arguments without "changed" are invalid, both before
// anything runs.
func TestServerExportChanged(t *testing.T) {
	s := loadBank(t)
	s.ExportChanged = true
	s.Program += bankExportChanged
	st, seed := bankSeed(t, s)
	native, err := NewNativeServer(s, Config{})
	if err != nil {
		t.Fatal(err)
	}
	_, wasm := wasmServer(t, Config{CacheDir: filepath.Join(os.TempDir(), "weft-test-wazero-cache")}, s)
	plain, err := NewNativeServer(loadBank(t), Config{})
	if err != nil {
		t.Fatal(err)
	}
	const args = `{"changed":{"accounts":[{"id":"a1"},{"id":"a9"}],"transfers":[{"id":2}]}}`
	const want = `{"accounts":{"a1":{"id":"a1","owner":"Ada","balance":70},"a9":null},"transfers":{"2":{"id":2,"from_id":"a1","to_id":"a2","amount":30,"at":"2025-01-01T00:00:00"}}}`
	for _, m := range []*Module{native, wasm} {
		sess := &Session{Workspace: st.Fork(seed), Seed: 3}
		if got := callOutcome(t, m, sess, "transfer", `{"from_id":"a1","to_id":"a2","amount":30}`); got.IsError || got.Failure != "" {
			t.Fatalf("transfer: %+v", got)
		}
		res, err := m.Call(context.Background(), sess, ExportChangedTool, json.RawMessage(args))
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", ExportChangedTool, err, res)
		}
		if d := cmp.Diff(want, res.Content[0].Text); d != "" {
			t.Errorf("%s (-want +got):\n%s", m.Digest(), d)
		}
		hash := sess.Workspace.Hash()
		if _, err := m.Call(context.Background(), sess, ExportChangedTool, json.RawMessage(`{}`)); !errors.Is(err, ErrInvalidArguments) {
			t.Errorf("no changed member: %v", err)
		}
		if sess.Workspace.Hash() != hash {
			t.Error("a refused export of changed records changed the state")
		}
	}
	if _, err := plain.Call(context.Background(), &Session{Workspace: st.Fork(seed)}, ExportChangedTool, json.RawMessage(args)); !errors.Is(err, ErrUnknownTool) {
		t.Errorf("a server without export_changed: %v", err)
	}
	if p := native.ToolPolicy(ExportChangedTool); len(p.Owns) != 0 || !slices.Equal(p.Reads, []string{"accounts", "transfers"}) {
		t.Errorf("policy of %s: %+v", ExportChangedTool, p)
	}
}
