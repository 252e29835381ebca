package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestMCPAndServeSuggestModule: `weft mcp --module helo` and `weft serve
// --module helo` name the registry's close module ("hello") instead of a
// bare "no such module".
func TestMCPAndServeSuggestModule(t *testing.T) {
	reg := megamcptest.Registry(t)
	const want = "weft: no such module: helo: module not found: helo (did you mean \"hello\"?)\n"
	for _, args := range [][]string{
		{"mcp", "--module", "helo", "--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir()},
		{"serve", "--addr", "127.0.0.1:0", "--module", "helo", "--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir()},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, stdout, stderr := runCtx(t, t.Context(), args...)
			if code != ExitError {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", code, ExitError, stdout, stderr)
			}
			if diff := cmp.Diff(want, lastLine(stderr)); diff != "" {
				t.Errorf("stderr's last line (-want +got):\n%s\nstderr:\n%s", diff, stderr)
			}
		})
	}
}

// lastLine is s's last line with its newline.
func lastLine(s string) string {
	i := len(s) - 1
	for i > 0 && s[i-1] != '\n' {
		i--
	}
	if i < 0 {
		return ""
	}
	return s[i:]
}
