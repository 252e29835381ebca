package paritytest

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"
	"github.com/weft-dev/weft/sdk/abi"
)

// guest is the C module instantiated with plain wazero, without weft's
// host: its weft_v1_call gets raw request bytes (no host schema check in
// between), and weft_sql_v2.batch is a stub that records the statements and
// answers each with no rows. It exercises the module's own JSON scanner.
type guest struct {
	mod         api.Module
	alloc, call api.Function
	stmts       []abi.SQLStatement // of the last request
	pending     []byte
}

func newGuest(t testing.TB, wasm []byte) *guest {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	g := &guest{}
	give := func(m api.Module, out, capacity uint32) uint32 {
		n := uint32(len(g.pending))
		if n <= capacity {
			m.Memory().Write(out, g.pending)
		}
		return n
	}
	_, err := rt.NewHostModuleBuilder("weft_sql_v2").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, req, n, out, capacity uint32) uint32 {
		raw, _ := m.Memory().Read(req, n)
		stmts, err := abi.DecodeSQLBatch(raw)
		if err != nil {
			t.Errorf("the module sent a malformed batch: %v", err)
		}
		g.stmts = append(g.stmts, stmts...)
		var w abi.SQLResultsWriter
		for range stmts {
			w.Rows(nil, nil, 0)
			w.Done(0, 0)
		}
		g.pending = append([]byte(nil), w.Bytes()...)
		return give(m, out, capacity)
	}).Export("batch").
		NewFunctionBuilder().WithFunc(func(_ context.Context, m api.Module, out, capacity uint32) uint32 {
		return give(m, out, capacity)
	}).Export("take").
		Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	g.mod, err = rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions("_initialize"))
	if err != nil {
		t.Fatal(err)
	}
	g.alloc, g.call = g.mod.ExportedFunction("weft_v1_alloc"), g.mod.ExportedFunction("weft_v1_call")
	return g
}

// request runs one raw request and returns the response bytes; a trap is an
// error.
func (g *guest) request(req []byte) ([]byte, error) {
	ctx := context.Background()
	g.stmts = nil
	r, err := g.alloc.Call(ctx, uint64(len(req)))
	if err != nil {
		return nil, err
	}
	ptr := uint32(r[0])
	g.mod.Memory().Write(ptr, req)
	r, err = g.call.Call(ctx, uint64(ptr), uint64(len(req)))
	if err != nil {
		return nil, err
	}
	out, _ := g.mod.Memory().Read(uint32(r[0]>>32), uint32(r[0]))
	return append([]byte(nil), out...), nil
}

// decode parses a response as the host does (abi.DecodeAnswer's shape).
func decodeAnswer(t testing.TB, resp []byte) (text string, isError bool, internal string) {
	t.Helper()
	var a struct {
		Content []struct {
			Type, Text string
		} `json:"content"`
		StructuredContent json.RawMessage `json:"structuredContent"`
		IsError           bool            `json:"isError"`
		InternalError     string          `json:"internalError"`
	}
	if err := json.Unmarshal(resp, &a); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, resp)
	}
	if a.InternalError != "" {
		return "", false, a.InternalError
	}
	if len(a.Content) != 1 || a.Content[0].Type != "text" {
		t.Fatalf("response without one text content: %q", resp)
	}
	return a.Content[0].Text, a.IsError, ""
}

// sqlStringArg is the first string argument the module bound in its last
// request's statements.
func (g *guest) sqlStringArg() (string, bool) {
	for _, s := range g.stmts {
		for _, a := range s.Args {
			if x, ok := a.(string); ok {
				return x, true
			}
		}
	}
	return "", false
}
