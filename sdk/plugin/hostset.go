package plugin

import (
	"context"

	"github.com/weft-dev/weft/sdk/failure"
)

// HostSet is a Host made of one service of each kind. A nil service is not
// offered: its methods return a *HostError with Kind "unavailable".
type HostSet struct {
	ModelService Model
	EnvService   Env
	UserService  User
	StateService State
}

var _ Host = HostSet{}

// Model returns s.ModelService, or a Model failing with HostError
// "unavailable" when it is nil.
func (s HostSet) Model() Model {
	if s.ModelService == nil {
		return unavailable{failure.Model}
	}
	return s.ModelService
}

// Env returns s.EnvService, or an Env failing with HostError "unavailable".
func (s HostSet) Env() Env {
	if s.EnvService == nil {
		return unavailable{failure.Env}
	}
	return s.EnvService
}

// User returns s.UserService, or a User failing with HostError
// "unavailable".
func (s HostSet) User() User {
	if s.UserService == nil {
		return unavailable{failure.User}
	}
	return s.UserService
}

// State returns s.StateService, or a State failing with HostError
// "unavailable".
func (s HostSet) State() State {
	if s.StateService == nil {
		return unavailable{failure.State}
	}
	return s.StateService
}

type unavailable struct{ service failure.Component }

func (u unavailable) err() error {
	return &HostError{Service: u.service, Kind: failure.Unavailable, Message: "the host offers no " + string(u.service) + " service for this call"}
}

func (u unavailable) Generate(context.Context, *GenerateRequest, *GenerateResponse) error {
	return u.err()
}
func (u unavailable) ListTools(context.Context, *ListToolsRequest, *ListToolsResponse) error {
	return u.err()
}
func (u unavailable) CallTool(context.Context, *CallToolRequest, *CallToolResponse) error {
	return u.err()
}
func (u unavailable) Next(context.Context, *UserRequest, *UserResponse) error { return u.err() }
func (u unavailable) Query(context.Context, *QueryRequest, *QueryResponse) error {
	return u.err()
}
func (u unavailable) Hash(context.Context, *HashRequest, *HashResponse) error {
	return u.err()
}
func (u unavailable) Diff(context.Context, *DiffRequest, *DiffResponse) error {
	return u.err()
}
func (u unavailable) ReadFile(context.Context, *ReadFileRequest, *ReadFileResponse) error {
	return u.err()
}

// ModelFunc is a Model made of a function.
type ModelFunc func(ctx context.Context, req *GenerateRequest, resp *GenerateResponse) error

// Generate calls f.
func (f ModelFunc) Generate(ctx context.Context, req *GenerateRequest, resp *GenerateResponse) error {
	return f(ctx, req, resp)
}

// EnvFuncs is an Env made of functions; a nil function returns a
// *HostError with Kind "unavailable".
type EnvFuncs struct {
	List func(ctx context.Context, req *ListToolsRequest, resp *ListToolsResponse) error
	Call func(ctx context.Context, req *CallToolRequest, resp *CallToolResponse) error
}

// ListTools calls e.List.
func (e EnvFuncs) ListTools(ctx context.Context, req *ListToolsRequest, resp *ListToolsResponse) error {
	if e.List == nil {
		return unavailable{failure.Env}.err()
	}
	return e.List(ctx, req, resp)
}

// CallTool calls e.Call.
func (e EnvFuncs) CallTool(ctx context.Context, req *CallToolRequest, resp *CallToolResponse) error {
	if e.Call == nil {
		return unavailable{failure.Env}.err()
	}
	return e.Call(ctx, req, resp)
}

// UserFunc is a User made of a function.
type UserFunc func(ctx context.Context, req *UserRequest, resp *UserResponse) error

// Next calls f.
func (f UserFunc) Next(ctx context.Context, req *UserRequest, resp *UserResponse) error {
	return f(ctx, req, resp)
}

// StateFunc is a State made of a query function; its Hash, Diff and
// ReadFile return a *HostError with Kind "unavailable" (use StateFuncs for
// all four).
type StateFunc func(ctx context.Context, req *QueryRequest, resp *QueryResponse) error

// Query calls f.
func (f StateFunc) Query(ctx context.Context, req *QueryRequest, resp *QueryResponse) error {
	return f(ctx, req, resp)
}

// Hash returns a *HostError with Kind "unavailable".
func (f StateFunc) Hash(context.Context, *HashRequest, *HashResponse) error {
	return unavailable{failure.State}.err()
}

// Diff returns a *HostError with Kind "unavailable".
func (f StateFunc) Diff(context.Context, *DiffRequest, *DiffResponse) error {
	return unavailable{failure.State}.err()
}

// ReadFile returns a *HostError with Kind "unavailable".
func (f StateFunc) ReadFile(context.Context, *ReadFileRequest, *ReadFileResponse) error {
	return unavailable{failure.State}.err()
}

// StateFuncs is a State made of functions; a nil function returns a
// *HostError with Kind "unavailable".
type StateFuncs struct {
	OnQuery func(ctx context.Context, req *QueryRequest, resp *QueryResponse) error
	OnHash  func(ctx context.Context, req *HashRequest, resp *HashResponse) error
	OnDiff  func(ctx context.Context, req *DiffRequest, resp *DiffResponse) error
	OnRead  func(ctx context.Context, req *ReadFileRequest, resp *ReadFileResponse) error
}

// Query calls s.OnQuery.
func (s StateFuncs) Query(ctx context.Context, req *QueryRequest, resp *QueryResponse) error {
	if s.OnQuery == nil {
		return unavailable{failure.State}.err()
	}
	return s.OnQuery(ctx, req, resp)
}

// Hash calls s.OnHash.
func (s StateFuncs) Hash(ctx context.Context, req *HashRequest, resp *HashResponse) error {
	if s.OnHash == nil {
		return unavailable{failure.State}.err()
	}
	return s.OnHash(ctx, req, resp)
}

// Diff calls s.OnDiff.
func (s StateFuncs) Diff(ctx context.Context, req *DiffRequest, resp *DiffResponse) error {
	if s.OnDiff == nil {
		return unavailable{failure.State}.err()
	}
	return s.OnDiff(ctx, req, resp)
}

// ReadFile calls s.OnRead.
func (s StateFuncs) ReadFile(ctx context.Context, req *ReadFileRequest, resp *ReadFileResponse) error {
	if s.OnRead == nil {
		return unavailable{failure.State}.err()
	}
	return s.OnRead(ctx, req, resp)
}

var (
	_ Model = ModelFunc(nil)
	_ Env   = EnvFuncs{}
	_ User  = UserFunc(nil)
	_ State = StateFunc(nil)
	_ State = StateFuncs{}
)
