package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestMCPStdio runs `weft mcp` as a desktop MCP client would (a child
// process speaking JSON-RPC on stdin/stdout) and checks that its one session
// keeps state across calls and that --state-out writes the final state when
// the client goes away.
func TestMCPStdio(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and test modules")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	reg := megamcptest.Registry(t)
	bin := filepath.Join(t.TempDir(), "weft")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	stateOut := filepath.Join(t.TempDir(), "final.json")
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "mcp", "--module", "hello", "--registry", reg.Dir(),
		"--cache-dir", megamcptest.CacheDir(), "--state-out", stateOut, "--seed", "9")
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "weft-stdio-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "add_note,list_notes,now,random" {
		t.Fatalf("tools = %v", names)
	}
	for _, text := range []string{"first", "second"} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": text}})
		if err != nil || res.IsError {
			t.Fatalf("add_note: %v %+v", err, res)
		}
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"text": 7}})
	if err != nil || !res.IsError {
		t.Fatalf("invalid arguments: %v %+v", err, res)
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	_ = cmd.Wait()
	f, err := os.Open(stateOut)
	if err != nil {
		t.Fatalf("--state-out not written: %v\nstderr: %s", err, stderr.String())
	}
	defer f.Close()
	v, err := state.NewStore().Import(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := v.Store().Fork(v).Query(ctx, "SELECT id, text FROM notes ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows.Values) != 2 || rows.Values[0][1] != "first" || rows.Values[1][1] != "second" {
		t.Fatalf("final state rows = %v", rows.Values)
	}
}
