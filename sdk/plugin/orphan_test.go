//go:build linux

package plugin_test

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weft-dev/weft/sdk/plugin"
)

// hostHelperEnv turns the test binary into a plugin host: it starts the
// test binary as a plugin (pluginEnv), checks that it answers Describe,
// prints "plugin PID" on stdout and waits to be killed.
const hostHelperEnv = "WEFT_SDK_PLUGIN_TEST_HOST"

func init() {
	if os.Getenv(hostHelperEnv) != "1" {
		return
	}
	os.Exit(runHostHelper())
}

func runHostHelper() int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// go-plugin passes the host's environment on after cmd.Env: the plugin
	// must not see hostHelperEnv.
	os.Unsetenv(hostHelperEnv)
	cmd := exec.Command(exe)
	cmd.Env = []string{pluginEnv + "=1"}
	c, err := plugin.Start(context.Background(), plugin.StartConfig{Cmd: cmd, Logger: slog.New(slog.DiscardHandler), StartTimeout: 60 * time.Second, Name: "orphan"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h, err := c.Harness()
	if err == nil {
		err = h.Describe(context.Background(), &plugin.DescribeRequest{}, &plugin.DescribeResponse{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("plugin %d\n", cmd.Process.Pid)
	time.Sleep(10 * time.Minute)
	return 0
}

// TestPluginExitsWhenHostIsKilled: a host killed with SIGKILL (no chance to
// kill its plugins) leaves no plugin process behind: the plugin notices and
// exits within a few seconds (issue 15 item 20).
func TestPluginExitsWhenHostIsKilled(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	host := exec.Command(exe, "-test.run=^$")
	host.Env = append(os.Environ(), hostHelperEnv+"=1")
	host.Stderr = os.Stderr
	out, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		lines <- line
	}()
	var line string
	select {
	case line = <-lines:
	case <-time.After(90 * time.Second):
		t.Fatal("the host helper did not start its plugin")
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "plugin "))
	if err != nil || pid <= 0 {
		t.Fatalf("host helper said %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !alive(pid) {
		t.Fatalf("plugin %d not running before the host is killed", pid)
	}

	if err := host.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = host.Wait()
	killed := time.Now()
	for alive(pid) {
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("plugin %d still running %s after its host was killed with SIGKILL", pid, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("plugin exited %s after its host was killed", time.Since(killed).Round(time.Millisecond))
}
