// Package modeltest runs a local OpenAI-compatible chat-completions server
// for tests: each request is answered by a programmable Reply (content,
// tool calls, logprobs and token ids, an HTTP error with a body and
// headers, a slow answer, a garbage body, a dropped connection), and every
// request body is recorded for assertions. GET /v1/models lists
// DefaultModel, or the ids of WithModels.
package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/model"
)

// DefaultModel is the model name the server reports when a Reply sets none.
const DefaultModel = "modeltest-model"

// Reply is how the server answers one chat-completions request. The zero
// Reply is a 200 with empty content and finish_reason "stop".
type Reply struct {
	// Status is the HTTP status; 0 = 200. For a status >= 400 the body is
	// {"error":{"message":ErrorMessage,"type":...,"code":Status}} unless
	// Body is set.
	Status       int
	ErrorMessage string
	// Header is added to the response (e.g. "Retry-After": "2").
	Header map[string]string
	// Delay is waited before answering; the wait ends early, with no
	// answer, when the request's context ends (client timeout, cancel,
	// Close).
	Delay time.Duration
	// Drop hijacks the connection and closes it without an answer.
	Drop bool
	// Body, when not nil, is sent verbatim as the response body (with
	// Content-Type application/json), replacing the generated one: use it
	// for garbage.
	Body []byte

	// Completion fields (status < 400 and Body nil).
	Content   string
	Reasoning string // sent as the message's "reasoning_content"
	ToolCalls []model.ToolCall
	// FinishReason; "" = "tool_calls" when ToolCalls is set, else "stop".
	FinishReason string
	// Tokens and Logprobs (same length) fill choice.logprobs.content.
	Tokens   []string
	Logprobs []float64
	// TokenIDs fill the choice's "token_ids" (vLLM's return_token_ids).
	TokenIDs []int64
	Usage    model.Usage
	Model    string // "" = DefaultModel
	// NoChoices sends "choices": [].
	NoChoices bool
}

// Text is a 200 reply with content.
func Text(content string) Reply { return Reply{Content: content} }

// Calls is a 200 reply with tool calls (finish_reason "tool_calls").
func Calls(calls ...model.ToolCall) Reply { return Reply{ToolCalls: calls} }

// ToolCall builds a function tool call.
func ToolCall(id, name, arguments string) model.ToolCall {
	return model.ToolCall{ID: id, Type: "function", Function: model.FunctionCall{Name: name, Arguments: arguments}}
}

// Status is an error reply with an OpenAI-style error body.
func Status(code int, message string) Reply { return Reply{Status: code, ErrorMessage: message} }

// Garbage is a 200 whose body is not JSON.
func Garbage() Reply { return Reply{Body: []byte("<html>not json")} }

// Drop is a reply that closes the connection without answering.
func Drop() Reply { return Reply{Drop: true} }

// Slow is r answered after d.
func Slow(d time.Duration, r Reply) Reply { r.Delay = d; return r }

// Request is one recorded chat-completions request.
type Request struct {
	// N is the request's 1-based arrival number.
	N int
	// Body is the decoded JSON request body (nil when it was not JSON).
	Body map[string]any
	// Raw is the request body as received.
	Raw    []byte
	Header http.Header
}

// Messages returns Body["messages"] as a slice of objects.
func (c Request) Messages() []map[string]any { return objects(c.Body["messages"]) }

// Tools returns Body["tools"] as a slice of objects (nil when absent).
func (c Request) Tools() []map[string]any { return objects(c.Body["tools"]) }

func objects(v any) []map[string]any {
	list, _ := v.([]any)
	var out []map[string]any
	for _, x := range list {
		m, _ := x.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Option configures NewServer.
type Option func(*Server)

// WithReplies queues replies, answered in order; once the queue is empty
// the server answers with the handler (WithHandler) or Text("ok").
func WithReplies(replies ...Reply) Option {
	return func(s *Server) { s.queue = append(s.queue, replies...) }
}

// WithHandler answers every request the queue does not: f gets the
// recorded request and returns the reply. f may be called concurrently.
func WithHandler(f func(Request) Reply) Option {
	return func(s *Server) { s.handler = f }
}

// WithModels sets the ids GET /v1/models lists (default: DefaultModel).
func WithModels(ids ...string) Option {
	return func(s *Server) { s.models = ids }
}

// Server is a running fake endpoint. Its methods are safe for concurrent
// use.
type Server struct {
	srv     *httptest.Server
	handler func(Request) Reply
	models  []string

	mu    sync.Mutex
	queue []Reply
	reqs  []Request

	n           atomic.Int64
	inFlight    atomic.Int64
	maxInFlight atomic.Int64
	closeOnce   sync.Once
}

// NewServer starts a server and registers Close with t.Cleanup.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := &Server{}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

// URL is the API root to use as a client's BaseURL, e.g.
// "http://127.0.0.1:41234/v1".
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Push queues more replies.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	s.queue = append(s.queue, replies...)
	s.mu.Unlock()
}

// Requests returns the chat-completions requests received so far, in
// arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Count is how many chat-completions requests arrived.
func (s *Server) Count() int { return int(s.n.Load()) }

// MaxInFlight is the largest number of chat-completions requests the server
// was handling at the same time.
func (s *Server) MaxInFlight() int { return int(s.maxInFlight.Load()) }

// Close stops the server: open connections are closed, handlers waiting in
// a Delay return, and later requests get connection refused. It is safe to
// call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

func (s *Server) next(c Request) Reply {
	s.mu.Lock()
	if len(s.queue) > 0 {
		r := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return r
	}
	s.mu.Unlock()
	if s.handler != nil {
		return s.handler(c)
	}
	return Text("ok")
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	cur := s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	for {
		m := s.maxInFlight.Load()
		if cur <= m || s.maxInFlight.CompareAndSwap(m, cur) {
			break
		}
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	c := Request{N: int(s.n.Add(1)), Raw: raw, Header: r.Header.Clone()}
	if json.Unmarshal(raw, &c.Body) != nil {
		c.Body = nil
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, c)
	s.mu.Unlock()

	rep := s.next(c)
	if rep.Delay > 0 {
		t := time.NewTimer(rep.Delay)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	if rep.Drop {
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("modeltest: response writer cannot hijack")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	status := rep.Status
	if status == 0 {
		status = http.StatusOK
	}
	var body []byte
	switch {
	case rep.Body != nil:
		body = rep.Body
	case status >= 400:
		body, _ = json.Marshal(map[string]any{"error": map[string]any{
			"message": rep.ErrorMessage, "type": http.StatusText(status), "code": status,
		}})
	default:
		body = completion(c.N, rep)
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func completion(n int, rep Reply) []byte {
	msg := map[string]any{"role": "assistant", "content": rep.Content}
	if rep.Content == "" && len(rep.ToolCalls) > 0 {
		msg["content"] = nil
	}
	if rep.Reasoning != "" {
		msg["reasoning_content"] = rep.Reasoning
	}
	if len(rep.ToolCalls) > 0 {
		msg["tool_calls"] = rep.ToolCalls
	}
	finish := rep.FinishReason
	if finish == "" {
		finish = "stop"
		if len(rep.ToolCalls) > 0 {
			finish = "tool_calls"
		}
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": finish, "logprobs": nil}
	if len(rep.Tokens) > 0 {
		content := make([]map[string]any, len(rep.Tokens))
		for i, tok := range rep.Tokens {
			lp := 0.0
			if i < len(rep.Logprobs) {
				lp = rep.Logprobs[i]
			}
			content[i] = map[string]any{"token": tok, "logprob": lp, "bytes": []byte(nil), "top_logprobs": []any{}}
		}
		choice["logprobs"] = map[string]any{"content": content}
	}
	if rep.TokenIDs != nil {
		choice["token_ids"] = rep.TokenIDs
	}
	choices := []any{choice}
	if rep.NoChoices {
		choices = []any{}
	}
	mdl := rep.Model
	if mdl == "" {
		mdl = DefaultModel
	}
	b, err := json.Marshal(map[string]any{
		"id":      fmt.Sprintf("chatcmpl-%d", n),
		"object":  "chat.completion",
		"created": 1700000000 + n,
		"model":   mdl,
		"choices": choices,
		"usage": map[string]any{
			"prompt_tokens":     rep.Usage.PromptTokens,
			"completion_tokens": rep.Usage.CompletionTokens,
			"total_tokens":      rep.Usage.PromptTokens + rep.Usage.CompletionTokens,
		},
	})
	if err != nil {
		panic(err)
	}
	return b
}

func (s *Server) listModels(w http.ResponseWriter, _ *http.Request) {
	ids := s.models
	if ids == nil {
		ids = []string{DefaultModel}
	}
	data := []any{}
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 1700000000, "owned_by": "modeltest"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}
