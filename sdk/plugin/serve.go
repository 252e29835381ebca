package plugin

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"fmt"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// ServeConfig says what a plugin binary serves. Set at least one of
// Harness, Verifier and Attributor.
type ServeConfig struct {
	Harness    Harness
	Verifier   Verifier
	Attributor Attributor
	// Logger receives the plugin's log lines; by default they go to stderr
	// as JSON, which the host parses and passes to its own logger.
	Logger hclog.Logger
}

// Serve serves the plugins of cfg over go-plugin gRPC and returns when the
// host is done with the plugin (it kills or disconnects the process). Call
// it from main. Run without the host's handshake (MagicCookieKey), the
// binary prints a notice and exits with status 1. On unix the plugin also
// exits (status 3) within about a quarter of a second once its host process
// is gone, even if the host was killed with SIGKILL.
func Serve(cfg *ServeConfig) {
	if cfg == nil || (cfg.Harness == nil && cfg.Verifier == nil && cfg.Attributor == nil) {
		panic("plugin.Serve: ServeConfig sets no Harness, Verifier or Attributor")
	}
	watchHost() // exit when the host dies (proc_unix.go)
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake,
		VersionedPlugins: VersionedPlugins(cfg),
		GRPCServer:       goplugin.DefaultGRPCServer,
		Logger:           cfg.Logger,
	})
}

// hostDialer gives plugin methods the Host of a request: it dials the
// host-services address of a HostAccess once per address and token and
// caches the connection.
type hostDialer struct {
	sh *shared
}

// host returns the Host of an episode whose services the host serves at
// access; an absent access (or address) means none (every service returns
// HostError "unavailable").
func (d hostDialer) host(access *HostAccess, episodeID string) (Host, error) {
	if access.GetAddress() == "" {
		return HostSet{}, nil
	}
	conn, err := d.conn(access)
	if err != nil {
		return nil, err
	}
	return &remoteHost{
		model: &remoteModel{conn: conn, ep: episodeID},
		env:   &remoteEnv{conn: conn, ep: episodeID},
		user:  &remoteUser{conn: conn, ep: episodeID},
		state: &remoteState{conn: conn, ep: episodeID},
	}, nil
}

// bearer is the per-RPC credential carrying a HostAccess token.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{tokenMetadata: "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

func (d hostDialer) conn(access *HostAccess) (*grpc.ClientConn, error) {
	key := connKey{access.GetAddress(), access.GetToken()}
	d.sh.mu.Lock()
	e, ok := d.sh.conns[key]
	if !ok {
		e = &connEntry{ready: make(chan struct{})}
		d.sh.conns[key] = e
	}
	d.sh.mu.Unlock()
	if ok {
		<-e.ready
		return e.conn, e.err
	}
	e.conn, e.err = grpc.NewClient("passthrough:///"+access.GetAddress(),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(bearer(access.GetToken())))
	if e.err != nil {
		e.err = fmt.Errorf("weft plugin: dial host services at %s: %w", access.GetAddress(), e.err)
		d.sh.mu.Lock()
		delete(d.sh.conns, key) // a later request may retry
		d.sh.mu.Unlock()
	}
	close(e.ready)
	return e.conn, e.err
}

// closeConns closes the cached host connections (tests, plugintest).
func (s *shared) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.conns {
		select {
		case <-e.ready:
			if e.conn != nil {
				_ = e.conn.Close()
			}
			delete(s.conns, k)
		default:
		}
	}
}

// closeHosts stops the host-services servers (host side).
func (s *shared) closeHosts() {
	s.mu.Lock()
	hs := make([]*hostServer, 0, len(s.hosts))
	for k, h := range s.hosts {
		hs = append(hs, h)
		delete(s.hosts, k)
	}
	s.mu.Unlock()
	for _, h := range hs {
		h.close()
	}
}

// remoteHost is the Host a plugin method gets: services of one episode on
// the host's broker connection.
type remoteHost struct {
	model *remoteModel
	env   *remoteEnv
	user  *remoteUser
	state *remoteState
}

func (h *remoteHost) Model() Model { return h.model }
func (h *remoteHost) Env() Env     { return h.env }
func (h *remoteHost) User() User   { return h.user }
func (h *remoteHost) State() State { return h.state }

type remoteModel struct {
	conn *grpc.ClientConn
	ep   string
}

func (m *remoteModel) Generate(ctx context.Context, req *GenerateRequest, resp *GenerateResponse) error {
	req.EpisodeId = m.ep
	if err := m.conn.Invoke(ctx, pluginpb.Model_Generate_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.Model, err)
	}
	return nil
}

type remoteEnv struct {
	conn *grpc.ClientConn
	ep   string
}

func (e *remoteEnv) ListTools(ctx context.Context, req *ListToolsRequest, resp *ListToolsResponse) error {
	req.EpisodeId = e.ep
	if err := e.conn.Invoke(ctx, pluginpb.Env_ListTools_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.Env, err)
	}
	return nil
}

func (e *remoteEnv) CallTool(ctx context.Context, req *CallToolRequest, resp *CallToolResponse) error {
	req.EpisodeId = e.ep
	if err := e.conn.Invoke(ctx, pluginpb.Env_CallTool_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.Env, err)
	}
	return nil
}

type remoteUser struct {
	conn *grpc.ClientConn
	ep   string
}

func (u *remoteUser) Next(ctx context.Context, req *UserRequest, resp *UserResponse) error {
	req.EpisodeId = u.ep
	if err := u.conn.Invoke(ctx, pluginpb.User_Next_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.User, err)
	}
	return nil
}

type remoteState struct {
	conn *grpc.ClientConn
	ep   string
}

func (s *remoteState) Query(ctx context.Context, req *QueryRequest, resp *QueryResponse) error {
	req.EpisodeId = s.ep
	if err := s.conn.Invoke(ctx, pluginpb.State_Query_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.State, err)
	}
	return nil
}

func (s *remoteState) Hash(ctx context.Context, req *HashRequest, resp *HashResponse) error {
	req.EpisodeId = s.ep
	if err := s.conn.Invoke(ctx, pluginpb.State_Hash_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.State, err)
	}
	return nil
}

func (s *remoteState) Diff(ctx context.Context, req *DiffRequest, resp *DiffResponse) error {
	req.EpisodeId = s.ep
	if err := s.conn.Invoke(ctx, pluginpb.State_Diff_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.State, err)
	}
	return nil
}

func (s *remoteState) ReadFile(ctx context.Context, req *ReadFileRequest, resp *ReadFileResponse) error {
	req.EpisodeId = s.ep
	if err := s.conn.Invoke(ctx, pluginpb.State_ReadFile_FullMethodName, req, resp); err != nil {
		return hostCallError(ctx, failure.State, err)
	}
	return nil
}

// Server adapters: pluginpb servers calling the Go interfaces. Each kind's
// methods are one line over describe and episodeCall, the only two shapes
// a plugin method has.

// describer is the Describe method every plugin kind has.
type describer interface {
	Describe(ctx context.Context, req *DescribeRequest, resp *DescribeResponse) error
}

// describe serves Describe: impl fills a new response; its error becomes
// the plugin error status the host decodes.
func describe(ctx context.Context, impl describer, req *DescribeRequest) (*DescribeResponse, error) {
	resp := new(DescribeResponse)
	if err := impl.Describe(ctx, req, resp); err != nil {
		return nil, pluginErrorStatus(err)
	}
	return resp, nil
}

// episodeRequest is a request scoped to an episode whose host services
// the plugin may call back (RunEpisode, Verify, Attribute).
type episodeRequest interface {
	GetHost() *HostAccess
	GetEpisodeId() string
}

// episodeCall serves an episode-scoped method: it dials the request's host
// services for its episode, then calls f with a new response; either
// error becomes the plugin error status.
func episodeCall[Req episodeRequest, Resp any](ctx context.Context, hosts hostDialer, req Req, f func(context.Context, Host, Req, *Resp) error) (*Resp, error) {
	host, err := hosts.host(req.GetHost(), req.GetEpisodeId())
	if err != nil {
		return nil, pluginErrorStatus(err)
	}
	resp := new(Resp)
	if err := f(ctx, host, req, resp); err != nil {
		return nil, pluginErrorStatus(err)
	}
	return resp, nil
}

type harnessServer struct {
	pluginpb.UnimplementedHarnessServer
	impl  Harness
	hosts hostDialer
}

func (s *harnessServer) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	return describe(ctx, s.impl, req)
}

func (s *harnessServer) RunEpisode(ctx context.Context, req *RunEpisodeRequest) (*RunEpisodeResponse, error) {
	return episodeCall(ctx, s.hosts, req, s.impl.RunEpisode)
}

type verifierServer struct {
	pluginpb.UnimplementedVerifierServer
	impl  Verifier
	hosts hostDialer
}

func (s *verifierServer) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	return describe(ctx, s.impl, req)
}

func (s *verifierServer) Verify(ctx context.Context, req *VerifyRequest) (*VerifyResponse, error) {
	return episodeCall(ctx, s.hosts, req, s.impl.Verify)
}

type attributorServer struct {
	pluginpb.UnimplementedAttributorServer
	impl  Attributor
	hosts hostDialer
}

func (s *attributorServer) Describe(ctx context.Context, req *DescribeRequest) (*DescribeResponse, error) {
	return describe(ctx, s.impl, req)
}

func (s *attributorServer) Attribute(ctx context.Context, req *AttributeRequest) (*AttributeResponse, error) {
	return episodeCall(ctx, s.hosts, req, s.impl.Attribute)
}
