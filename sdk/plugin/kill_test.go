//go:build linux

package plugin_test

import (
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || (s[i+2] != 'Z' && s[i+2] != 'X')
}

// startOrphaning starts a script plugin that leaves a child holding its
// stdout and stderr, then execs this test binary as the plugin; it
// returns the client and the child's pid.
func startOrphaning(t *testing.T) (*plugin.Client, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "orphan.pid")
	script := filepath.Join(dir, "plugin.sh")
	body := "#!/bin/sh\nsleep 1000 &\necho $! > " + pidFile + "\nexec " + exe + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), pluginEnv+"=1")
	c, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: cmd, Logger: slog.New(slog.DiscardHandler), StartTimeout: 20 * time.Second, Name: "orphaning"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		c.Kill()
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		c.Kill()
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatalf("orphan %d not running before Kill", pid)
	}
	return c, pid
}

func TestKillReapsOrphanHoldingOutput(t *testing.T) {
	c, orphan := startOrphaning(t)
	h, err := c.Harness()
	if err != nil {
		t.Fatal(err)
	}
	var resp plugin.DescribeResponse
	if err := h.Describe(context.Background(), &plugin.DescribeRequest{}, &resp); err != nil {
		t.Fatal(err)
	}
	done := make(chan time.Duration, 1)
	start := time.Now()
	go func() {
		c.Kill()
		done <- time.Since(start)
	}()
	select {
	case d := <-done:
		t.Logf("Kill returned after %v", d)
	case <-time.After(15 * time.Second):
		t.Fatal("Kill did not return within 15s with an orphan holding the plugin's stdout")
	}
	if !c.Exited() {
		t.Error("Exited() = false after Kill")
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(orphan) {
		if time.Now().After(deadline) {
			t.Fatalf("orphan %d still running after Kill", orphan)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
