package plugintest

import (
	"context"
	"testing"
	"time"

	goplugin "github.com/hashicorp/go-plugin"

	"github.com/weft-dev/weft/sdk/plugin"
)

// Conn is a plugin served in process and the host's clients of it,
// connected by go-plugin's gRPC transport (a local socket), broker
// included.
type Conn struct {
	client *goplugin.GRPCClient
}

// Connect serves the plugins of cfg in process and connects a host to
// them. The connection is closed at t's cleanup.
func Connect(t testing.TB, cfg *plugin.ServeConfig) *Conn {
	t.Helper()
	ps := plugin.PluginSet(cfg)
	client, server := goplugin.TestPluginGRPCConn(t, false, ps)
	t.Cleanup(func() {
		// Close asks the server to stop (go-plugin's controller); wait.
		_ = client.Close()
		plugin.ClosePluginSet(ps)
		select {
		case <-server.DoneCh:
		case <-time.After(5 * time.Second):
		}
	})
	return &Conn{client: client}
}

func dispense[T any](t testing.TB, c *Conn, kind string) T {
	t.Helper()
	v, err := c.client.Dispense(kind)
	if err != nil {
		t.Fatalf("plugintest: dispense %s: %v", kind, err)
	}
	x, ok := v.(T)
	if !ok {
		t.Fatalf("plugintest: dispense %s: got %T", kind, v)
	}
	return x
}

// Harness returns the host's client of the served harness (the test fails
// when cfg had none).
func (c *Conn) Harness(t testing.TB) *plugin.HarnessClient {
	t.Helper()
	return dispense[*plugin.HarnessClient](t, c, plugin.HarnessPlugin)
}

// Verifier returns the host's client of the served verifier.
func (c *Conn) Verifier(t testing.TB) *plugin.VerifierClient {
	t.Helper()
	return dispense[*plugin.VerifierClient](t, c, plugin.VerifierPlugin)
}

// Attributor returns the host's client of the served attributor.
func (c *Conn) Attributor(t testing.TB) *plugin.AttributorClient {
	t.Helper()
	return dispense[*plugin.AttributorClient](t, c, plugin.AttributorPlugin)
}

// RunHarness serves h in process, runs one episode of req through the real
// gRPC adapters with host's services reachable by callback, and returns
// the response. The error is what a host would see (a *plugin.PluginError
// when h returned an error).
func RunHarness(t testing.TB, h plugin.Harness, host plugin.Host, req *plugin.RunEpisodeRequest) (*plugin.RunEpisodeResponse, error) {
	t.Helper()
	hc := Connect(t, &plugin.ServeConfig{Harness: h}).Harness(t)
	if req == nil {
		req = new(plugin.RunEpisodeRequest)
	}
	resp := new(plugin.RunEpisodeResponse)
	err := hc.RunEpisode(context.Background(), host, req, resp)
	return resp, err
}
