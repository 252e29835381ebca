package synth

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
	"github.com/weft-dev/weft/sdk/spec"
)

// served is a synthesized server run natively, with its seed state.
type detServed struct {
	srv  *spec.Server
	mod  *module.Module
	seed *state.Version
}

func detServe(t testing.TB, srv *spec.Server) *detServed {
	t.Helper()
	if err := srv.Validate(); err != nil {
		t.Fatalf("spec.Validate: %v", err)
	}
	mod, err := module.NewNativeServer(srv, module.Config{CallTimeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("NewNativeServer: %v", err)
	}
	b := &module.Bundle{Schema: srv.Schema, Seed: srv.Seed}
	v, err := b.SeedVersion(context.Background(), state.NewStore())
	if err != nil {
		t.Fatalf("seed: %v\n%s", err, srv.Schema)
	}
	return &detServed{srv: srv, mod: mod, seed: v}
}

func (s *detServed) session() *module.Session {
	return &module.Session{Workspace: s.seed.Store().Fork(s.seed), Seed: 1}
}

// call runs one tool call; it returns the result's structured content
// decoded (or the text) and whether it was a tool error.
func detCall(t testing.TB, s *detServed, sess *module.Session, tool string, args string) (map[string]any, bool) {
	t.Helper()
	res, err := s.mod.Call(context.Background(), sess, tool, json.RawMessage(args))
	if errors.Is(err, module.ErrInvalidArguments) {
		return map[string]any{"text": err.Error()}, true // refused by the input schema
	}
	if err != nil {
		t.Fatalf("%s(%s): %v", tool, args, err)
	}
	var out map[string]any
	if txt := abi.FirstText(res.Content); txt != "" {
		if err := json.Unmarshal([]byte(txt), &out); err != nil {
			out = map[string]any{"text": txt}
		}
	}
	return out, res.IsError
}
