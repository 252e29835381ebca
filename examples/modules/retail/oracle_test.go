package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/examples/modules/retail/retaildb"
	sqlhost "github.com/weft-dev/weft/hosts/sql"
	"github.com/weft-dev/weft/sdk/tool"
)

// The oracle test replays every case of the tau2-bench oracle files
// (examples/data/tau2-retail/oracle, rules in its README) through the SDK's
// native Dispatch, with the sql host library answering the module's SQL on
// a core/state workspace forked from db.json, and compares each call's
// error classification and output, then the changed records.

const dataDir = "../../data/tau2-retail"

type oracleFile struct {
	Source string       `json:"source"`
	Cases  []oracleCase `json:"cases"`
}

type oracleCase struct {
	ID    string `json:"id"`
	Calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Error     bool            `json:"error"`
		Output    json.RawMessage `json:"output"`
	} `json:"calls"`
	FinalChanges map[string]map[string]json.RawMessage `json:"final_changes"`
}

var (
	loadOnce  sync.Once
	baseStore *state.Store
	baseVer   *state.Version
	loadErr   error
)

func baseState(t testing.TB) (*state.Store, *state.Version) {
	t.Helper()
	loadOnce.Do(func() {
		f, err := os.Open(filepath.Join(dataDir, "db.json"))
		if err != nil {
			loadErr = err
			return
		}
		defer f.Close()
		baseStore = state.NewStore()
		baseVer, loadErr = retaildb.Load(context.Background(), baseStore, f)
	})
	if loadErr != nil {
		t.Fatalf("loading db.json: %v", loadErr)
	}
	return baseStore, baseVer
}

// unitExec adapts a state unit of work to the sql host's Executor.
type unitExec struct{ u *state.Unit }

func (e unitExec) Query(ctx context.Context, q string, args ...any) (*sqlhost.Rows, error) {
	r, err := e.u.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return &sqlhost.Rows{Columns: r.Columns, Values: r.Values}, nil
}

func (e unitExec) Exec(ctx context.Context, q string, args ...any) (sqlhost.Result, error) {
	r, err := e.u.Exec(ctx, q, args...)
	return sqlhost.Result{RowsAffected: r.RowsAffected, LastInsertID: r.LastInsertID}, err
}

// testHost is the host of one call: SQL goes to the call's unit.
type testHost struct {
	ctx context.Context
	ex  sqlhost.Executor
	t   testing.TB
}

var policy = sqlhost.Policy{Owns: tables}

func (h testHost) SQL(req []byte) []byte                        { return sqlhost.Handle(h.ctx, h.ex, policy, req) }
func (h testHost) Now() int64                                   { return 0 }
func (h testHost) Rand(p []byte)                                { clear(p) }
func (h testHost) Log(level int, msg string)                    { h.t.Logf("log %d: %s", level, msg) }
func (h testHost) Progress(progress, total float64, msg string) {}

type callResponse struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	InternalError     *string         `json:"internalError"`
}

var errToolFailed = errors.New("tool error: roll back")

// call runs one tool call as one unit of work on ws, rolled back when the
// result is a tool error.
func call(ctx context.Context, t testing.TB, ws *state.Workspace, name string, args json.RawMessage) (*callResponse, error) {
	req, _ := json.Marshal(map[string]any{"tool": name, "arguments": args})
	var resp callResponse
	err := ws.Do(func(u *state.Unit) error {
		raw := tool.Dispatch(ctx, testHost{ctx, unitExec{u}, t}, req)
		if err := json.Unmarshal(raw, &resp); err != nil {
			return fmt.Errorf("malformed response %s: %v", raw, err)
		}
		if resp.InternalError != nil {
			return fmt.Errorf("internal error: %s", *resp.InternalError)
		}
		if resp.IsError {
			return errToolFailed
		}
		return nil
	})
	if err != nil && !errors.Is(err, errToolFailed) {
		return nil, err
	}
	return &resp, nil
}

// resultValue is the tool result as the oracle records it: the text parsed
// as JSON when it is JSON, else the text itself.
func resultValue(r *callResponse) any {
	var text string
	if len(r.Content) > 0 {
		text = r.Content[0].Text
	}
	var v any
	if json.Valid([]byte(text)) && json.Unmarshal([]byte(text), &v) == nil {
		return v
	}
	return text
}

// jsonEqual compares decoded JSON values; numbers within 1e-9.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && math.Abs(x-y) <= 1e-9
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func decode(t testing.TB, b []byte) any {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	return v
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "..."
	}
	return string(b)
}

// recordOf maps a changed row to the record it belongs to.
func recordOf(table string, key []any) (kind, id string) {
	id = fmt.Sprint(key[0])
	switch table {
	case "users", "payment_methods", "user_orders":
		return "users", id
	case "products", "variants", "variant_options":
		return "products", id
	default:
		return "orders", id
	}
}

// runCase replays one case; it returns the first mismatch, or "".
func runCase(ctx context.Context, t testing.TB, c oracleCase) string {
	store, v0 := baseState(t)
	ws := store.Fork(v0)
	for i, cl := range c.Calls {
		resp, err := call(ctx, t, ws, cl.Name, cl.Arguments)
		if err != nil {
			return fmt.Sprintf("call %d %s: %v", i, cl.Name, err)
		}
		if resp.IsError != cl.Error {
			return fmt.Sprintf("call %d %s %s: error=%v, oracle %v (%s); got %s", i, cl.Name, cl.Arguments, resp.IsError, cl.Error, cl.Output, short(resultValue(resp)))
		}
		if cl.Error {
			continue
		}
		got, want := resultValue(resp), decode(t, cl.Output)
		if !jsonEqual(got, want) {
			return fmt.Sprintf("call %d %s %s:\n got  %s\n want %s", i, cl.Name, cl.Arguments, short(got), short(want))
		}
	}
	listed := map[string]bool{}
	for kind, recs := range c.FinalChanges {
		for id, raw := range recs {
			listed[kind+"/"+id] = true
			var rec any
			var err error
			switch kind {
			case "users":
				rec, err = retaildb.ExportUser(ctx, ws, id)
			case "orders":
				rec, err = retaildb.ExportOrder(ctx, ws, id)
			case "products":
				rec, err = retaildb.ExportProduct(ctx, ws, id)
			default:
				return "final_changes: unknown kind " + kind
			}
			if err != nil {
				return fmt.Sprintf("final %s %s: %v", kind, id, err)
			}
			b, _ := json.Marshal(rec)
			got, want := decode(t, b), decode(t, raw)
			if !jsonEqual(got, want) {
				return fmt.Sprintf("final %s %s:\n got  %s\n want %s", kind, id, short(got), short(want))
			}
		}
	}
	var extra []string
	for _, td := range ws.DiffWorkspace(v0).Tables {
		var keys [][]any
		for _, r := range td.Added {
			keys = append(keys, r.Key)
		}
		for _, r := range td.Removed {
			keys = append(keys, r.Key)
		}
		for _, r := range td.Changed {
			keys = append(keys, r.Key)
		}
		for _, k := range keys {
			kind, id := recordOf(td.Table, k)
			if !listed[kind+"/"+id] {
				extra = append(extra, fmt.Sprintf("%s %v (%s)", td.Table, k, kind+"/"+id))
			}
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return "changed but not in final_changes: " + strings.Join(extra, ", ")
	}
	return ""
}

func testOracleFile(t *testing.T, name string) {
	b, err := os.ReadFile(filepath.Join(dataDir, "oracle", name))
	if err != nil {
		t.Fatal(err)
	}
	var f oracleFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pass := 0
	for _, c := range f.Cases {
		if msg := runCase(ctx, t, c); msg != "" {
			t.Errorf("%s: %s", c.ID, msg)
			continue
		}
		pass++
	}
	t.Logf("%s: %d/%d cases pass", name, pass, len(f.Cases))
}

func TestOracleTasksTrain(t *testing.T) { testOracleFile(t, "tasks-train.json") }

func TestOracleFuzzPublic(t *testing.T) { testOracleFile(t, "fuzz-public.json") }

// TestExportHook checks the weft.export hook: on the unmodified state it
// gives db.json back (as JSON), including key order of every object.
func TestExportHook(t *testing.T) {
	ctx := context.Background()
	store, v0 := baseState(t)
	ws := store.Fork(v0)
	resp, err := call(ctx, t, ws, "weft.export", json.RawMessage(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if resp.IsError || len(resp.Content) == 0 {
		t.Fatalf("export failed: %+v", resp)
	}
	raw, err := os.ReadFile(filepath.Join(dataDir, "db.json"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := decode(t, []byte(resp.Content[0].Text)), decode(t, raw)
	if !jsonEqual(got, want) {
		t.Fatal("export differs from db.json")
	}
	// Key order too.
	if kg, kw := keys(t, []byte(resp.Content[0].Text)), keys(t, raw); kg != kw || len(kw) < 100000 {
		t.Fatal("export key order differs from db.json")
	}
}

// keys lists every object key of a JSON document in document order.
func keys(t testing.TB, b []byte) string {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	var sb strings.Builder
	type frame struct{ object, wantKey bool }
	var stack []frame
	value := func() { // a value ended: the enclosing object wants a key next
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if n := len(stack); n > 0 && stack[n-1].object {
					stack[n-1].wantKey = false
				}
				stack = append(stack, frame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
			continue
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
			sb.WriteString(tok.(string))
			sb.WriteByte('\n')
			stack[n-1].wantKey = false
			continue
		}
		value()
	}
	return sb.String()
}

func TestManifest(t *testing.T) {
	var m struct {
		Name   string `json:"name"`
		Export bool   `json:"export"`
		Tools  []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(tool.ManifestJSON(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Name != "retail" || !m.Export || len(m.Tools) != 16 {
		t.Fatalf("manifest: name %q, export %v, %d tools", m.Name, m.Export, len(m.Tools))
	}
}
