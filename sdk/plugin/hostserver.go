package plugin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/weft-dev/weft/sdk/failure"
	pluginpb "github.com/weft-dev/weft/sdk/plugin/pluginpb/v2"
)

// hostServer is the host side of one plugin client: the table of
// episodes in flight (episode id -> Host) and the one gRPC server of host
// services (Model, Env, User, State) on a loopback TCP listener, started on
// first use, guarded by a bearer token of its own. Plugins reach it at the
// HostAccess a request carries, in any language, without go-plugin's
// broker.
type hostServer struct {
	once   sync.Once
	access *HostAccess
	err    error
	srv    *grpc.Server

	mu       sync.RWMutex
	episodes map[string]Host
}

// hostServer returns the host server of key k (one per go-plugin client
// connection), creating it.
func (s *shared) hostServer(k any) *hostServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.hosts[k]
	if !ok {
		h = &hostServer{episodes: map[string]Host{}}
		s.hosts[k] = h
	}
	return h
}

// tokenMetadata is the gRPC metadata key of the bearer token.
const tokenMetadata = "authorization"

// hostAccess starts the host-services server once and returns where it is.
func (h *hostServer) hostAccess() (*HostAccess, error) {
	h.once.Do(func() {
		var b [16]byte
		_, _ = rand.Read(b[:])
		token := hex.EncodeToString(b[:])
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			h.err = fmt.Errorf("weft plugin: host services: listen: %w", err)
			return
		}
		want := "Bearer " + token
		auth := func(ctx context.Context) error {
			md, _ := metadata.FromIncomingContext(ctx)
			for _, v := range md.Get(tokenMetadata) {
				if subtle.ConstantTimeCompare([]byte(v), []byte(want)) == 1 {
					return nil
				}
			}
			return hostErrorStatus(&HostError{Kind: failure.Unauthenticated, Message: "host services: missing or wrong bearer token (send the HostAccess token as \"authorization: Bearer <token>\")"})
		}
		s := grpc.NewServer(
			grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
				if err := auth(ctx); err != nil {
					return nil, err
				}
				return next(ctx, req)
			}),
		)
		pluginpb.RegisterModelServer(s, modelService{h: h})
		pluginpb.RegisterEnvServer(s, envService{h: h})
		pluginpb.RegisterUserServer(s, userService{h: h})
		pluginpb.RegisterStateServer(s, stateService{h: h})
		go func() { _ = s.Serve(lis) }()
		h.srv = s
		h.access = &HostAccess{Address: lis.Addr().String(), Token: token}
	})
	return h.access, h.err
}

// close stops the host-services server (calls in flight fail).
func (h *hostServer) close() {
	h.once.Do(func() { h.err = errors.New("weft plugin: host services closed") })
	if h.srv != nil {
		h.srv.Stop()
	}
}

// register enters host under episode id ep; the returned func removes it.
func (h *hostServer) register(ep string, host Host) (func(), error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, dup := h.episodes[ep]; dup {
		return nil, fmt.Errorf("weft plugin: episode %q is already running on this client: %w", ep, ErrDuplicateEpisode)
	}
	h.episodes[ep] = host
	return func() {
		h.mu.Lock()
		delete(h.episodes, ep)
		h.mu.Unlock()
	}, nil
}

func (h *hostServer) active() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.episodes)
}

// lookup returns the Host of episode ep, or the status error a plugin sees
// for an unknown episode (HostError Kind "no_episode").
func (h *hostServer) lookup(service failure.Component, ep string) (Host, error) {
	h.mu.RLock()
	host, ok := h.episodes[ep]
	h.mu.RUnlock()
	if !ok {
		return nil, hostErrorStatus(&HostError{Service: service, Kind: failure.NoEpisode, Message: fmt.Sprintf("no episode %q is running on this host connection", ep)})
	}
	return host, nil
}

// newEpisodeID returns a random episode id ("ep_" and 32 hex digits).
func newEpisodeID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ep_" + hex.EncodeToString(b[:])
}

type modelService struct {
	pluginpb.UnimplementedModelServer
	h *hostServer
}

func (s modelService) Generate(ctx context.Context, req *GenerateRequest) (*GenerateResponse, error) {
	host, err := s.h.lookup(failure.Model, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(GenerateResponse)
	if err := host.Model().Generate(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.Model, err)
	}
	return resp, nil
}

type envService struct {
	pluginpb.UnimplementedEnvServer
	h *hostServer
}

func (s envService) ListTools(ctx context.Context, req *ListToolsRequest) (*ListToolsResponse, error) {
	host, err := s.h.lookup(failure.Env, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(ListToolsResponse)
	if err := host.Env().ListTools(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.Env, err)
	}
	return resp, nil
}

func (s envService) CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResponse, error) {
	host, err := s.h.lookup(failure.Env, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(CallToolResponse)
	if err := host.Env().CallTool(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.Env, err)
	}
	return resp, nil
}

type userService struct {
	pluginpb.UnimplementedUserServer
	h *hostServer
}

func (s userService) Next(ctx context.Context, req *UserRequest) (*UserResponse, error) {
	host, err := s.h.lookup(failure.User, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(UserResponse)
	if err := host.User().Next(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.User, err)
	}
	return resp, nil
}

type stateService struct {
	pluginpb.UnimplementedStateServer
	h *hostServer
}

func (s stateService) Query(ctx context.Context, req *QueryRequest) (*QueryResponse, error) {
	host, err := s.h.lookup(failure.State, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(QueryResponse)
	if err := host.State().Query(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.State, err)
	}
	return resp, nil
}

func (s stateService) Hash(ctx context.Context, req *HashRequest) (*HashResponse, error) {
	host, err := s.h.lookup(failure.State, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(HashResponse)
	if err := host.State().Hash(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.State, err)
	}
	return resp, nil
}

func (s stateService) Diff(ctx context.Context, req *DiffRequest) (*DiffResponse, error) {
	host, err := s.h.lookup(failure.State, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(DiffResponse)
	if err := host.State().Diff(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.State, err)
	}
	return resp, nil
}

func (s stateService) ReadFile(ctx context.Context, req *ReadFileRequest) (*ReadFileResponse, error) {
	host, err := s.h.lookup(failure.State, req.GetEpisodeId())
	if err != nil {
		return nil, err
	}
	resp := new(ReadFileResponse)
	if err := host.State().ReadFile(ctx, req, resp); err != nil {
		return nil, serviceErrorStatus(failure.State, err)
	}
	return resp, nil
}

var (
	_ pluginpb.ModelServer = modelService{}
	_ pluginpb.EnvServer   = envService{}
	_ pluginpb.UserServer  = userService{}
	_ pluginpb.StateServer = stateService{}
)
