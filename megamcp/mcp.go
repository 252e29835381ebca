// MCP logging (notifications/message) is deprecated as of protocol
// 2026-07-28 but part of 2025-11-25, which clients and the conformance
// suite use: weft keeps forwarding module logs through it.
//lint:file-ignore SA1019 MCP logging is deprecated only from protocol 2026-07-28

package megamcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/weft-dev/weft/core/module"
)

// SessionHeader is set by weft's HTTP layer on MCP requests that reach a
// session through /mcp/sessions/{id}; a client-supplied value is always
// replaced or removed.
const SessionHeader = "Weft-Session"

// MetaGeneration is the key of the generation in a tools/call request's
// _meta (the alternative to the Weft-Generation header).
const MetaGeneration = "weft/generation"

// Error codes of MCP protocol errors weft returns (JSON-RPC server-error
// range). The error's data is {"kind": "<errorKind>", ...}.
//
// CodeToolFailure is not -32003: the Go SDK's client takes a -32003 (or
// -32004) response for its own "client is closing" ("server is closing")
// and reports mcp.ErrConnectionClosed without the error's code and data.
const (
	CodeStaleGeneration = -32001 // data: {"kind": "stale_generation", "current_generation": N}
	CodeNoSuchSession   = -32002
	CodeToolFailure     = -32010 // trap, deadline, canceled, memory_limit, malformed_output: an infrastructure failure, not the policy's
)

// mcpServer returns the MCP server of group g: one per group, shared by all
// of its sessions; each request finds its session through mcpSession.
func (s *Server) mcpServer(g *Group) *mcp.Server {
	g.mcpOnce.Do(func() {
		srv := mcp.NewServer(&mcp.Implementation{Name: "weft", Title: "weft MegaMCP", Version: "0.1"}, &mcp.ServerOptions{
			Instructions: "weft tool environment: " + strings.Join(g.moduleNames(), ", "),
			GetSessionID: newID,
			Logger:       slog.New(minLevel{s.log.Handler(), slog.LevelWarn}),
			Capabilities: &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}, Tools: &mcp.ToolCapabilities{}},
		})
		for _, t := range g.tools {
			srv.AddTool(mcpTool(t), s.toolHandler(t.Name))
		}
		srv.AddReceivingMiddleware(suggestTool(g))
		s.addResourcesAndPrompts(srv, g)
		s.addFilesResource(srv, g)
		g.mcp = srv
	})
	return g.mcp
}

// suggestTool adds the group's closest tool name to the SDK's refusal of
// a tools/call of an unknown tool (a JSON-RPC invalid-params error,
// `unknown tool "add_nte"` -> `unknown tool "add_nte" (did you mean
// "add_note"?)`).
func suggestTool(g *Group) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			var je *jsonrpc.Error
			if method != "tools/call" || !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || !strings.HasPrefix(je.Message, "unknown tool ") {
				return res, err
			}
			p, ok := req.GetParams().(*mcp.CallToolParamsRaw)
			if !ok || p == nil {
				return res, err
			}
			if hint := g.didYouMean(p.Name); hint != "" {
				return res, &jsonrpc.Error{Code: je.Code, Message: je.Message + hint, Data: je.Data}
			}
			return res, err
		}
	}
}

func (g *Group) moduleNames() []string {
	out := make([]string, len(g.modules))
	for i, m := range g.modules {
		out[i] = m.mod.Manifest().Name
	}
	return out
}

func mcpTool(t GroupTool) *mcp.Tool {
	mt := &mcp.Tool{Name: t.Name, Description: t.Tool.Description, InputSchema: t.Tool.InputSchema}
	if len(t.Tool.OutputSchema) > 0 {
		mt.OutputSchema = t.Tool.OutputSchema
	}
	if a := t.Tool.Annotations; a != nil {
		mt.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: a.ReadOnlyHint}
	}
	return mt
}

// mcpSession finds the weft session of an MCP request: the one named by
// SessionHeader (set from the /mcp/sessions/{id} path), else the ephemeral
// session of this MCP session, created on first use over the default
// modules.
//
// An MCP session is bound to the weft session of its first request: its
// Mcp-Session-Id cannot be replayed against another /mcp/sessions/{id}, and
// an ephemeral session deleted through the admin API is not silently
// recreated blank under the same id.
func (s *Server) mcpSession(ctx context.Context, ms *mcp.ServerSession, h http.Header) (*Session, error) {
	if id := h.Get(SessionHeader); id != "" {
		if mid := ms.ID(); mid != "" {
			if prev, loaded := s.bound.LoadOrStore(mid, id); loaded && prev != id {
				return nil, fmt.Errorf("%w: this MCP session belongs to another weft session", ErrNoSuchSession)
			} else if !loaded {
				go func() {
					_ = ms.Wait()
					s.bound.Delete(mid)
				}()
			}
		}
		return s.Session(id)
	}
	mid := ms.ID()
	s.mu.RLock()
	if s.stdioSession != "" {
		mid = s.stdioSession
	}
	ss := s.sessions[mid]
	refs := s.defaultModules
	s.mu.RUnlock()
	if ss != nil {
		return ss, nil
	}
	if len(refs) == 0 || mid == "" {
		return nil, fmt.Errorf("%w: this endpoint has no default modules; create a session with the admin API and use /mcp/sessions/{id}", ErrNoSuchSession)
	}
	s.ephMu.Lock()
	defer s.ephMu.Unlock()
	if ss, err := s.Session(mid); err == nil {
		return ss, nil
	}
	if _, made := s.bound.Load(mid); made {
		return nil, fmt.Errorf("%w: %q was deleted; start a new MCP session", ErrNoSuchSession, mid)
	}
	ss, err := s.create(ctx, CreateOptions{Modules: refs, id: mid, ephemeral: true})
	if err != nil {
		return nil, err
	}
	s.bound.Store(mid, mid)
	go func() {
		_ = ms.Wait()
		s.bound.Delete(mid)
		if err := s.Delete(context.Background(), mid, 0); err != nil && !errors.Is(err, ErrNoSuchSession) {
			s.log.Warn("deleting ephemeral session", "session", mid, "err", err)
		}
	}()
	return ss, nil
}

func requestGeneration(h http.Header, meta mcp.Meta) (uint64, error) {
	if v := h.Get(GenerationHeader); v != "" {
		g, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s header %q", ErrBadRequest, GenerationHeader, v)
		}
		return g, nil
	}
	switch x := meta[MetaGeneration].(type) {
	case nil:
		return 0, nil
	case float64:
		if x >= 0 && x == float64(uint64(x)) {
			return uint64(x), nil
		}
	case string:
		if g, err := strconv.ParseUint(x, 10, 64); err == nil {
			return g, nil
		}
	}
	return 0, fmt.Errorf("%w: _meta %q must be a non-negative integer", ErrBadRequest, MetaGeneration)
}

// protocolError turns a server error into the MCP error the client sees.
func protocolError(err error) error {
	data := map[string]any{"kind": errorKind(err)}
	if errors.Is(err, ErrAtCapacity) {
		data["kind"] = CodeAtCapacity
	}
	code := int64(jsonrpc.CodeInternalError)
	var fe *FencedError
	switch {
	case errors.As(err, &fe):
		code = CodeStaleGeneration
		data["current_generation"] = fe.Current
	case errors.Is(err, ErrNoSuchSession):
		code = CodeNoSuchSession
	case errors.Is(err, ErrBadRequest):
		code = jsonrpc.CodeInvalidParams
	case errors.Is(err, module.ErrTrap), errors.Is(err, module.ErrDeadline), errors.Is(err, module.ErrStepBudget), errors.Is(err, module.ErrMemoryLimit),
		errors.Is(err, module.ErrMalformedOutput), errors.Is(err, module.ErrCanceled):
		code = CodeToolFailure
	}
	return &jsonrpc.Error{Code: code, Message: err.Error(), Data: mustJSON(data)}
}

func logLevel(level int) mcp.LoggingLevel {
	switch level {
	case 0:
		return "debug"
	case 1:
		return "info"
	case 2:
		return "warning"
	}
	return "error"
}

func (s *Server) toolHandler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ss, gen, err := s.requestSession(ctx, req.Session, req.Extra, req.Params.Meta)
		if err != nil {
			return nil, protocolError(err)
		}
		token := req.Params.GetProgressToken()
		cr := CallRequest{Generation: gen, Tool: name, Arguments: req.Params.Arguments,
			Log: func(level int, msg string) {
				_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: logLevel(level), Logger: name, Data: msg})
			},
		}
		if token != nil {
			cr.Progress = func(p, total float64, msg string) {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: p, Total: total, Message: msg})
			}
		}
		res, err := ss.Call(ctx, cr)
		if err != nil {
			return nil, protocolError(err)
		}
		out, err := toMCPResult(res.Result)
		if err != nil {
			return nil, protocolError(err)
		}
		out.Meta = mcp.Meta{"weft/seq": res.Seq, "weft/generation": res.Generation, "weft/index": res.Index}
		return out, nil
	}
}

// toMCPContent converts module content items to MCP content.
func toMCPContent(in []module.Content) ([]mcp.Content, error) {
	out := make([]mcp.Content, 0, len(in))
	for _, c := range in {
		switch c.Type {
		case "text":
			out = append(out, &mcp.TextContent{Text: c.Text})
		case "image", "audio":
			data, err := base64.StdEncoding.DecodeString(c.Data)
			if err != nil {
				return nil, fmt.Errorf("%s content: bad base64: %v", c.Type, err)
			}
			if c.Type == "image" {
				out = append(out, &mcp.ImageContent{Data: data, MIMEType: c.MimeType})
			} else {
				out = append(out, &mcp.AudioContent{Data: data, MIMEType: c.MimeType})
			}
		case "resource_link":
			out = append(out, &mcp.ResourceLink{URI: c.URI, Name: c.Name, MIMEType: c.MimeType})
		default:
			rc, err := embeddedResource(c)
			if err != nil {
				return nil, err
			}
			out = append(out, rc)
		}
	}
	return out, nil
}

func toMCPResult(r *module.Result) (*mcp.CallToolResult, error) {
	content, err := toMCPContent(r.Content)
	if err != nil {
		return nil, err
	}
	out := &mcp.CallToolResult{Content: content, IsError: r.IsError}
	if len(r.StructuredContent) > 0 {
		out.StructuredContent = json.RawMessage(r.StructuredContent)
	}
	return out, nil
}

// HTTPOptions configures Server.Handler.
type HTTPOptions struct {
	// Token guards the admin API (/v1/...), the registry and /metrics
	// with "Authorization: Bearer TOKEN". Empty: no authentication (tests).
	Token string
	// DefaultModules are the modules of the ephemeral session each new MCP
	// session on /mcp gets. Empty: /mcp serves no tools until a session is
	// created through the admin API.
	DefaultModules []string
	// Registry, if non-nil, is mounted at /v1/registry/ (module push/pull).
	Registry http.Handler
	// Metrics, if non-nil, is served at /metrics.
	Metrics http.Handler
	// SessionTimeout closes MCP sessions idle that long (0: never).
	SessionTimeout time.Duration
	// Logger for transport events; nil uses the server's.
	Logger *slog.Logger
	// JSONResponse answers each POSTed request with one application/json
	// body instead of a text/event-stream (both are Streamable HTTP, the
	// client accepts either). Progress and log notifications of a call then
	// go to the session's standalone SSE stream (GET), if the client opened
	// one, instead of the call's own stream; there is no stream to resume.
	// false (weft serve --mcp-response sse, the default): SSE.
	JSONResponse bool
	// NoResumption turns off SSE stream resumption: no event ids, no event
	// store, so a client whose response stream broke cannot fetch the
	// missed answer with Last-Event-ID (the call was still executed and
	// recorded in the session's ledger; GET /v1/sessions/{id}/ledger lists
	// it). false (weft serve --mcp-resumption, the default): every SSE
	// event is kept in a memory event store of at most 10 MiB (oldest
	// purged) for Last-Event-ID.
	NoResumption bool
}

// Handler returns the HTTP handler of weft serve:
//
//	/mcp                 MCP Streamable HTTP; every MCP session gets a fresh
//	                     weft session over DefaultModules (deleted when the
//	                     MCP session ends)
//	/mcp/sessions/{id}   MCP Streamable HTTP for a session made through the
//	                     admin API (the unguessable id is the capability)
//	/v1/...              the admin API (docs/api.md), bearer token
//	/v1/registry/...     module push/pull, bearer token
//	/metrics             Prometheus metrics, bearer token
//	/healthz             "ok"
//
// DNS-rebinding protection is on for both MCP endpoints: a request that
// arrives on a loopback address with a non-loopback Host is refused (403).
func (s *Server) Handler(ctx context.Context, opts HTTPOptions) (http.Handler, error) {
	lg := opts.Logger
	if lg == nil {
		lg = s.log
	}
	s.mu.Lock()
	s.defaultModules = opts.DefaultModules
	s.mu.Unlock()
	var defGroup *Group
	if len(opts.DefaultModules) > 0 {
		g, err := s.group(ctx, opts.DefaultModules)
		if err != nil {
			return nil, err
		}
		defGroup = g
		s.mcpServer(g)
	}
	// The SDK logs every session connect at info; keep warnings and errors.
	sdkLog := slog.New(minLevel{lg.Handler(), slog.LevelWarn})
	sopts := &mcp.StreamableHTTPOptions{Logger: sdkLog, SessionTimeout: opts.SessionTimeout, JSONResponse: opts.JSONResponse}
	if !opts.NoResumption {
		// An event store lets clients resume an interrupted SSE stream
		// (Last-Event-ID); the SDK bounds it (10 MiB, oldest events purged).
		sopts.EventStore = mcp.NewMemoryEventStore(nil)
	}
	defHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if defGroup == nil {
			return nil
		}
		return s.mcpServer(defGroup)
	}, sopts)
	sessHandler := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		ss, err := s.Session(r.Header.Get(SessionHeader))
		if err != nil {
			return nil
		}
		return s.mcpServer(ss.group)
	}, sopts)

	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(SessionHeader)
		if defGroup == nil {
			var body apiError
			body.Error.Code = "no_such_session"
			body.Error.Message = "this server has no default modules (weft serve --module REF); create a session with POST /v1/sessions and connect to /mcp/sessions/{id}"
			writeJSON(w, http.StatusNotFound, body)
			return
		}
		// Unauthenticated clients open MCP sessions here: a new one (a
		// request without Mcp-Session-Id) is refused at the bound.
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && mayInitialize(r) {
			if err := s.mcpCapacity(defGroup); err != nil {
				writeError(w, err)
				return
			}
		}
		defHandler.ServeHTTP(w, r)
	})
	mux.HandleFunc("/mcp/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		if _, err := s.Session(id); err != nil {
			writeError(w, err)
			return
		}
		r.Header.Set(SessionHeader, id)
		sessHandler.ServeHTTP(w, r)
	})
	admin := s.AdminHandler()
	mux.Handle("/v1/", bearer(opts.Token, admin))
	if opts.Registry != nil {
		mux.Handle("/v1/registry/", bearer(opts.Token, http.StripPrefix("/v1/registry", opts.Registry)))
	}
	if opts.Metrics != nil {
		mux.Handle("/metrics", bearer(opts.Token, opts.Metrics))
	}
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := s.Health(); err != nil {
			var body apiError
			body.Error.Code, body.Error.Message = "unhealthy", err.Error()
			writeJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	return mux, nil
}

// mayInitialize reports whether a POST without a session id may be an
// initialize request (the one that makes a session); its body is read and
// put back (it is bounded by the SDK's request limit when served).
func mayInitialize(r *http.Request) bool {
	b, err := io.ReadAll(io.LimitReader(r.Body, MaxArgumentsBytes+64<<10))
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), r.Body))
	if err != nil {
		return true
	}
	var probe struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return true
	}
	return probe.Method == "initialize"
}

// mcpCapacity refuses a new MCP session on /mcp when the default group's
// MCP server already has Config.MaxEphemeralSessions of them (each gets an
// ephemeral weft session on its first call; the SDK keeps an MCP session
// until it ends or idles out).
func (s *Server) mcpCapacity(g *Group) error {
	max := s.cfg.MaxEphemeralSessions
	if max <= 0 {
		return nil
	}
	n := 0
	for ss := range s.mcpServer(g).Sessions() {
		// Only sessions that were initialized count: the SDK also keeps
		// short-lived ones (a client's server/discover probe before its
		// initialize).
		if ss.ID() == "" || ss.InitializeParams() == nil {
			continue
		}
		n++
		if n >= max {
			return fmt.Errorf("%w: %d MCP sessions open on /mcp, the limit; retry when one ends", ErrAtCapacity, n)
		}
	}
	return nil
}

// StdioServer creates one session and returns an MCP server bound to it, for
// a stdio transport (weft mcp): every request acts on that session.
func (s *Server) StdioServer(ctx context.Context, opts CreateOptions) (*mcp.Server, string, error) {
	ss, err := s.create(ctx, opts)
	if err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	s.stdioSession = ss.id
	s.mu.Unlock()
	return s.mcpServer(ss.group), ss.id, nil
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}

func (m minLevel) WithGroup(n string) slog.Handler { return minLevel{m.Handler.WithGroup(n), m.min} }
