package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// TestServeMCPTransportFlags: --mcp-response and --mcp-resumption reach
// the listening line (the settings the handler was built with); a bad
// --mcp-response is a usage error before anything listens.
func TestServeMCPTransportFlags(t *testing.T) {
	reg := megamcptest.Registry(t)
	base := []string{"serve", "--json", "--addr", "127.0.0.1:0", "--module", "hello", "--registry", reg.Dir(), "--cache-dir", megamcptest.CacheDir(), "--token", "t"}
	for _, tc := range []struct {
		name     string
		args     []string
		response string
		resume   bool
	}{
		{"default", nil, "sse", true},
		{"json", []string{"--mcp-response", "json"}, "json", true},
		{"json-noresumption", []string{"--mcp-response=json", "--mcp-resumption=false"}, "json", false},
		{"sse-noresumption", []string{"--mcp-resumption=false"}, "sse", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
			defer cancel()
			code, stdout, stderr := runCtx(t, ctx, append(base, tc.args...)...)
			if code != ExitOK {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, ExitOK, stderr)
			}
			got := decodeOneObject(t, stdout)
			if got["mcp_response"] != tc.response || got["mcp_resumption"] != tc.resume {
				t.Errorf("mcp_response %v, mcp_resumption %v; want %q, %v\nstdout: %s", got["mcp_response"], got["mcp_resumption"], tc.response, tc.resume, stdout)
			}
		})
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--mcp-response", "xml"}, `weft: --mcp-response: "xml"; give sse or json`},
		{[]string{"--mcp-response", "SSE"}, `weft: --mcp-response: "SSE"; give sse or json`},
		{[]string{"--mcp-resumption=maybe"}, `invalid argument "maybe" for "--mcp-resumption"`},
	} {
		t.Run("bad"+strings.Join(bad.args, "="), func(t *testing.T) {
			code, stdout, stderr := runCtx(t, t.Context(), append(base, bad.args...)...)
			if code != ExitUsage || stdout != "" || !strings.Contains(stderr, bad.want) {
				t.Errorf("exit %d (want %d), stdout %q (want none: the server must not listen), stderr %q (want %q)", code, ExitUsage, stdout, stderr, bad.want)
			}
		})
	}
}
