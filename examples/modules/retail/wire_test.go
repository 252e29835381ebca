package main

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/tool"
)

// v1Host hides the native host's weft_sql_v2 (it is only an abi.Host), so
// the SDK falls back to one weft_sql_v1 JSON request per statement, the
// way it talks to a host without v2.
type v1Host struct{ h *module.NativeHost }

func (v v1Host) SQL(req []byte) []byte               { return v.h.SQL(req) }
func (v v1Host) Now() int64                          { return v.h.Now() }
func (v v1Host) Rand(p []byte)                       { v.h.Rand(p) }
func (v v1Host) Log(level int, msg string)           { v.h.Log(level, msg) }
func (v v1Host) Progress(p, total float64, m string) { v.h.Progress(p, total, m) }

// TestWiresAgree: the hot tools (and an error case) give the same answer
// and the same final state over weft_sql_v2 (batched, compact) and over
// weft_sql_v1 (a statement per JSON request), on the real host libraries.
func TestWiresAgree(t *testing.T) {
	ctx := context.Background()
	st, base := baseState(t)
	var man module.Manifest
	if err := json.Unmarshal(tool.ManifestJSON(), &man); err != nil {
		t.Fatal(err)
	}
	seed := st.Fork(base).Hash().String()
	for _, c := range []struct {
		name, args string
		writes     bool
	}{
		{"get_order_details", benchGetArgs, false},
		{"modify_pending_order_items", benchModifyArgs, true},
		{"cancel_pending_order", benchCancelArgs, true},
		{"cancel_pending_order", `{"order_id":"#W4817420","reason":"no longer needed"}`, false}, // delivered: a tool error
		{"get_user_details", `{"user_id":"no_such_user"}`, false},
	} {
		var answers [2]string
		var hashes [2]string
		for i := range 2 {
			s := &module.Session{Workspace: st.Fork(base)}
			unit, err := s.Workspace.Begin()
			if err != nil {
				t.Fatal(err)
			}
			nh := module.NewNativeHost(ctx, s, unit, &man)
			var h abi.Host = nh
			if i == 1 {
				h = v1Host{nh}
			}
			req, _ := json.Marshal(map[string]any{"tool": c.name, "arguments": json.RawMessage(c.args)})
			answers[i] = string(tool.Dispatch(ctx, h, req))
			if err := unit.Commit(); err != nil {
				t.Fatal(err)
			}
			hashes[i] = s.Workspace.Hash().String()
		}
		if answers[0] != answers[1] || hashes[0] != hashes[1] {
			t.Errorf("%s %s:\nv2 %s %s\nv1 %s %s", c.name, c.args, hashes[0], answers[0], hashes[1], answers[1])
		}
		if c.writes == (hashes[0] == seed) {
			t.Errorf("%s: state changed %v, want %v", c.name, hashes[0] != seed, c.writes)
		}
		if len(answers[0]) < 20 {
			t.Errorf("%s: answer %q", c.name, answers[0])
		}
	}
}
