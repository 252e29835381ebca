package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestServeModuleMemoryFlag: --module-memory-mib reaches the runtime
// (Config.ModuleMemoryMiB, reported by the --json listening line), and a
// negative value is a usage error before anything listens.
func TestServeModuleMemoryFlag(t *testing.T) {
	reg := megamcptest.Registry(t)
	base := []string{"serve", "--json", "--addr", "127.0.0.1:0", "--module", "hello", "--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir(), "--token", "t"}
	t.Run("set", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		code, stdout, stderr := runCtx(t, ctx, append(base, "--module-memory-mib", "96")...)
		if code != ExitOK {
			t.Fatalf("exit %d, want %d\nstderr: %s", code, ExitOK, stderr)
		}
		got := decodeOneObject(t, stdout)
		if got["module_memory_mib"] != float64(96) {
			t.Errorf("module_memory_mib = %v, want 96 (the runtime's budget)\nstdout: %s", got["module_memory_mib"], stdout)
		}
	})
	t.Run("default", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		code, stdout, stderr := runCtx(t, ctx, base...)
		if code != ExitOK {
			t.Fatalf("exit %d, want %d\nstderr: %s", code, ExitOK, stderr)
		}
		if got := decodeOneObject(t, stdout)["module_memory_mib"]; got != float64(0) {
			t.Errorf("module_memory_mib = %v, want 0 (no budget)", got)
		}
	})
	// Other serve limits a value could silently disable (new-user trial).
	for _, bad := range []struct{ flag, val, want string }{
		{"--call-timeout", "-1s", "weft: --call-timeout: -1s is negative (0 means the default, 2s)"},
		{"--call-timeout", "-1ns", "weft: --call-timeout: -1ns is negative (0 means the default, 2s)"},
		{"--call-timeout", "soon", `invalid argument "soon" for "--call-timeout"`},
		{"--checkpoint-interval", "-1s", "weft: --checkpoint-interval: -1s is negative (0 disables checkpoints)"},
		{"--mcp-idle-timeout", "-5m0s", "weft: --mcp-idle-timeout: -5m0s is negative (0 means never)"},
		{"--max-sessions", "0", "weft: --max-sessions: 0; give at least 1, or -1 for no bound"},
		{"--max-sessions", "-2", "weft: --max-sessions: -2; give at least 1, or -1 for no bound"},
	} {
		t.Run("bad"+bad.flag+"="+bad.val, func(t *testing.T) {
			code, stdout, stderr := runCtx(t, t.Context(), append(base, bad.flag, bad.val)...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, bad.want) {
				t.Errorf("exit %d (want %d), stdout %q (want none: the server must not listen), stderr %q (want %q)", code, ExitUsage, stdout, stderr, bad.want)
			}
		})
	}
	for _, bad := range []struct{ val, want string }{
		{"-1", "weft: --module-memory-mib: -1 is negative (0 means no budget)"},
		{"lots", `invalid argument "lots" for "--module-memory-mib"`},
	} {
		t.Run("bad="+bad.val, func(t *testing.T) {
			code, stdout, stderr := runCtx(t, t.Context(), append(base, "--module-memory-mib", bad.val)...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d (usage)\nstderr: %s", code, ExitUsage, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout = %q, want nothing (the server must not have listened)", stdout)
			}
			if !strings.Contains(stderr, bad.want) {
				t.Errorf("stderr = %q, want it to contain %q", stderr, bad.want)
			}
		})
	}
}
