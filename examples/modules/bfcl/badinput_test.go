package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/abi"
)

// Bad input: each case answers a clear error and leaves the session's
// state as it was (its hash unchanged).
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	m := nativeModule(t)
	store := state.NewStore()
	ok, err := seedVersion(ctx, store, []string{"TicketAPI"}, map[string]json.RawMessage{"TicketAPI": json.RawMessage(`{"current_user": "ann"}`)})
	if err != nil {
		t.Fatal(err)
	}
	// A TwitterAPI configuration whose tweet key is not an int: Python's
	// int("x") raises in _load_scenario.
	badCfg, err := seedVersion(ctx, store, []string{"TwitterAPI"}, map[string]json.RawMessage{"TwitterAPI": json.RawMessage(`{"tweets": {"x": {}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		ver     *state.Version
		tool    string
		args    string
		infra   bool   // an infrastructure failure (*module.CallError), not a tool error
		message string // in the error text
	}{
		{"unknown argument", ok, "create_ticket", `{"title": "a", "colour": "red"}`, false, "colour"},
		{"missing required argument", ok, "create_ticket", `{}`, false, "title"},
		{"wrong argument type", ok, "get_ticket", `{"ticket_id": "one"}`, false, "ticket_id"},
		{"priority out of range (BFCL's error answer)", ok, "create_ticket", `{"title": "a", "priority": 9}`, false, "Invalid priority"},
		{"configuration _load_scenario rejects", badCfg, "get_tweet", `{"tweet_id": 0}`, false, "invalid literal for int()"},
	}
	for _, c := range cases {
		ws := store.Fork(c.ver)
		before := ws.Hash()
		sess := &module.Session{Workspace: ws}
		res, err := m.Call(ctx, sess, c.tool, json.RawMessage(c.args))
		text := ""
		switch {
		case err != nil && (errors.Is(err, module.ErrInvalidArguments) || errors.Is(err, module.ErrUnknownTool)):
			text = err.Error()
		case err != nil:
			t.Errorf("%s: infrastructure error %v", c.name, err)
			continue
		case !res.IsError:
			t.Errorf("%s: success %s, want a tool error", c.name, abi.FirstText(res.Content))
			continue
		default:
			text = abi.FirstText(res.Content)
		}
		if !strings.Contains(text, c.message) {
			t.Errorf("%s: error %q does not mention %q", c.name, text, c.message)
		}
		if ws.Hash() != before {
			t.Errorf("%s: the state changed", c.name)
		}
	}

	// Stored state that is not JSON (a corrupted row): an internal error
	// of the module (an infrastructure failure), the state unchanged.
	ws := store.Fork(ok)
	if _, err := ws.Exec(ctx, "UPDATE bfcl_class SET state = 'not json' WHERE name = 'TicketAPI'"); err != nil {
		t.Fatal(err)
	}
	before := ws.Hash()
	_, err = m.Call(ctx, &module.Session{Workspace: ws}, "logout", json.RawMessage(`{}`))
	var ce *module.CallError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "TicketAPI state") {
		t.Errorf("corrupted state: %v, want an internal error naming the TicketAPI state", err)
	}
	if ws.Hash() != before {
		t.Error("corrupted state: the state changed")
	}

	// An initial_config of a class the module does not have.
	if _, _, err := seedRows([]string{"WebSearchAPI"}, nil); err == nil || !strings.Contains(err.Error(), `unknown class "WebSearchAPI"`) {
		t.Errorf("unknown class: %v", err)
	}
}
