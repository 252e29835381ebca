package module_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/sdk/tool"
)

// A module's Go code, as its package main would register it in init: the
// notes module of the examples below and of TestNative.
func init() {
	tool.Module(tool.Info{Name: "notes", Version: "1.0.0", Owns: []string{"notes"}})
	tool.Register("add_note", "Adds a note, stamped with the session's clock and a random tag.",
		func(ctx context.Context, in struct {
			Text     string `json:"text"`
			Priority int    `json:"priority,omitempty"`
		}) (map[string]any, error) {
			tag := make([]byte, 4)
			if _, err := io.ReadFull(tool.Rand, tag); err != nil {
				return nil, err
			}
			at := tool.Now()
			tool.Log(1, "adding "+in.Text)
			tool.Progress(1, 1, "added")
			res, err := tool.DB().ExecContext(ctx, "INSERT INTO notes (text, priority, tag, at) VALUES (?, ?, ?, ?)", in.Text, in.Priority, hex.EncodeToString(tag), at)
			if err != nil {
				return nil, err
			}
			id, _ := res.LastInsertId()
			return map[string]any{"id": id, "at": at, "tag": hex.EncodeToString(tag)}, nil
		})
	tool.Register("count_notes", "Counts the notes.", func(ctx context.Context, _ struct{}) (int, error) {
		var n int
		err := tool.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM notes").Scan(&n)
		return n, err
	}, tool.ReadOnly())
	tool.Register("peek_secrets", "Reads a table it does not declare.", func(ctx context.Context, _ struct{}) (int, error) {
		var n int
		err := tool.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM secrets").Scan(&n)
		return n, err
	})
}

const notesDDL = "CREATE TABLE notes (id INT PRIMARY KEY AUTO_INCREMENT, text TEXT, priority INT, tag TEXT, at DATETIME(6));" +
	"CREATE TABLE secrets (id INT PRIMARY KEY)"

// ExampleNewNative tests a module natively: its Go code runs behind the
// Module API with the real host libraries on a state workspace, the
// session's virtual clock and the seeded random stream of each call.
func ExampleNewNative() {
	ctx := context.Background()
	mod, err := module.NewNative(tool.ManifestJSON(), tool.Dispatch, module.Config{})
	if err != nil {
		panic(err)
	}
	store := state.NewStore()
	seed, err := store.Load(ctx, notesDDL)
	if err != nil {
		panic(err)
	}
	s := &module.Session{Workspace: store.Fork(seed), Seed: 7,
		Clock: module.NewVirtualClock(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))}
	res, err := mod.Call(ctx, s, "add_note", json.RawMessage(`{"text":"buy milk","priority":2.0}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Content[0].Text)
	res, _ = mod.Call(ctx, s, "count_notes", nil)
	fmt.Println(res.Content[0].Text, s.Seq())
	// Output:
	// {"at":"2025-03-01T09:00:00Z","id":1,"tag":"60d93eda"}
	// 1 2
}

// TestNative: a native call sees what a wasm call sees (the session's
// clock, the random stream of its sequence number, its log and progress
// sinks, the table policy) and is classified the same way.
func TestNative(t *testing.T) {
	ctx := context.Background()
	mod, err := module.NewNative(tool.ManifestJSON(), tool.Dispatch, module.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if mod.Manifest().Name != "notes" || len(mod.Manifest().Tools) != 3 {
		t.Fatalf("manifest %+v", mod.Manifest())
	}
	store := state.NewStore()
	seed, err := store.Load(ctx, notesDDL)
	if err != nil {
		t.Fatal(err)
	}
	clock := module.NewVirtualClock(time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC))
	var logs []string
	s := &module.Session{Workspace: store.Fork(seed), Seed: 7, Clock: clock,
		Log: func(level int, msg string) { logs = append(logs, fmt.Sprint(level, " ", msg)) }}

	clock.Advance(90 * time.Second)
	var progress []string
	res, err := mod.Call(ctx, s, "add_note", json.RawMessage(`{"text":"a"}`),
		module.WithProgress(func(p, total float64, msg string) { progress = append(progress, msg) }))
	if err != nil || res.IsError {
		t.Fatalf("add_note: %v %+v", err, res)
	}
	var out struct {
		At  time.Time `json:"at"`
		Tag string    `json:"tag"`
	}
	if err := json.Unmarshal([]byte(res.Content[0].Text), &out); err != nil {
		t.Fatal(err)
	}
	tag := make([]byte, 4)
	module.RandStream(7, 0).Read(tag)
	if !out.At.Equal(clock.Now()) || out.Tag != hex.EncodeToString(tag) {
		t.Errorf("at %v tag %s, want the session clock %v and RandStream(7, 0) %x", out.At, out.Tag, clock.Now(), tag)
	}
	if d := cmp.Diff([]string{"1 adding a"}, logs); d != "" {
		t.Errorf("logs (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"added"}, progress); d != "" {
		t.Errorf("progress (-want +got):\n%s", d)
	}

	// Invalid arguments are refused before the module runs; no sequence
	// number is consumed and nothing changes.
	before := s.Workspace.Hash()
	if _, err := mod.Call(ctx, s, "add_note", json.RawMessage(`{"text":1}`)); !errors.Is(err, module.ErrInvalidArguments) {
		t.Errorf("invalid arguments: %v", err)
	}
	// The table policy holds natively: the statement is denied, the tool
	// error rolls the call back.
	res, err = mod.Call(ctx, s, "peek_secrets", nil)
	if err != nil || !res.IsError || len(res.Denied) != 1 {
		t.Errorf("peek_secrets: %v %+v", err, res)
	}
	if s.Workspace.Hash() != before || s.Seq() != 2 {
		t.Errorf("state changed or seq %d (want 2) after refused calls", s.Seq())
	}
	res, err = mod.Call(ctx, s, "count_notes", nil)
	if err != nil || res.Content[0].Text != "1" {
		t.Errorf("count_notes: %v %+v", err, res)
	}
	if _, err := module.NewNative([]byte(`{"abi":"weft/v0","name":"x"}`), tool.Dispatch, module.Config{}); !errors.Is(err, module.ErrInvalidModule) {
		t.Errorf("bad manifest: %v", err)
	}
}
