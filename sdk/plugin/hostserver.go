package plugin

import (
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/weft-dev/weft/sdk/plugin/pluginpb"
)

// hostServer is the host side of one go-plugin connection: the table of
// episodes in flight (episode id -> Host) and the one gRPC server of host
// services (Model, Env, User, State) on the broker, started on first use.
type hostServer struct {
	broker *goplugin.GRPCBroker

	once sync.Once
	id   uint32

	mu       sync.RWMutex
	episodes map[string]Host
}

// hostServer returns the host server of broker b, creating it.
func (s *shared) hostServer(b *goplugin.GRPCBroker) *hostServer {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.hosts[b]
	if !ok {
		h = &hostServer{broker: b, episodes: map[string]Host{}}
		s.hosts[b] = h
	}
	return h
}

// brokerID starts the host-services server once and returns its broker id.
func (h *hostServer) brokerID() uint32 {
	h.once.Do(func() {
		h.id = h.broker.NextId()
		go h.broker.AcceptAndServe(h.id, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
			pluginpb.RegisterModelServer(s, modelService{h: h})
			pluginpb.RegisterEnvServer(s, envService{h: h})
			pluginpb.RegisterUserServer(s, userService{h: h})
			pluginpb.RegisterStateServer(s, stateService{h: h})
			return s
		})
	})
	return h.id
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

var (
	_ pluginpb.ModelServer = modelService{}
	_ pluginpb.EnvServer   = envService{}
	_ pluginpb.UserServer  = userService{}
	_ pluginpb.StateServer = stateService{}
)
