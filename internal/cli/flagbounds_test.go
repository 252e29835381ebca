package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestNumericFlagBounds: the numeric limits of weft serve, weft
// rollout-service and weft synth validate that a 0, a negative value or a
// G of 1 would silently disable (new-user trial F6, F14) are usage errors
// (exit 2) before anything listens or is written, with -1 meaning no
// bound where the flag documents it (--max-mcp-sessions, like
// --max-sessions).
func TestNumericFlagBounds(t *testing.T) {
	reg := megamcptest.Registry(t)
	data := filepath.Join(t.TempDir(), "data")
	serve := []string{"serve", "--json", "--addr", "127.0.0.1:0", "--module", "hello", "--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir(), "--token", "t", "--data", data}
	rollout := []string{"rollout-service", repoFile("configs", "tau2-retail.hcl"), "--addr", "127.0.0.1:0", "--registry", t.TempDir(), "--cache-dir", megamcptest.CacheDir(), "--token", "t"}
	validate := []string{"synth", "validate", repoFile("examples", "servers", "tau2-retail")}
	for _, c := range []struct {
		base       []string
		flag, val  string
		wantStderr string
	}{
		{serve, "--max-connections", "0", "weft: --max-connections: 0; give at least 1\n"},
		{serve, "--max-connections", "-1", "weft: --max-connections: -1; give at least 1\n"},
		{serve, "--max-mcp-sessions", "0", "weft: --max-mcp-sessions: 0; give at least 1, or -1 for no bound\n"},
		{serve, "--max-mcp-sessions", "-7", "weft: --max-mcp-sessions: -7; give at least 1, or -1 for no bound\n"},
		{rollout, "--call-timeout", "-1s", "weft: --call-timeout must be positive, got -1s\n"},
		{rollout, "--call-timeout", "0", "weft: --call-timeout must be positive, got 0s\n"},
		{rollout, "--concurrency", "0", "weft: --concurrency: 0; give at least 1\n"},
		{rollout, "--max-pending", "0", "weft: --max-pending: 0; give at least 1\n"},
		{rollout, "--max-pending", "-1", "weft: --max-pending: -1; give at least 1\n"},
		{rollout, "--max-batch-tasks", "-5", "weft: --max-batch-tasks: -5; give at least 1\n"},
		{rollout, "--max-group-size", "1", "weft: --max-group-size: 1; give at least 2\n"},
		{validate, "--memory-budget", "-5", "weft: --memory-budget: -5 is negative (0 means the default, 268435456 bytes)\n"},
	} {
		t.Run(c.base[0]+c.flag+"="+c.val, func(t *testing.T) {
			code, stdout, stderr := runCtx(t, t.Context(), append(c.base, c.flag, c.val)...)
			if code != ExitUsage || stdout != "" || !strings.HasSuffix(stderr, c.wantStderr) {
				t.Fatalf("exit %d (want %d), stdout %q (want none), stderr %q (want it to end with %q)", code, ExitUsage, stdout, stderr, c.wantStderr)
			}
			if _, err := os.Stat(data); !os.IsNotExist(err) {
				t.Fatalf("a refused serve made its --data directory: %v", err)
			}
		})
	}
	// -1 is --max-mcp-sessions' documented "no bound": the server starts.
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	code, stdout, stderr := runCtx(t, ctx, append(serve[:len(serve)-2], "--max-mcp-sessions", "-1")...)
	if code != ExitOK || !strings.Contains(stdout, `"sessions":0`) {
		t.Fatalf("--max-mcp-sessions -1: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
