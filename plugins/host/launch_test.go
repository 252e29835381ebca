package host_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/plugins/host"
	"github.com/weft-dev/weft/sdk/plugin"
)

// harnessScript writes a shell script that appends its pid to pids, runs
// pre, then execs this test binary serving the react harness.
func harnessScript(t *testing.T, dir, name, pids, pre string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	body := "#!/bin/sh\necho $$ >> " + pids + "\n" + pre + "\n" + serveEnv + "=react exec " + os.Args[0] + " -test.run=^$\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// describe asks h for its name, proving the process serves.
func describe(t *testing.T, h plugin.Harness) string {
	t.Helper()
	var resp plugin.DescribeResponse
	if err := h.Describe(t.Context(), &plugin.DescribeRequest{}, &resp); err != nil {
		t.Fatal(err)
	}
	return resp.Name
}

// Binary with different arguments runs different processes; the same
// arguments reuse the running one. Logs name the process under
// "harness", not a second "plugin" attribute.
func TestLaunchBinaryKeyedByArgs(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	script := harnessScript(t, dir, "h.sh", pids, "")
	logs := &lockedBuffer{}
	l := &host.Launcher{Command: testCommand, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	defer l.Close()
	ctx := t.Context()
	ha, err := l.Binary(ctx, script, "a")
	if err != nil {
		t.Fatal(err)
	}
	hb, err := l.Binary(ctx, script, "b")
	if err != nil {
		t.Fatal(err)
	}
	ha2, err := l.Binary(ctx, script, "a")
	if err != nil {
		t.Fatal(err)
	}
	if ha2 != ha {
		t.Error(`Binary(script, "a") twice returned different harnesses`)
	}
	if hb == ha {
		t.Error(`Binary(script, "b") reused the process of Binary(script, "a")`)
	}
	if got := lines(t, pids); len(got) != 2 || got[0] == got[1] {
		t.Errorf("processes started %v, want 2 distinct", got)
	}
	for _, h := range []plugin.Harness{ha, hb} {
		if n := describe(t, h); n != "react" {
			t.Errorf("Describe name %q, want react", n)
		}
	}
	if got, want := host.BinaryKey(script, "a"), "binary:"+script+` "a"`; got != want {
		t.Errorf("BinaryKey = %q, want %q", got, want)
	}
	// Killing one key leaves the other running.
	l.Kill(host.BinaryKey(script, "a"))
	if n := describe(t, hb); n != "react" {
		t.Errorf("after killing a, b's Describe name %q", n)
	}
	out := logs.String()
	if !strings.Contains(out, `harness="binary:`+script+` \"a\""`) {
		t.Errorf("no log record carries harness=<key>:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Count(line, " plugin=") > 1 {
			t.Errorf("log record with two plugin attributes: %s", line)
		}
	}
}

// A plugin slow to start does not hold up starting another key.
func TestLaunchKeysStartConcurrently(t *testing.T) {
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	started, gate := filepath.Join(dir, "started"), filepath.Join(dir, "gate")
	slow := harnessScript(t, dir, "slow.sh", pids, "touch "+started+"\nwhile [ ! -f "+gate+" ]; do sleep 0.05; done")
	fast := harnessScript(t, dir, "fast.sh", pids, "")
	l := &host.Launcher{Command: testCommand}
	defer l.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	slowDone := make(chan error, 1)
	go func() {
		_, err := l.Binary(ctx, slow)
		slowDone <- err
	}()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-slowDone:
			t.Fatalf("slow start returned before its gate opened: %v", err)
		case <-ctx.Done():
			t.Fatal("slow plugin never started")
		case <-time.After(10 * time.Millisecond):
		}
	}
	fastDone := make(chan error, 1)
	go func() {
		_, err := l.Binary(ctx, fast)
		fastDone <- err
	}()
	select {
	case err := <-fastDone:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("starting a second key waited for the first key's handshake")
	}
	select {
	case err := <-slowDone:
		t.Fatalf("slow start returned before its gate opened: %v", err)
	default:
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-slowDone; err != nil {
		t.Fatal(err)
	}
	if got := lines(t, pids); len(got) != 2 {
		t.Errorf("processes started %v, want 2", got)
	}
}

// lockedBuffer is a goroutine-safe log sink.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
