package host

import (
	"fmt"
	"github.com/weft-dev/weft/sdk/failure"

	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/sdk/plugin"
)

// Model serves the Model host service from a policy. A policy error
// reaches the plugin as a *plugin.HostError with Service "model" and the
// policy error's kind (core/model Error kinds: "unavailable", "timeout",
// "rate_limited", "server", "bad_request", "bad_response", "canceled"), or
// "internal" for an untyped error.
type Model struct {
	Policy model.Policy
}

// Generate implements plugin.Model.
func (m *Model) Generate(ctx context.Context, req *plugin.GenerateRequest, resp *plugin.GenerateResponse) error {
	r, err := m.Policy.Generate(ctx, ModelRequest(req))
	if err != nil {
		return &plugin.HostError{Service: failure.Model, Kind: modelErrorKind(ctx, err), Message: err.Error()}
	}
	FillGenerateResponse(r, resp)
	return nil
}

// modelErrorKind classifies a policy error (failure.Of): a *model.Error
// by its kind, a deadline as timeout (the endpoint did not answer in time).
func modelErrorKind(ctx context.Context, err error) failure.Kind {
	var me *model.Error
	if !errors.As(err, &me) && (errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded) {
		return failure.Timeout
	}
	return failure.Of(err)
}

// Env serves the Env host service from one MegaMCP session: every call is
// a ledgered session call. Tool errors the model can read (invalid
// arguments, unknown tool, a refused action) are results with IsError; an
// infrastructure failure (a module trap, deadline or memory cap, a fenced
// or deleted session, a ledger write failure) is a *plugin.HostError with
// Service "env" and the MegaMCP error kind (megamcp.ErrorKind: "trap",
// "deadline", "memory_limit", "malformed_output", "stale_generation",
// "no_such_session", "ledger", ...).
type Env struct {
	Server  *megamcp.Server
	Session string
	// Generation fences the calls (0 = unfenced).
	Generation uint64
	// Tools, when set, are the only tools listed and callable; a call of
	// another is a tool error ("unknown tool"), never sent to the session
	// (so not ledgered).
	Tools []string
}

func (e *Env) offered(name string) bool { return e.Tools == nil || slices.Contains(e.Tools, name) }

// ListTools implements plugin.Env: the session's tools in exposure order.
func (e *Env) ListTools(ctx context.Context, req *plugin.ListToolsRequest, resp *plugin.ListToolsResponse) error {
	ss, err := e.Server.Session(e.Session)
	if err != nil {
		return envError(err)
	}
	for _, t := range ss.Group().Tools() {
		if !e.offered(t.Name) {
			continue
		}
		schema, err := plugin.JSONValue(t.Tool.InputSchema)
		if err != nil {
			return &plugin.HostError{Service: failure.Env, Kind: failure.Internal, Message: fmt.Sprintf("tool %s: input schema: %v", t.Name, err)}
		}
		resp.Tools = append(resp.Tools, &plugin.Tool{Name: t.Name, Description: t.Tool.Description,
			InputSchema: schema, ReadOnly: t.Tool.Annotations != nil && t.Tool.Annotations.ReadOnlyHint})
	}
	return nil
}

// CallTool implements plugin.Env.
func (e *Env) CallTool(ctx context.Context, req *plugin.CallToolRequest, resp *plugin.CallToolResponse) error {
	if !e.offered(req.Name) {
		// Not sent to the session, so not in the ledger (LedgerIndex 0).
		resp.Content = fmt.Sprintf("unknown tool: %q (not offered to this task)", req.Name)
		resp.IsError = true
		return nil
	}
	args := json.RawMessage(req.Arguments)
	res, err := e.Server.Call(ctx, e.Session, megamcp.CallRequest{Tool: req.Name, Arguments: args, Generation: e.Generation})
	if err != nil {
		return envError(err)
	}
	var texts []string
	for _, c := range res.Result.Content {
		if c.Type == "text" {
			texts = append(texts, c.Text)
			continue
		}
		b, _ := json.Marshal(c)
		texts = append(texts, string(b))
	}
	resp.Content = strings.Join(texts, "\n")
	resp.IsError = res.Result.IsError
	resp.LedgerIndex = res.Index
	sc, err := plugin.JSONValue(res.Result.StructuredContent)
	if err != nil {
		return &plugin.HostError{Service: failure.Env, Kind: failure.MalformedOutput, Message: fmt.Sprintf("tool %s: structured content: %v", req.Name, err)}
	}
	resp.StructuredContent = sc
	return nil
}

func envError(err error) error {
	kind := megamcp.ErrorKind(err)
	if kind == "" {
		kind = failure.Internal
	}
	return &plugin.HostError{Service: failure.Env, Kind: kind, Message: err.Error()}
}

// OpeningUser is the user of the agentic view: the full brief as the
// opening message, then done at the agent's first message to the user.
type OpeningUser struct {
	Opening string
}

// Next implements plugin.User.
func (u *OpeningUser) Next(ctx context.Context, req *plugin.UserRequest, resp *plugin.UserResponse) error {
	if len(req.Messages) == 0 {
		resp.Content = u.Opening
		return nil
	}
	resp.Done = true
	return nil
}
