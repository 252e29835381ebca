package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/sdk/failure"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// ErrPluginExited matches (errors.Is) the *PluginError of a call that
// failed because the plugin process is gone.
var ErrPluginExited = errors.New("plugin process exited")

// ErrDuplicateEpisode is returned (wrapped) by RunEpisode, Verify and
// Attribute when an episode with the same id is in flight on the client.
var ErrDuplicateEpisode = errors.New("duplicate episode id")

// PluginError is a failure of a plugin call seen from the host.
//
// Plugin is the plugin kind ("harness", "verifier", "attributor") or, for
// Start, the plugin binary's base name. Kind (sdk/failure) is one of:
//
//   - "exited": the plugin process is gone (errors.Is(err, ErrPluginExited));
//   - "unavailable": the connection failed while the process still runs;
//   - "protocol": the peer does not speak weft.plugin.v1 (not a weft
//     plugin, a missing service or method, a bad handshake);
//   - "error": the plugin method returned an error; Err holds it (a
//     *HostError when the plugin returned its host's failure).
//
// Cancellation and deadlines of the caller's context are not PluginErrors:
// they return an error matching context.Canceled or
// context.DeadlineExceeded.
type PluginError struct {
	Plugin string
	Kind   failure.Kind
	Err    error
}

// FailureKind returns e.Kind (failure.Of classifies a PluginError by it).
func (e *PluginError) FailureKind() failure.Kind { return e.Kind }

func (e *PluginError) Error() string {
	return fmt.Sprintf("weft plugin %s: %s: %v", e.Plugin, e.Kind, e.Err)
}

// Unwrap returns e.Err.
func (e *PluginError) Unwrap() error { return e.Err }

// Is reports ErrPluginExited for Kind "exited".
func (e *PluginError) Is(target error) bool {
	return target == ErrPluginExited && e.Kind == failure.Exited
}

// StartConfig says how to start a plugin process.
type StartConfig struct {
	// Cmd is the plugin command (not started yet). Its environment is the
	// host's plus Cmd.Env plus the handshake variables.
	Cmd *exec.Cmd
	// Logger receives the plugin's log lines (its stderr, JSON lines
	// parsed into records) and go-plugin's own; default slog.Default().
	Logger *slog.Logger
	// StartTimeout bounds the handshake; default 1 minute.
	StartTimeout time.Duration
	// Name names the plugin in errors and logs (e.g. "builtin:react");
	// default the base name of Cmd.Path.
	Name string
}

// waitDelay is the exec.Cmd.WaitDelay Start sets when Cmd has none: how
// long Wait waits for the plugin's stdout and stderr to close once the
// process has exited.
const waitDelay = 2 * time.Second

// groupKillAfter bounds how long Kill waits for go-plugin's kill before it
// kills the plugin's process group where it cannot see the leader exit.
const groupKillAfter = 3 * time.Second

// Client is a running plugin process. Its methods are safe for concurrent
// use.
type Client struct {
	name  string
	pid   int // process group leader
	gp    *goplugin.Client
	proto goplugin.ClientProtocol
	sh    *shared

	killed atomic.Bool

	mu   sync.Mutex
	disp map[string]any
}

// gone reports whether the process has exited or is being killed.
func (c *Client) gone() bool { return c.killed.Load() || c.gp.Exited() }

// Start starts the plugin process of cfg.Cmd and performs the handshake.
// A binary that is not a weft plugin (it exits, prints something else, or
// speaks another protocol version) fails with a *PluginError of Kind
// "exited" or "protocol". When ctx ends first, the process is killed and
// ctx's error returned (wrapped).
func Start(ctx context.Context, cfg StartConfig) (*Client, error) {
	if cfg.Cmd == nil {
		return nil, errors.New("weft plugin: StartConfig.Cmd is nil")
	}
	name := cfg.Name
	if name == "" {
		name = filepath.Base(cfg.Cmd.Path)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("weft plugin %s: start: %w", name, err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	logName := "plugin"
	if cfg.Name != "" {
		logName = cfg.Name
	}
	if cfg.Cmd.WaitDelay == 0 {
		cfg.Cmd.WaitDelay = waitDelay
	}
	// A process group of its own lets Kill reach the children the plugin
	// leaves behind: they hold its stdout and stderr, and go-plugin's Kill
	// waits for those to close.
	setProcessGroup(cfg.Cmd)
	sh := newShared()
	gp := goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: map[int]goplugin.PluginSet{ProtocolVersion: newPluginSet(sh, nil)},
		Cmd:              cfg.Cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           newHCLogger(logger, logName),
		StartTimeout:     cfg.StartTimeout,
	})
	type result struct {
		proto goplugin.ClientProtocol
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		p, err := gp.Client()
		ch <- result{p, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-ctx.Done():
		killProcess(gp, cfg.Cmd)
		<-ch
		killProcess(gp, cfg.Cmd)
		return nil, fmt.Errorf("weft plugin %s: start: %w", name, ctx.Err())
	}
	if r.err != nil {
		// go-plugin kills the process on a failed handshake; its message
		// tells a silent exit from a peer saying something else.
		kind := failure.Protocol
		if msg := r.err.Error(); strings.Contains(msg, "Failed to read any lines") || strings.Contains(msg, "exited before we could connect") {
			kind = failure.Exited
		} else if strings.Contains(msg, "timeout while waiting") {
			kind = failure.Unavailable
		}
		killProcess(gp, cfg.Cmd)
		if v, ok := oldProtocol(r.err); ok {
			return nil, &PluginError{Plugin: name, Kind: failure.Protocol, Err: fmt.Errorf("start %s: the plugin speaks weft.plugin.v%d, this host needs weft.plugin.v%d (rebuild it against the current sdk/plugin, or implement plugins/proto/weft/plugin/v%d): %w", cfg.Cmd.Path, v, ProtocolVersion, ProtocolVersion, r.err)}
		}
		return nil, &PluginError{Plugin: name, Kind: kind, Err: fmt.Errorf("start %s: %w (a weft plugin calls plugin.Serve from main)", cfg.Cmd.Path, r.err)}
	}
	return &Client{name: name, pid: pidOf(cfg.Cmd), gp: gp, proto: r.proto, sh: sh, disp: map[string]any{}}, nil
}

func (c *Client) dispense(kind string) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.disp[kind]; ok {
		return v, nil
	}
	if c.gone() {
		return nil, &PluginError{Plugin: kind, Kind: failure.Exited, Err: fmt.Errorf("%s: %w", c.name, ErrPluginExited)}
	}
	v, err := c.proto.Dispense(kind)
	if err != nil {
		return nil, &PluginError{Plugin: kind, Kind: failure.Protocol, Err: err}
	}
	switch x := v.(type) {
	case *HarnessClient:
		x.c.exited = c.gone
	case *VerifierClient:
		x.c.exited = c.gone
	case *AttributorClient:
		x.c.exited = c.gone
	}
	c.disp[kind] = v
	return v, nil
}

// Harness returns the plugin's harness. Calls fail with a *PluginError of
// Kind "protocol" when the plugin serves no harness.
func (c *Client) Harness() (*HarnessClient, error) {
	v, err := c.dispense(HarnessPlugin)
	if err != nil {
		return nil, err
	}
	return v.(*HarnessClient), nil
}

// Verifier returns the plugin's verifier.
func (c *Client) Verifier() (*VerifierClient, error) {
	v, err := c.dispense(VerifierPlugin)
	if err != nil {
		return nil, err
	}
	return v.(*VerifierClient), nil
}

// Attributor returns the plugin's attributor.
func (c *Client) Attributor() (*AttributorClient, error) {
	v, err := c.dispense(AttributorPlugin)
	if err != nil {
		return nil, err
	}
	return v.(*AttributorClient), nil
}

// Kill ends the plugin process (gracefully first, then forcibly) and waits
// for it. Calls in flight fail with a *PluginError matching
// ErrPluginExited.
func (c *Client) Kill() {
	c.killed.Store(true)
	killGP(c.gp, c.pid)
	c.sh.closeHosts()
}

// pidOf returns the pid of cmd's process, 0 when not started.
func pidOf(cmd *exec.Cmd) int {
	if cmd.Process == nil {
		return 0
	}
	return cmd.Process.Pid
}

// killProcess is killGP for a command that may not have started.
func killProcess(gp *goplugin.Client, cmd *exec.Cmd) { killGP(gp, pidOf(cmd)) }

// killGP runs go-plugin's Kill and kills the process group of pid (the
// plugin's, see setProcessGroup) so that children the plugin left behind
// die too. go-plugin's Kill waits for the plugin's stdout and stderr to
// close, which a child holding them delays forever: the group is killed
// as soon as the plugin process itself has exited (or after
// groupKillAfter where that cannot be seen), then once more when Kill has
// returned.
func killGP(gp *goplugin.Client, pid int) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		gp.Kill()
	}()
	if pid > 0 {
		deadline := time.After(groupKillAfter)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case <-done:
				break wait
			case <-deadline:
				killGroup(pid)
				break wait
			case <-tick.C:
				if leaderGone(pid) {
					killGroup(pid)
					break wait
				}
			}
		}
	}
	<-done
	killGroup(pid)
}

// Pid returns the plugin process's id (0 when unknown).
func (c *Client) Pid() int {
	if rc := c.gp.ReattachConfig(); rc != nil {
		return rc.Pid
	}
	return 0
}

// Exited reports whether the plugin process has exited.
func (c *Client) Exited() bool { return c.gp.Exited() }

// ActiveEpisodes returns the number of episodes (plugin calls carrying
// host services) in flight on c.
func (c *Client) ActiveEpisodes() int {
	c.sh.mu.Lock()
	hs := make([]*hostServer, 0, len(c.sh.hosts))
	for _, h := range c.sh.hosts {
		hs = append(hs, h)
	}
	c.sh.mu.Unlock()
	n := 0
	for _, h := range hs {
		n += h.active()
	}
	return n
}

// caller makes the host side's plugin calls.
type caller struct {
	plugin string
	conn   *grpc.ClientConn
	hosts  *hostServer
	exited func() bool // nil in process
}

func newRPC(plugin string, conn *grpc.ClientConn, hosts *hostServer) *caller {
	return &caller{plugin: plugin, conn: conn, hosts: hosts}
}

func (c *caller) isExited() bool { return c.exited != nil && c.exited() }

// call invokes method; with a non-nil host it registers host under
// *episodeID (generating an id when empty) and sets *access to where the
// host services are for the duration of the call.
func (c *caller) call(ctx context.Context, method string, host Host, episodeID *string, access **HostAccess, req, resp proto.Message) error {
	if c.isExited() {
		return &PluginError{Plugin: c.plugin, Kind: failure.Exited, Err: ErrPluginExited}
	}
	if host != nil {
		if *episodeID == "" {
			*episodeID = newEpisodeID()
		}
		unregister, err := c.hosts.register(*episodeID, host)
		if err != nil {
			return err
		}
		defer unregister()
		a, err := c.hosts.hostAccess()
		if err != nil {
			return &PluginError{Plugin: c.plugin, Kind: failure.Unavailable, Err: err}
		}
		*access = a
	} else if access != nil {
		*access = nil
	}
	if err := c.conn.Invoke(ctx, method, req, resp); err != nil {
		return c.classify(ctx, method, err)
	}
	return nil
}

// classify turns the error of a plugin call into the error the host sees.
func (c *caller) classify(ctx context.Context, method string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("weft plugin %s: %s: %w", c.plugin, filepath.Base(method), cerr)
	}
	st, _ := status.FromError(err)
	if f := weftDetail(st); f != nil {
		if isPluginError(f) {
			return &PluginError{Plugin: c.plugin, Kind: failure.OwnError, Err: errors.New(st.Message())}
		}
		return &PluginError{Plugin: c.plugin, Kind: failure.OwnError, Err: decodeHostError("", err)}
	}
	switch st.Code() {
	case codes.Unimplemented:
		return &PluginError{Plugin: c.plugin, Kind: failure.Protocol, Err: err}
	case codes.DeadlineExceeded:
		return &PluginError{Plugin: c.plugin, Kind: failure.OwnError, Err: fmt.Errorf("%s: %w", st.Message(), context.DeadlineExceeded)}
	case codes.Canceled:
		if !c.waitExited() {
			return &PluginError{Plugin: c.plugin, Kind: failure.OwnError, Err: fmt.Errorf("%s: %w", st.Message(), context.Canceled)}
		}
	}
	if c.waitExited() {
		return &PluginError{Plugin: c.plugin, Kind: failure.Exited, Err: fmt.Errorf("%w (%v)", ErrPluginExited, err)}
	}
	if st.Code() == codes.Unavailable {
		return &PluginError{Plugin: c.plugin, Kind: failure.Unavailable, Err: err}
	}
	return &PluginError{Plugin: c.plugin, Kind: failure.Protocol, Err: err}
}

// waitExited reports whether the plugin process exits within a second: a
// broken connection is seen a moment before the process's exit.
func (c *caller) waitExited() bool {
	if c.exited == nil {
		return false
	}
	deadline := time.Now().Add(time.Second)
	for {
		if c.exited() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// HarnessClient is a harness plugin seen from the host; it implements
// Harness. Safe for concurrent use.
type HarnessClient struct{ c *caller }

var _ Harness = (*HarnessClient)(nil)

// Describe asks the plugin to describe itself. Errors: *PluginError, or a
// context error.
func (h *HarnessClient) Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error {
	return h.c.call(ctx, pluginpb.Harness_Describe_FullMethodName, nil, nil, nil, req, resp)
}

// RunEpisode runs one episode in the plugin with host's services. It sets
// req.EpisodeId (a random "ep_..." id when empty) and req.Host (the
// loopback address and token of this client's host-services server);
// host is reachable by the plugin under that episode id for the duration
// of the call. A nil host offers no services. Errors: *PluginError (Kind
// "exited" matches ErrPluginExited), ErrDuplicateEpisode (wrapped) when
// the id is in flight, or a context error.
func (h *HarnessClient) RunEpisode(ctx context.Context, host Host, req *RunEpisodeRequest, resp *RunEpisodeResponse) error {
	return h.c.call(ctx, pluginpb.Harness_RunEpisode_FullMethodName, host, &req.EpisodeId, &req.Host, req, resp)
}

// VerifierClient is a verifier plugin seen from the host; it implements
// Verifier.
type VerifierClient struct{ c *caller }

var _ Verifier = (*VerifierClient)(nil)

// Describe asks the plugin to describe itself.
func (v *VerifierClient) Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error {
	return v.c.call(ctx, pluginpb.Verifier_Describe_FullMethodName, nil, nil, nil, req, resp)
}

// Verify scores an episode; host (typically a HostSet with StateService)
// is reachable by the plugin under req.EpisodeId. Errors as RunEpisode.
func (v *VerifierClient) Verify(ctx context.Context, host Host, req *VerifyRequest, resp *VerifyResponse) error {
	return v.c.call(ctx, pluginpb.Verifier_Verify_FullMethodName, host, &req.EpisodeId, &req.Host, req, resp)
}

// AttributorClient is an attributor plugin seen from the host; it
// implements Attributor.
type AttributorClient struct{ c *caller }

var _ Attributor = (*AttributorClient)(nil)

// Describe asks the plugin to describe itself.
func (a *AttributorClient) Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error {
	return a.c.call(ctx, pluginpb.Attributor_Describe_FullMethodName, nil, nil, nil, req, resp)
}

// Attribute assigns failed checkpoints; host is reachable by the plugin
// under req.EpisodeId. Errors as RunEpisode.
func (a *AttributorClient) Attribute(ctx context.Context, host Host, req *AttributeRequest, resp *AttributeResponse) error {
	return a.c.call(ctx, pluginpb.Attributor_Attribute_FullMethodName, host, &req.EpisodeId, &req.Host, req, resp)
}

// oldProtocol reads the plugin's protocol version out of go-plugin's
// negotiation error ("incompatible API version with plugin. Plugin
// version: 1, Client versions: [2]").
func oldProtocol(err error) (int, bool) {
	msg := err.Error()
	const marker = "Plugin version: "
	i := strings.Index(msg, marker)
	if !strings.Contains(msg, "incompatible API version") || i < 0 {
		return 0, false
	}
	var v int
	if _, serr := fmt.Sscanf(msg[i+len(marker):], "%d", &v); serr != nil {
		return 0, false
	}
	return v, true
}
