package module

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/state"
)

func text(r *Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func count(t *testing.T, ws *state.Workspace) int64 {
	t.Helper()
	rows, err := ws.Query(context.Background(), "SELECT COUNT(*) FROM items")
	if err != nil {
		t.Fatal(err)
	}
	return rows.Values[0][0].(int64)
}

func TestCompileManifest(t *testing.T) {
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "fx")
	man := m.Manifest()
	if man.ABI != ABIVersion || man.Name != "fx" || len(man.Tools) != 13 {
		t.Fatalf("manifest %+v", man)
	}
	if !strings.HasPrefix(m.Digest(), "sha256:") || m.Digest() != Digest(fixture(t, "fx")) {
		t.Fatal(m.Digest())
	}
	// compiled once per digest
	var wg sync.WaitGroup
	mods := make([]*Module, 8)
	for i := range mods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mods[i], _ = r.Compile(context.Background(), fixture(t, "fx"))
		}()
	}
	wg.Wait()
	for _, x := range mods {
		if x != m {
			t.Fatal("Compile of the same bytes returned a different Module")
		}
	}
	if m.Idle() != 1 {
		t.Fatalf("idle %d after compile", m.Idle())
	}
}

func TestCompileRejects(t *testing.T) {
	r := newRuntime(t, Config{})
	_, err := r.Compile(context.Background(), []byte("\x00asm\x01\x00\x00\x00"))
	var me *ModuleError
	if !errors.Is(err, ErrInvalidModule) || !errors.As(err, &me) || !strings.Contains(me.Reason, "missing export") {
		t.Fatalf("empty module: %v", err)
	}
	if _, err := r.Compile(context.Background(), []byte("not wasm")); !errors.Is(err, ErrInvalidModule) {
		t.Fatalf("garbage bytes: %v", err)
	}
}

func TestManifestValidate(t *testing.T) {
	good := func() *Manifest {
		return &Manifest{ABI: ABIVersion, Name: "x", Hosts: map[string]string{"sql": "v1"},
			Tables: Tables{Owns: []string{"a"}, Reads: []string{"b"}},
			Tools:  []Tool{{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(m *Manifest){
		"abi":          func(m *Manifest) { m.ABI = "weft/v2" },
		"host":         func(m *Manifest) { m.Hosts["net"] = "v1" },
		"host version": func(m *Manifest) { m.Hosts["sql"] = "v3" },
		"dup tool":     func(m *Manifest) { m.Tools = append(m.Tools, m.Tools[0]) },
		"reserved":     func(m *Manifest) { m.Tools[0].Name = ExportTool },
		"empty tool":   func(m *Manifest) { m.Tools[0].Name = "" },
		"schema":       func(m *Manifest) { m.Tools[0].InputSchema = json.RawMessage(`{"type": 5}`) },
		"no schema":    func(m *Manifest) { m.Tools[0].InputSchema = nil },
		"remote ref":   func(m *Manifest) { m.Tools[0].InputSchema = json.RawMessage(`{"$ref":"http://example.com/s.json"}`) },
		"empty table":  func(m *Manifest) { m.Tables.Owns = []string{""} },
		"dup table":    func(m *Manifest) { m.Tables.Reads = []string{"A"} },
	} {
		m := good()
		mut(m)
		if err := m.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestHappyPathAndDeterminism(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "fx")
	ws := fxWorkspace(t)
	s := &Session{Workspace: ws, Seed: 42, Clock: NewVirtualClock(time.Date(2024, 3, 1, 12, 0, 0, 5, time.UTC))}
	res, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"a","n":7}`))
	if err != nil || res.IsError {
		t.Fatalf("put: %v %+v", err, res)
	}
	if string(res.StructuredContent) != `{"count":1}` {
		t.Fatalf("structured %s", res.StructuredContent)
	}
	res, err = m.Call(ctx, s, "get", json.RawMessage(`{"id":"a"}`))
	if err != nil || string(res.StructuredContent) != `{"id":"a","n":7}` {
		t.Fatalf("get: %v %+v", err, res)
	}
	if count(t, ws) != 1 {
		t.Fatal("insert not committed")
	}

	// tool error: rolled back, returned as a result
	h := ws.Hash()
	res, err = m.Call(ctx, s, "put_then_fail", json.RawMessage(`{"id":"b","n":1}`))
	if err != nil || !res.IsError || !strings.Contains(text(res), "refusing item b") {
		t.Fatalf("put_then_fail: %v %+v", err, res)
	}
	if ws.Hash() != h {
		t.Fatal("a tool error left a trace")
	}

	entropy := func(s *Session) string {
		t.Helper()
		res, err := m.Call(ctx, s, "entropy", nil)
		if err != nil || res.IsError {
			t.Fatalf("entropy: %v %+v", err, res)
		}
		return string(res.StructuredContent)
	}
	mk := func(seed uint64) *Session {
		return &Session{Workspace: fxWorkspace(t), Seed: seed, Clock: NewVirtualClock(time.Date(2024, 3, 1, 12, 0, 0, 5, time.UTC))}
	}
	a, b, c := mk(1), mk(1), mk(2)
	a1, a2 := entropy(a), entropy(a)
	b1, b2 := entropy(b), entropy(b)
	c1 := entropy(c)
	if a1 != b1 || a2 != b2 {
		t.Fatalf("same seed and sequence differ:\n%s\n%s\n%s\n%s", a1, b1, a2, b2)
	}
	if a1 == a2 {
		t.Fatalf("consecutive calls share randomness: %s", a1)
	}
	if a1 == c1 {
		t.Fatalf("different seeds agree: %s", a1)
	}
	var e struct {
		Now    string
		Crypto uint64
		Math   uint64
	}
	json.Unmarshal([]byte(a1), &e)
	if e.Now != "2024-03-01T12:00:00.000000005Z" {
		t.Fatalf("guest time.Now() = %s, want the session clock", e.Now)
	}
	a.Clock.Advance(time.Hour)
	json.Unmarshal([]byte(entropy(a)), &e)
	if e.Now != "2024-03-01T13:00:00.000000005Z" {
		t.Fatalf("after Advance: %s", e.Now)
	}
}

func TestLogAndProgress(t *testing.T) {
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "fx")
	var mu sync.Mutex
	var logs []string
	s := &Session{Workspace: fxWorkspace(t),
		Log: func(level int, msg string) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf("%d %s", level, msg))
			mu.Unlock()
		},
		Progress: func(p, total float64, msg string) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf("progress %g/%g %s", p, total, msg))
			mu.Unlock()
		}}
	res, err := m.Call(context.Background(), s, "say", json.RawMessage(`{"text":"hi"}`))
	if err != nil || text(res) != "hi" {
		t.Fatalf("%v %+v", err, res)
	}
	want := []string{"2 say: hi", "progress 1/2 half", "1 stdout: hi"}
	if fmt.Sprint(logs) != fmt.Sprint(want) {
		t.Fatalf("logs %q", logs)
	}
}

func TestArgumentsAndUnknownTool(t *testing.T) {
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "fx")
	ws := fxWorkspace(t)
	s := &Session{Workspace: ws}
	_, err := m.Call(context.Background(), s, "put", json.RawMessage(`{"id":5,"n":1}`))
	var ae *ArgumentError
	if !errors.Is(err, ErrInvalidArguments) || !errors.As(err, &ae) || ae.Pointer != "/id" || ae.Tool != "put" {
		t.Fatalf("err %v (%#v)", err, ae)
	}
	_, err = m.Call(context.Background(), s, "put", json.RawMessage(`{"id":"x"}`))
	if !errors.As(err, &ae) || ae.Pointer != "" || !strings.Contains(ae.Message, "n") {
		t.Fatalf("missing property: %v", err)
	}
	if _, err := m.Call(context.Background(), s, "put", json.RawMessage(`[1]`)); !errors.Is(err, ErrInvalidArguments) {
		t.Fatalf("array args: %v", err)
	}
	if _, err := m.Call(context.Background(), s, "nope", nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := m.Call(context.Background(), s, ExportTool, nil); !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("export of a non-exporting module: %v", err)
	}
	if s.Seq() != 0 {
		t.Fatalf("refused calls consumed sequence numbers: %d", s.Seq())
	}
}

// containment: each failure leaves the workspace untouched, is typed, and
// the module keeps serving.
func TestContainment(t *testing.T) {
	ctx := context.Background()
	fast := compileFixture(t, newRuntime(t, Config{CallTimeout: 300 * time.Millisecond}), "fx")
	capped := compileFixture(t, newRuntime(t, Config{MemoryLimitMiB: 64, CallTimeout: 10 * time.Second}), "fx")
	cases := []struct {
		tool string
		kind error
		msg  string
		m    *Module
	}{
		{"put_then_loop", ErrDeadline, "deadline", fast},
		{"put_then_panic", ErrTrap, "fixture panic", fast},
		{"put_then_nil", ErrTrap, "nil pointer", fast},
		{"put_then_crash", ErrTrap, "fixture crash on a goroutine", fast},
		{"put_then_oom", ErrMemoryLimit, "64 MiB", capped},
	}
	for _, c := range cases {
		m := c.m
		t.Run(c.tool, func(t *testing.T) {
			ws := fxWorkspace(t)
			s := &Session{Workspace: ws}
			if _, err := m.Call(ctx, s, "put", json.RawMessage(`{"id":"keep","n":1}`)); err != nil {
				t.Fatal(err)
			}
			h := ws.Hash()
			start := time.Now()
			res, err := m.Call(ctx, s, c.tool, json.RawMessage(`{"id":"gone","n":2}`))
			var ce *CallError
			if !errors.Is(err, c.kind) || !errors.As(err, &ce) || res != nil || ce.Tool != c.tool {
				t.Fatalf("err %v, res %+v; want %v", err, res, c.kind)
			}
			if !strings.Contains(ce.Message, c.msg) {
				t.Errorf("message %q lacks %q", ce.Message, c.msg)
			}
			t.Logf("%s: %v in %v", c.tool, err, time.Since(start).Round(time.Millisecond))
			if ws.Hash() != h {
				t.Fatal("failed call left a trace in the workspace")
			}
			// the workspace is usable (no unit left open) and the module
			// serves the next call on a fresh instance
			res, err = m.Call(ctx, s, "put", json.RawMessage(`{"id":"next","n":3}`))
			if err != nil || string(res.StructuredContent) != `{"count":2}` {
				t.Fatalf("next call: %v %+v", err, res)
			}
		})
	}
}

func TestDeniedSQL(t *testing.T) {
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "fx")
	ws := fxWorkspace(t)
	h := ws.Hash()
	s := &Session{Workspace: ws}
	res, err := m.Call(context.Background(), s, "peek", nil)
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.Contains(text(res), `sql denied: denied: table \"secrets\" is not declared`) || len(res.Denied) != 1 {
		t.Fatalf("result %s denied %q", text(res), res.Denied)
	}
	res, err = m.Call(context.Background(), s, "write_ro", nil)
	if err != nil || !strings.Contains(text(res), `read-only`) || len(res.Denied) != 1 {
		t.Fatalf("write_ro: %v %s", err, text(res))
	}
	if ws.Hash() != h {
		t.Fatal("state changed")
	}
}

func TestMalformedOutput(t *testing.T) {
	r := newRuntime(t, Config{})
	m := compileFixture(t, r, "garbage")
	ws := fxWorkspace(t)
	h := ws.Hash()
	s := &Session{Workspace: ws}
	for tool, kind := range map[string]error{
		"notjson":  ErrMalformedOutput,
		"noshape":  ErrMalformedOutput,
		"badtype":  ErrMalformedOutput,
		"badptr":   ErrMalformedOutput,
		"internal": ErrTrap,
	} {
		_, err := m.Call(context.Background(), s, tool, nil)
		var ce *CallError
		if !errors.Is(err, kind) || !errors.As(err, &ce) {
			t.Errorf("%s: %v, want %v", tool, err, kind)
		}
		t.Logf("%s: %v", tool, err)
		if ws.Hash() != h {
			t.Fatal("state changed")
		}
	}
	res, err := m.Call(context.Background(), s, "ok", nil)
	if err != nil || text(res) != "ok" {
		t.Fatalf("ok: %v %+v", err, res)
	}
}

func TestConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	r := newRuntime(t, Config{MaxIdleInstances: 4})
	m := compileFixture(t, r, "fx")
	const sessions, calls = 16, 8
	var wg sync.WaitGroup
	errs := make(chan error, sessions)
	outs := make([][]string, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ws := fxWorkspace(t)
			s := &Session{Workspace: ws, Seed: uint64(i % 2)}
			for j := range calls {
				res, err := m.Call(ctx, s, "put", json.RawMessage(fmt.Sprintf(`{"id":"s%d-%d","n":%d}`, i, j, j)))
				if err != nil {
					errs <- err
					return
				}
				if want := fmt.Sprintf(`{"count":%d}`, j+1); string(res.StructuredContent) != want {
					errs <- fmt.Errorf("session %d call %d: %s, want %s", i, j, res.StructuredContent, want)
					return
				}
				res, err = m.Call(ctx, s, "entropy", nil)
				if err != nil {
					errs <- err
					return
				}
				outs[i] = append(outs[i], string(res.StructuredContent))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 2; i < sessions; i++ {
		if fmt.Sprint(outs[i]) != fmt.Sprint(outs[i%2]) {
			t.Fatalf("session %d (seed %d) differs from session %d", i, i%2, i%2)
		}
	}
	if fmt.Sprint(outs[0]) == fmt.Sprint(outs[1]) {
		t.Fatal("seeds 0 and 1 agree")
	}
	if m.Idle() > 4 {
		t.Fatalf("idle %d > MaxIdleInstances", m.Idle())
	}
}
