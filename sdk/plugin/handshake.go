package plugin

import (
	"context"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// MagicCookieKey and MagicCookieValue are the environment variable a host
// sets when it starts a plugin. A weft plugin binary run without it (by
// hand, or by a host of another kind) prints a notice and exits instead of
// serving.
const (
	MagicCookieKey   = "WEFT_PLUGIN"
	MagicCookieValue = "b8f3c1d2-weft-plugin-7e4a9c60"
)

// Handshake is the go-plugin handshake of weft plugins. Hosts and plugins
// built with this SDK use it; ProtocolVersion here is the default, a host
// negotiates it among VersionedPlugins.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}

// VersionedPlugins returns the plugin sets of every protocol version this
// SDK speaks: ProtocolVersion (2) -> {"harness", "verifier", "attributor"}.
//
// A host passes a nil cfg and gets every plugin kind (dispensing one yields
// a *HarnessClient, *VerifierClient or *AttributorClient). A plugin passes
// the implementations it serves; kinds whose implementation is nil are left
// out. The plugins of one returned set share their broker connections, so
// one set is built per go-plugin client or server.
func VersionedPlugins(cfg *ServeConfig) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{ProtocolVersion: PluginSet(cfg)}
}

// PluginSet is the plugin set of ProtocolVersion; see VersionedPlugins.
func PluginSet(cfg *ServeConfig) goplugin.PluginSet {
	return newPluginSet(newShared(), cfg)
}

func newPluginSet(sh *shared, cfg *ServeConfig) goplugin.PluginSet {
	if cfg == nil {
		return goplugin.PluginSet{
			HarnessPlugin:    &HarnessGRPCPlugin{shared: sh},
			VerifierPlugin:   &VerifierGRPCPlugin{shared: sh},
			AttributorPlugin: &AttributorGRPCPlugin{shared: sh},
		}
	}
	ps := goplugin.PluginSet{}
	if cfg.Harness != nil {
		ps[HarnessPlugin] = &HarnessGRPCPlugin{Impl: cfg.Harness, shared: sh}
	}
	if cfg.Verifier != nil {
		ps[VerifierPlugin] = &VerifierGRPCPlugin{Impl: cfg.Verifier, shared: sh}
	}
	if cfg.Attributor != nil {
		ps[AttributorPlugin] = &AttributorGRPCPlugin{Impl: cfg.Attributor, shared: sh}
	}
	return ps
}

// shared is the state the plugins of one set share: on the plugin side the
// client connections to the host services (one per address and token), on
// the host side the host-services server of each go-plugin connection.
type shared struct {
	mu    sync.Mutex
	conns map[connKey]*connEntry
	hosts map[any]*hostServer
}

type connKey struct {
	address, token string
}

type connEntry struct {
	ready chan struct{}
	conn  *grpc.ClientConn
	err   error
}

func newShared() *shared {
	return &shared{conns: map[connKey]*connEntry{}, hosts: map[any]*hostServer{}}
}

// defaultShared serves plugins built as zero values (outside PluginSet).
var defaultShared = newShared()

func sharedOf(s *shared) *shared {
	if s == nil {
		return defaultShared
	}
	return s
}

// HarnessGRPCPlugin is the go-plugin Plugin of the "harness" kind: Impl is
// served on the plugin side; on the host side GRPCClient returns a
// *HarnessClient.
type HarnessGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl   Harness
	shared *shared
}

// GRPCServer registers the Harness service (go-plugin calls it).
func (p *HarnessGRPCPlugin) GRPCServer(b *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterHarnessServer(s, &harnessServer{impl: p.Impl, hosts: hostDialer{sharedOf(p.shared)}})
	return nil
}

// GRPCClient returns a *HarnessClient (go-plugin calls it).
func (p *HarnessGRPCPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &HarnessClient{c: newRPC(HarnessPlugin, c, sharedOf(p.shared).hostServer(c))}, nil
}

// VerifierGRPCPlugin is the go-plugin Plugin of the "verifier" kind; on the
// host side GRPCClient returns a *VerifierClient.
type VerifierGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl   Verifier
	shared *shared
}

// GRPCServer registers the Verifier service (go-plugin calls it).
func (p *VerifierGRPCPlugin) GRPCServer(b *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterVerifierServer(s, &verifierServer{impl: p.Impl, hosts: hostDialer{sharedOf(p.shared)}})
	return nil
}

// GRPCClient returns a *VerifierClient (go-plugin calls it).
func (p *VerifierGRPCPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &VerifierClient{c: newRPC(VerifierPlugin, c, sharedOf(p.shared).hostServer(c))}, nil
}

// AttributorGRPCPlugin is the go-plugin Plugin of the "attributor" kind;
// on the host side GRPCClient returns an *AttributorClient.
type AttributorGRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl   Attributor
	shared *shared
}

// GRPCServer registers the Attributor service (go-plugin calls it).
func (p *AttributorGRPCPlugin) GRPCServer(b *goplugin.GRPCBroker, s *grpc.Server) error {
	pluginpb.RegisterAttributorServer(s, &attributorServer{impl: p.Impl, hosts: hostDialer{sharedOf(p.shared)}})
	return nil
}

// GRPCClient returns an *AttributorClient (go-plugin calls it).
func (p *AttributorGRPCPlugin) GRPCClient(_ context.Context, b *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return &AttributorClient{c: newRPC(AttributorPlugin, c, sharedOf(p.shared).hostServer(c))}, nil
}

var (
	_ goplugin.GRPCPlugin = (*HarnessGRPCPlugin)(nil)
	_ goplugin.GRPCPlugin = (*VerifierGRPCPlugin)(nil)
	_ goplugin.GRPCPlugin = (*AttributorGRPCPlugin)(nil)
)

// ClosePluginSet closes the host connections the plugins of ps cached on
// the plugin side and the host-services servers of the host side. go-plugin's own shutdown closes
// the process; in-process servers (tests) call it when done.
func ClosePluginSet(ps goplugin.PluginSet) {
	seen := map[*shared]bool{}
	for _, p := range ps {
		var sh *shared
		switch x := p.(type) {
		case *HarnessGRPCPlugin:
			sh = x.shared
		case *VerifierGRPCPlugin:
			sh = x.shared
		case *AttributorGRPCPlugin:
			sh = x.shared
		}
		if sh != nil && !seen[sh] {
			seen[sh] = true
			sh.closeConns()
			sh.closeHosts()
		}
	}
}
