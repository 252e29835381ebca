package megamcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

func newServer(t *testing.T, dataDir string, reg *module.Registry) *Server {
	t.Helper()
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 300 * time.Millisecond, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	s, err := Open(ctx, Config{Runtime: rt, Registry: reg, DataDir: dataDir, CheckpointInterval: -1, Fsync: FsyncNever})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(t *testing.T, s *Server, id string, gen uint64, tool, args string) *CallResult {
	t.Helper()
	r, err := s.Call(context.Background(), id, CallRequest{Generation: gen, Tool: tool, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	return r
}

func text(r *CallResult) string {
	var b strings.Builder
	for _, c := range r.Result.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func TestSessionLifecycle(t *testing.T) {
	reg := megamcptest.Registry(t)
	s := newServer(t, "", reg)
	defer s.Close()
	ctx := context.Background()
	info, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ID) != 26 || info.Generation != FirstGeneration || info.Calls != 0 {
		t.Fatalf("info = %+v", info)
	}
	// A version without the module's own table cannot host a session.
	other, err := s.ImportVersion(ctx, []byte(`{"format":"weft.state/v1","ddl":["CREATE TABLE other (id INT PRIMARY KEY)"],"tables":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, CreateOptions{Modules: []string{"hello"}, Version: other}); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "owns table notes") {
		t.Fatalf("create over a version without notes: %v", err)
	}
	id := info.ID
	r := call(t, s, id, 0, "add_note", `{"text":"first"}`)
	if r.Result.IsError || r.RowsChanged != 1 || r.Seq != 0 || r.Index != 0 {
		t.Fatalf("add_note = %+v %s", r, text(r))
	}
	v1, err := s.Snapshot(ctx, id, 0)
	if err != nil {
		t.Fatal(err)
	}
	call(t, s, id, 0, "add_note", `{"text":"second"}`)
	if got := text(call(t, s, id, 0, "list_notes", `{}`)); !strings.Contains(got, "second") {
		t.Fatalf("list_notes = %s", got)
	}
	// A tool error and invalid arguments are isError results, recorded,
	// changing nothing.
	h := mustInfo(t, s, id).Hash
	if r := call(t, s, id, 0, "add_note", `{"text":"   "}`); !r.Result.IsError {
		t.Fatalf("empty note: %+v", r)
	}
	if r := call(t, s, id, 0, "add_note", `{"txt":1}`); !r.Result.IsError || !strings.Contains(text(r), "invalid") {
		t.Fatalf("invalid args: %s", text(r))
	}
	if r := call(t, s, id, 0, "no_such_tool", `{}`); !r.Result.IsError {
		t.Fatalf("unknown tool: %+v", r)
	}
	if got := mustInfo(t, s, id); got.Hash != h || got.Calls != 6 {
		t.Fatalf("after refused calls: %+v (hash before %s)", got, h)
	}

	gen, err := s.Restore(ctx, id, 0, v1)
	if err != nil || gen != 2 {
		t.Fatalf("restore = %d, %v", gen, err)
	}
	// Fencing: a request carrying generation 0 is not fenced; any other
	// generation than the current one is refused and changes nothing (the
	// first generation is 1, so even a client that read the session before
	// its first restore is fenced).
	gen2, _ := s.Restore(ctx, id, 2, v1)
	if gen2 != 3 {
		t.Fatalf("second restore gen = %d", gen2)
	}
	before := mustInfo(t, s, id)
	_, err = s.Call(ctx, id, CallRequest{Generation: 1, Tool: "add_note", Arguments: json.RawMessage(`{"text":"stale"}`)})
	var fe *FencedError
	if !errors.As(err, &fe) || fe.Current != 3 || fe.Generation != 1 || !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("stale call: %v", err)
	}
	if _, err := s.Restore(ctx, id, 2, v1); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("stale restore: %v", err)
	}
	if after := mustInfo(t, s, id); after.Hash != before.Hash || after.Ledger != before.Ledger {
		t.Fatalf("fenced request changed the session: %+v -> %+v", before, after)
	}
	if got := text(call(t, s, id, 3, "list_notes", `{}`)); strings.Contains(got, "second") || !strings.Contains(got, "first") {
		t.Fatalf("after restore list_notes = %s", got)
	}

	recs, err := s.Ledger(ctx, id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for i, r := range recs {
		if r.Index != uint64(i) || r.Session != id {
			t.Fatalf("record %d = %+v", i, r)
		}
		k := r.Kind
		if r.Kind == KindCall {
			k = r.Tool
			if r.Error != nil {
				k += ":" + r.Error.Kind
			}
		}
		kinds = append(kinds, k)
	}
	want := "add_note add_note list_notes add_note add_note:invalid_arguments no_such_tool:unknown_tool restore restore list_notes"
	if strings.Join(kinds, " ") != want {
		t.Fatalf("ledger kinds\n got %s\nwant %s", strings.Join(kinds, " "), want)
	}
	if recs[6].Version != v1 || recs[7].Generation != 3 || recs[8].Generation != 3 {
		t.Fatalf("restore records: %+v %+v", recs[6], recs[7])
	}
	if page, _ := s.Ledger(ctx, id, 3, 2); len(page) != 2 || page[0].Index != 3 {
		t.Fatalf("page = %+v", page)
	}

	// Replay of the ledger from the initial version gives the current state.
	rr, err := s.Replay(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !rr.Equal || rr.ReplayHash != mustInfo(t, s, id).Hash || rr.Records != 9 {
		t.Fatalf("replay %+v, session %s", rr, mustInfo(t, s, id).Hash)
	}

	// Fork from the session's current state.
	fk, err := s.Fork(ctx, id, 3, "")
	if err != nil {
		t.Fatal(err)
	}
	if fk.Hash != mustInfo(t, s, id).Hash || fk.ID == id {
		t.Fatalf("fork = %+v", fk)
	}
	call(t, s, fk.ID, 0, "add_note", `{"text":"in fork"}`)
	if got := text(call(t, s, id, 0, "list_notes", `{}`)); strings.Contains(got, "in fork") {
		t.Fatal("fork's write visible in its source")
	}
	if err := s.Delete(ctx, id, 2); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("stale delete: %v", err)
	}
	if err := s.Delete(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(ctx, id, CallRequest{Tool: "list_notes"}); !errors.Is(err, ErrNoSuchSession) {
		t.Fatalf("call on deleted session: %v", err)
	}
}

func mustInfo(t *testing.T, s *Server, id string) *SessionInfo {
	t.Helper()
	ss, err := s.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	return ss.Info()
}

// fxTask registers the state of an fx task: fx's seed, the "ro" table it
// reads, and a verifier-only table "secrets".
func fxTask(t *testing.T, s *Server) (*state.Version, string) {
	t.Helper()
	ctx := context.Background()
	g, err := s.group(ctx, []string{"fx"})
	if err != nil {
		t.Fatal(err)
	}
	extra, err := s.store.Load(ctx, "CREATE TABLE secrets (id INT PRIMARY KEY, answer VARCHAR(20)); CREATE TABLE ro (id INT PRIMARY KEY, v VARCHAR(10))",
		state.TableRows{Table: "secrets", Columns: []string{"id", "answer"}, Rows: [][]any{{1, "42"}}},
		state.TableRows{Table: "ro", Columns: []string{"id", "v"}, Rows: [][]any{{1, "a"}}})
	if err != nil {
		t.Fatal(err)
	}
	task, err := state.Merge(g.seed, extra)
	if err != nil {
		t.Fatal(err)
	}
	vid, err := s.putVersion(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(ctx, CreateOptions{Modules: []string{"fx"}}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("fx without the table it reads: %v", err)
	}
	return task, vid
}

func TestIsolation(t *testing.T) {
	reg := megamcptest.Registry(t)
	s := newServer(t, "", reg)
	defer s.Close()
	ctx := context.Background()
	// A task version with a verifier-only table next to the module's tables.
	task, vid := fxTask(t, s)
	a, err := s.Create(ctx, CreateOptions{Modules: []string{"fx"}, Version: vid})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, CreateOptions{Modules: []string{"fx"}, Version: vid})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID == b.ID {
		t.Fatal("equal session ids")
	}
	call(t, s, a.ID, 0, "put", `{"id":"x","n":1}`)
	if r := call(t, s, b.ID, 0, "get", `{"id":"x"}`); !r.Result.IsError && !strings.Contains(text(r), "not found") && strings.Contains(text(r), `"n":1`) {
		t.Fatalf("session b sees a's write: %s", text(r))
	}
	if ia, ib := mustInfo(t, s, a.ID), mustInfo(t, s, b.ID); ia.Hash == ib.Hash || ib.Hash != task.Hash().String() {
		t.Fatalf("hashes a %s b %s task %s", ia.Hash, ib.Hash, task.Hash())
	}
	// The module cannot read the verifier-only table...
	h := mustInfo(t, s, a.ID).Hash
	r, err := s.Call(ctx, a.ID, CallRequest{Tool: "peek", Arguments: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Result.Denied) == 0 || strings.Contains(text(r), "42") || !strings.Contains(text(r), "not declared") {
		t.Fatalf("peek result: %+v", r.Result)
	}
	if mustInfo(t, s, a.ID).Hash != h {
		t.Fatal("denied call changed state")
	}
	// ...but the verifier can.
	vr, err := s.Verify(ctx, a.ID, 0, []Check{
		{Name: "secret", SQL: "SELECT answer FROM secrets WHERE id = 1", Expect: json.RawMessage(`[["42"]]`)},
		{Name: "item", SQL: "SELECT n FROM items WHERE id = 'x'", Expect: json.RawMessage(`[[2]]`)},
		{Name: "put called", Tool: "put", Arguments: json.RawMessage(`{"id":"x"}`), Times: 1},
		{Name: "hash", Hash: h},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := []bool{}
	for _, c := range vr.Checks {
		got = append(got, c.Passed)
	}
	if vr.Passed || len(got) != 4 || !got[0] || got[1] || !got[2] || !got[3] || string(vr.Checks[1].Got) != "[[1]]" {
		t.Fatalf("verify = %+v", vr)
	}
	if _, err := s.Verify(ctx, a.ID, 0, []Check{{Name: "none"}}); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("empty check: %v", err)
	}
	// One session's id cannot act on another: ids are 128-bit random.
	if _, err := s.Call(ctx, strings.ToUpper(a.ID), CallRequest{Tool: "get"}); !errors.Is(err, ErrNoSuchSession) {
		t.Fatalf("call with a wrong id: %v", err)
	}
}

func TestCallFailuresLeaveNoTrace(t *testing.T) {
	reg := megamcptest.Registry(t)
	s := newServer(t, t.TempDir(), reg)
	defer s.Close()
	ctx := context.Background()
	_, vid := fxTask(t, s)
	info, err := s.Create(ctx, CreateOptions{Modules: []string{"fx"}, Version: vid})
	if err != nil {
		t.Fatal(err)
	}
	id := info.ID
	call(t, s, id, 0, "put", `{"id":"a","n":1}`)
	h := mustInfo(t, s, id).Hash
	for _, tc := range []struct {
		tool string
		kind error
		code string
	}{
		{"put_then_panic", module.ErrTrap, "trap"},
		{"put_then_loop", module.ErrDeadline, "deadline"},
		{"put_then_nil", module.ErrTrap, "trap"},
	} {
		_, err := s.Call(ctx, id, CallRequest{Tool: tc.tool, Arguments: json.RawMessage(`{"id":"b","n":2}`)})
		if !errors.Is(err, tc.kind) {
			t.Fatalf("%s: err = %v", tc.tool, err)
		}
		if got := mustInfo(t, s, id).Hash; got != h {
			t.Fatalf("%s changed state", tc.tool)
		}
		recs, _ := s.Ledger(ctx, id, 0, 0)
		last := recs[len(recs)-1]
		if last.Tool != tc.tool || last.Error == nil || last.Error.Kind != tc.code || last.RowsChanged != 0 {
			t.Fatalf("%s: ledger record %+v", tc.tool, last)
		}
	}
	// The session works afterwards, and replay agrees with it.
	call(t, s, id, 0, "put", `{"id":"c","n":3}`)
	rr, err := s.Replay(ctx, id)
	if err != nil || !rr.Equal || rr.ReplayHash != mustInfo(t, s, id).Hash {
		t.Fatalf("replay = %+v, %v", rr, err)
	}

	// A ledger that cannot be written: the call is undone and not
	// acknowledged.
	ss, _ := s.Session(id)
	before := ss.Info()
	ss.wal.mu.Lock()
	ss.wal.f.Close() // writes now fail
	ss.wal.mu.Unlock()
	_, err = s.Call(ctx, id, CallRequest{Tool: "put", Arguments: json.RawMessage(`{"id":"d","n":4}`)})
	if !errors.Is(err, ErrLedger) {
		t.Fatalf("call with a broken ledger: %v", err)
	}
	if after := ss.Info(); after.Hash != before.Hash || after.Ledger != before.Ledger {
		t.Fatalf("failed append left a trace: %+v -> %+v", before, after)
	}
}

func TestRecovery(t *testing.T) {
	reg := megamcptest.Registry(t)
	dir := t.TempDir()
	ctx := context.Background()
	s1 := newServer(t, dir, reg)
	a, err := s1.Create(ctx, CreateOptions{Modules: []string{"hello"}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s1.Create(ctx, CreateOptions{Modules: []string{"retail"}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	call(t, s1, a.ID, 0, "add_note", `{"text":"one"}`)
	call(t, s1, a.ID, 0, "random", `{}`)
	if r := call(t, s1, b.ID, 0, "modify_user_address", `{"user_id":"noah_brown_6181","address1":"1 Main St","address2":"","city":"Austin","state":"TX","country":"USA","zip":"78701"}`); r.Result.IsError || r.RowsChanged == 0 {
		t.Fatalf("modify_user_address: %s (%d rows)", text(r), r.RowsChanged)
	}
	// A checkpoint, then more calls, a restore and a clock change after it.
	if err := s1.checkpointAll(false); err != nil {
		t.Fatal(err)
	}
	ck, _ := os.ReadFile(filepath.Join(dir, "sessions", b.ID, "checkpoint.json"))
	if len(ck) == 0 || len(ck) > 20000 {
		t.Fatalf("retail checkpoint is %d bytes (a delta should be small)", len(ck))
	}
	v, err := s1.Snapshot(ctx, a.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	call(t, s1, a.ID, 0, "add_note", `{"text":"two"}`)
	if _, err := s1.Restore(ctx, a.ID, 0, v); err != nil {
		t.Fatal(err)
	}
	call(t, s1, a.ID, 2, "add_note", `{"text":"three"}`)
	if err := s1.SetClock(ctx, a.ID, 2, time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	if r := call(t, s1, b.ID, 0, "cancel_pending_order", `{"order_id":"#W5918442","reason":"no longer needed"}`); r.Result.IsError || r.RowsChanged == 0 {
		t.Fatalf("cancel_pending_order: %s", text(r))
	}
	want := map[string]*SessionInfo{a.ID: mustInfo(t, s1, a.ID), b.ID: mustInfo(t, s1, b.ID)}
	// A torn append at the end of a's ledger (a crash mid-write: never
	// acknowledged) is cut off on recovery.
	f, err := os.OpenFile(filepath.Join(dir, "sessions", a.ID, "ledger.wal"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{200, 0, 0, 0, 1, 2, 3})
	f.Close()

	// "Crash": s1 is abandoned without Close; s2 recovers from disk.
	Abandon(s1)
	s2 := newServer(t, dir, reg)
	defer s2.Close()
	for id, w := range want {
		got := mustInfo(t, s2, id)
		if got.Hash != w.Hash || got.Generation != w.Generation || got.Ledger != w.Ledger || got.Calls != w.Calls || !got.Clock.Equal(w.Clock) {
			t.Fatalf("session %s recovered as %+v, want %+v", id, got, w)
		}
		rr, err := s2.Replay(ctx, id)
		if err != nil || !rr.Equal || rr.ReplayHash != w.Hash {
			t.Fatalf("replay of %s = %+v, %v", id, rr, err)
		}
	}
	// The recovered session goes on where it stopped: same next sequence
	// number, fencing intact.
	if _, err := s2.Call(ctx, a.ID, CallRequest{Generation: 0 + 0, Tool: "list_notes"}); err != nil {
		t.Fatal(err)
	}
	if r := call(t, s2, a.ID, 2, "random", `{}`); r.Seq != 5 {
		t.Fatalf("seq after recovery = %d", r.Seq)
	}
	if _, err := s2.Call(ctx, a.ID, CallRequest{Generation: 0 + 3, Tool: "list_notes"}); !errors.Is(err, ErrStaleGeneration) {
		t.Fatalf("fencing after recovery: %v", err)
	}
	s1.Close()
}
