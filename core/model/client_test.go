package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/model/modeltest"
)

// newClient returns a client on srv with fast backoff; the waits between
// attempts are recorded, not slept.
func newClient(t *testing.T, srv *modeltest.Server, cfg model.ClientConfig) (*model.Client, *waits) {
	t.Helper()
	cfg.BaseURL = srv.URL()
	if cfg.Model == "" {
		cfg.Model = "policy-7b"
	}
	if cfg.InitialBackoff == 0 {
		cfg.InitialBackoff = time.Millisecond
		cfg.MaxBackoff = 4 * time.Millisecond
	}
	c, err := model.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{}
	model.SetSleep(c, w.sleep)
	return c, w
}

type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func ptr[T any](v T) *T { return &v }

func userReq(text string) *model.Request {
	return &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: text}}, Format: model.FormatNative}
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad expected JSON: %v\n%s", err, s)
	}
	return m
}

func TestRequestMapping(t *testing.T) {
	history := []model.Message{
		{Role: model.RoleSystem, Content: "You are an agent."},
		{Role: model.RoleUser, Content: "Cancel order 7."},
		{Role: model.RoleAssistant, Reasoning: "look it up first", ToolCalls: []model.ToolCall{
			{ID: "call_1", Type: "function", Function: model.FunctionCall{Name: "get_order", Arguments: `{"id":7}`}},
		}},
		{Role: model.RoleTool, ToolCallID: "call_1", Name: "get_order", Content: `{"status":"open"}`},
		{Role: model.RoleAssistant, Content: "It is open."},
	}
	tools := []model.Tool{{
		Name:        "get_order",
		Description: "Fetch an order.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"required":["id"]}`),
	}, {Name: "ping"}}
	historyJSON := `[
		{"role":"system","content":"You are an agent."},
		{"role":"user","content":"Cancel order 7."},
		{"role":"assistant","reasoning_content":"look it up first","tool_calls":[
			{"id":"call_1","type":"function","function":{"name":"get_order","arguments":"{\"id\":7}"}}]},
		{"role":"tool","tool_call_id":"call_1","name":"get_order","content":"{\"status\":\"open\"}"},
		{"role":"assistant","content":"It is open."}]`

	tests := []struct {
		name string
		cfg  model.ClientConfig
		req  *model.Request
		want string // the whole expected body
	}{{
		name: "native: history, tools, every sampling field",
		req: &model.Request{
			Messages: history, Tools: tools, Format: model.FormatNative,
			Sampling: model.Sampling{
				Temperature: ptr(0.7), TopP: ptr(0.95), MaxTokens: 256, Seed: ptr(int64(42)),
				Stop: []string{"</answer>", "\nUser:"}, Logprobs: true,
			},
		},
		want: `{"model":"policy-7b","messages":` + historyJSON + `,
			"tools":[
				{"type":"function","function":{"name":"get_order","description":"Fetch an order.",
					"parameters":{"type":"object","properties":{"id":{"type":"integer"},"a":{"type":"string"}},"required":["id"]}}},
				{"type":"function","function":{"name":"ping"}}],
			"temperature":0.7,"top_p":0.95,"max_tokens":256,"seed":42,"stop":["</answer>","\nUser:"],"logprobs":true}`,
	}, {
		name: "hermes: tools are not sent, unset sampling is left out",
		req:  &model.Request{Messages: history[:2], Tools: tools, Format: model.FormatHermes},
		want: `{"model":"policy-7b","messages":[
			{"role":"system","content":"You are an agent."},{"role":"user","content":"Cancel order 7."}]}`,
	}, {
		name: "temperature 0 is sent",
		req:  &model.Request{Messages: history[1:2], Format: model.FormatReAct, Sampling: model.Sampling{Temperature: ptr(0.0)}},
		want: `{"model":"policy-7b","messages":[{"role":"user","content":"Cancel order 7."}],"temperature":0}`,
	}, {
		name: "extra body and return_token_ids; extra body wins",
		cfg: model.ClientConfig{Model: "qwen", ReturnTokenIDs: true, ExtraBody: map[string]any{
			"top_k": 20, "chat_template_kwargs": map[string]any{"enable_thinking": false}, "max_tokens": 99,
		}},
		req: &model.Request{Messages: history[1:2], Sampling: model.Sampling{MaxTokens: 10}},
		want: `{"model":"qwen","messages":[{"role":"user","content":"Cancel order 7."}],
			"return_token_ids":true,"top_k":20,"chat_template_kwargs":{"enable_thinking":false},"max_tokens":99}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t)
			c, _ := newClient(t, srv, tt.cfg)
			if _, err := c.Generate(context.Background(), tt.req); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			if diff := cmp.Diff(decode(t, tt.want), reqs[0].Body); diff != "" {
				t.Errorf("request body (-want +got):\n%s\nraw: %s", diff, reqs[0].Raw)
			}
		})
	}
}

func TestToolSchemaKeyOrderKept(t *testing.T) {
	srv := modeltest.NewServer(t)
	c, _ := newClient(t, srv, model.ClientConfig{})
	schema := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"integer"}}}`
	req := userReq("hi")
	req.Tools = []model.Tool{{Name: "f", Parameters: json.RawMessage(schema)}}
	if _, err := c.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if raw := string(srv.Requests()[0].Raw); !strings.Contains(raw, `"parameters":`+schema) {
		t.Errorf("schema not sent byte for byte (a chat template renders it in this order):\n%s", raw)
	}
}

func TestAuthorization(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env-must-not-leak")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	srv := modeltest.NewServer(t)
	c, _ := newClient(t, srv, model.ClientConfig{})
	if _, err := c.Generate(context.Background(), userReq("a")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization without APIKey = %q, want none", got)
	}
	k, _ := newClient(t, srv, model.ClientConfig{APIKey: "sk-test"})
	if _, err := k.Generate(context.Background(), userReq("b")); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want %q", got, "Bearer sk-test")
	}
}

func TestResponseMapping(t *testing.T) {
	tests := []struct {
		name  string
		reply modeltest.Reply
		want  *model.Response
	}{{
		name:  "text with usage and model",
		reply: modeltest.Reply{Content: "Done.", Usage: model.Usage{PromptTokens: 31, CompletionTokens: 2}, Model: "qwen3-8b"},
		want: &model.Response{
			Message:      model.Message{Role: model.RoleAssistant, Content: "Done."},
			FinishReason: "stop", Usage: model.Usage{PromptTokens: 31, CompletionTokens: 2}, Model: "qwen3-8b",
		},
	}, {
		name: "tool calls with reasoning, arguments kept verbatim",
		reply: modeltest.Reply{Reasoning: "need the order", ToolCalls: []model.ToolCall{
			modeltest.ToolCall("call_a", "get_order", `{"id": 7}`),
			modeltest.ToolCall("call_b", "cancel", `{"id":7,`), // invalid JSON stays as written
		}},
		want: &model.Response{
			Message: model.Message{Role: model.RoleAssistant, Reasoning: "need the order", ToolCalls: []model.ToolCall{
				{ID: "call_a", Type: "function", Function: model.FunctionCall{Name: "get_order", Arguments: `{"id": 7}`}},
				{ID: "call_b", Type: "function", Function: model.FunctionCall{Name: "cancel", Arguments: `{"id":7,`}},
			}},
			FinishReason: "tool_calls", Model: modeltest.DefaultModel,
		},
	}, {
		name: "logprobs and token ids",
		reply: modeltest.Reply{Content: "Hi there", FinishReason: "length",
			Tokens: []string{"Hi", " there"}, Logprobs: []float64{-0.25, -1.5}, TokenIDs: []int64{13048, 1052}},
		want: &model.Response{
			Message:      model.Message{Role: model.RoleAssistant, Content: "Hi there"},
			FinishReason: "length", Model: modeltest.DefaultModel,
			Tokens: []string{"Hi", " there"}, Logprobs: []float64{-0.25, -1.5}, TokenIDs: []int64{13048, 1052},
		},
	}, {
		name: "arguments as a JSON object, reasoning field, content parts",
		reply: modeltest.Reply{Body: []byte(`{"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","reasoning":"r","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
			"tool_calls":[{"id":"c1","function":{"name":"f","arguments":{"x":1}}}]}}]}`)},
		want: &model.Response{
			Message: model.Message{Role: model.RoleAssistant, Content: "ab", Reasoning: "r", ToolCalls: []model.ToolCall{
				{ID: "c1", Type: "function", Function: model.FunctionCall{Name: "f", Arguments: `{"x":1}`}},
			}},
			FinishReason: "tool_calls", Model: "m",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.WithReplies(tt.reply))
			c, _ := newClient(t, srv, model.ClientConfig{ReturnTokenIDs: true})
			got, err := c.Generate(context.Background(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name    string
		replies []modeltest.Reply
		cfg     model.ClientConfig
		kind    model.ErrorKind
		status  int
		calls   int // requests the server saw = attempts
		message string
	}{{
		name:    "500 every time: server error after MaxRetries+1 attempts",
		replies: repeat(modeltest.Status(500, "engine crashed"), 4),
		cfg:     model.ClientConfig{MaxRetries: 3},
		kind:    model.KindServer, status: 500, calls: 4, message: "engine crashed",
	}, {
		name:    "503 with retries off",
		replies: repeat(modeltest.Status(503, "loading"), 1),
		cfg:     model.ClientConfig{MaxRetries: -1},
		kind:    model.KindServer, status: 503, calls: 1, message: "loading",
	}, {
		name:    "429 every time: rate limited",
		replies: repeat(modeltest.Status(429, "slow down"), 3),
		cfg:     model.ClientConfig{MaxRetries: 2},
		kind:    model.KindRateLimited, status: 429, calls: 3, message: "slow down",
	}, {
		name: "400 is not retried",
		replies: []modeltest.Reply{modeltest.Status(400,
			"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens.")},
		cfg:  model.ClientConfig{MaxRetries: 3},
		kind: model.KindBadRequest, status: 400, calls: 1, message: "maximum context length is 32768",
	}, {
		name:    "404 unknown model, vLLM's top-level error body",
		replies: []modeltest.Reply{{Status: 404, Body: []byte(`{"object":"error","message":"The model foo does not exist.","type":"NotFoundError","param":null,"code":404}`)}},
		kind:    model.KindBadRequest, status: 404, calls: 1, message: "The model foo does not exist.",
	}, {
		name:    "error body not JSON",
		replies: []modeltest.Reply{{Status: 422, Body: []byte("unprocessable")}},
		kind:    model.KindBadRequest, status: 422, calls: 1, message: "unprocessable",
	}, {
		name:    "garbage body is a bad response, not retried",
		replies: []modeltest.Reply{modeltest.Garbage()},
		cfg:     model.ClientConfig{MaxRetries: 3},
		kind:    model.KindBadResponse, status: 200, calls: 1, message: "not a chat completion",
	}, {
		name:    "no choices",
		replies: []modeltest.Reply{{NoChoices: true}},
		kind:    model.KindBadResponse, status: 200, calls: 1, message: "no choices",
	}, {
		name:    "tool call without a name",
		replies: []modeltest.Reply{modeltest.Calls(modeltest.ToolCall("c1", "", "{}"))},
		kind:    model.KindBadResponse, status: 200, calls: 1, message: "no function name",
	}, {
		name:    "slow beyond RequestTimeout: timeout, retried",
		replies: repeat(modeltest.Slow(10*time.Second, modeltest.Text("late")), 2),
		cfg:     model.ClientConfig{RequestTimeout: 50 * time.Millisecond, MaxRetries: 1},
		kind:    model.KindTimeout, calls: 2, message: "no answer within 50ms",
	}, {
		name:    "408 is a timeout",
		replies: repeat(modeltest.Status(408, "request timeout"), 2),
		cfg:     model.ClientConfig{MaxRetries: 1},
		kind:    model.KindTimeout, status: 408, calls: 2,
	}, {
		name:    "dropped connection: unavailable after retries",
		replies: repeat(modeltest.Drop(), 3),
		cfg:     model.ClientConfig{MaxRetries: 2},
		kind:    model.KindUnavailable, calls: 3,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.WithReplies(tt.replies...))
			c, w := newClient(t, srv, tt.cfg)
			resp, err := c.Generate(context.Background(), userReq("go"))
			if err == nil {
				t.Fatalf("Generate = %+v, want an error", resp)
			}
			var e *model.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %T %v is not a *model.Error", err, err)
			}
			if e.Kind != tt.kind || e.StatusCode != tt.status || e.Attempts != tt.calls {
				t.Errorf("got kind=%s status=%d attempts=%d, want %s %d %d (%v)",
					e.Kind, e.StatusCode, e.Attempts, tt.kind, tt.status, tt.calls, err)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("Message = %q, want it to contain %q", e.Message, tt.message)
			}
			if got := srv.Count(); got != tt.calls {
				t.Errorf("server saw %d requests, want %d", got, tt.calls)
			}
			if got := len(w.get()); got != tt.calls-1 {
				t.Errorf("waited %d times between attempts, want %d", got, tt.calls-1)
			}
			if e.Endpoint != srv.URL()+"/chat/completions" || !strings.Contains(err.Error(), e.Endpoint) ||
				!strings.Contains(err.Error(), string(tt.kind)) {
				t.Errorf("Error() = %q, want the endpoint and the kind", err)
			}
			if !model.IsInfra(err) {
				t.Errorf("IsInfra(%v) = false", err)
			}
		})
	}
}

func repeat(r modeltest.Reply, n int) []modeltest.Reply {
	out := make([]modeltest.Reply, n)
	for i := range out {
		out[i] = r
	}
	return out
}

func TestRetryThenSuccess(t *testing.T) {
	tests := []struct {
		name    string
		first   modeltest.Reply
		wantGap time.Duration // the recorded wait before attempt 2; 0 = the jittered backoff
	}{
		{"429 with Retry-After seconds", modeltest.Reply{Status: 429, ErrorMessage: "busy", Header: map[string]string{"Retry-After": "7"}}, 7 * time.Second},
		{"503 with Retry-After-Ms", modeltest.Reply{Status: 503, Header: map[string]string{"Retry-After-Ms": "1500"}}, 1500 * time.Millisecond},
		{"429 without Retry-After", modeltest.Status(429, "busy"), 0},
		{"500", modeltest.Status(500, "oops"), 0},
		{"dropped connection", modeltest.Drop(), 0},
		{"slow", modeltest.Slow(10*time.Second, modeltest.Text("late")), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := modeltest.NewServer(t, modeltest.WithReplies(tt.first, modeltest.Text("second time lucky")))
			c, w := newClient(t, srv, model.ClientConfig{MaxRetries: 3, RequestTimeout: 100 * time.Millisecond,
				InitialBackoff: 40 * time.Millisecond, MaxBackoff: time.Second})
			resp, err := c.Generate(context.Background(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "second time lucky" {
				t.Errorf("content = %q", resp.Message.Content)
			}
			if got := srv.Count(); got != 2 {
				t.Errorf("attempts = %d, want 2", got)
			}
			gaps := w.get()
			if len(gaps) != 1 {
				t.Fatalf("waits = %v, want one", gaps)
			}
			if tt.wantGap != 0 && gaps[0] != tt.wantGap {
				t.Errorf("wait = %v, want the Retry-After %v", gaps[0], tt.wantGap)
			}
			if tt.wantGap == 0 && (gaps[0] < 20*time.Millisecond || gaps[0] > 40*time.Millisecond) {
				t.Errorf("wait = %v, want the jittered InitialBackoff in [20ms, 40ms]", gaps[0])
			}
		})
	}
}

func TestBackoffGrows(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithReplies(repeat(modeltest.Status(502, "bad gateway"), 5)...))
	c, w := newClient(t, srv, model.ClientConfig{MaxRetries: 4, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond})
	_, err := c.Generate(context.Background(), userReq("go"))
	if model.KindOf(err) != model.KindServer {
		t.Fatalf("err = %v, want server", err)
	}
	caps := []time.Duration{100, 200, 300, 300}
	gaps := w.get()
	if len(gaps) != len(caps) {
		t.Fatalf("waits = %v, want %d", gaps, len(caps))
	}
	for i, g := range gaps {
		c := caps[i] * time.Millisecond
		if g < c/2 || g > c {
			t.Errorf("wait %d = %v, want in [%v, %v]", i+1, g, c/2, c)
		}
	}
}

func TestServerClosed(t *testing.T) {
	srv := modeltest.NewServer(t)
	c, w := newClient(t, srv, model.ClientConfig{MaxRetries: 2})
	if _, err := c.Generate(context.Background(), userReq("alive")); err != nil {
		t.Fatalf("before Close: %v", err)
	}
	srv.Close()
	_, err := c.Generate(context.Background(), userReq("dead"))
	var e *model.Error
	if !errors.As(err, &e) || e.Kind != model.KindUnavailable || e.Attempts != 3 || e.StatusCode != 0 {
		t.Fatalf("err = %#v, want unavailable after 3 attempts", err)
	}
	if e.Err == nil {
		t.Error("Err is nil, want the transport error")
	}
	if len(w.get()) != 2 {
		t.Errorf("waits = %v, want 2", w.get())
	}
	if srv.Count() != 1 {
		t.Errorf("server count = %d, want 1", srv.Count())
	}
}

func TestCanceled(t *testing.T) {
	t.Run("ctx canceled during a slow answer", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Slow(time.Minute, modeltest.Text("late"))))
		c, w := newClient(t, srv, model.ClientConfig{MaxRetries: 3})
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			for srv.Count() == 0 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		_, err := c.Generate(ctx, userReq("go"))
		var e *model.Error
		if !errors.As(err, &e) || e.Kind != model.KindCanceled || e.Attempts != 1 {
			t.Fatalf("err = %v, want canceled after 1 attempt", err)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("errors.Is(err, context.Canceled) = false for %v", err)
		}
		if len(w.get()) != 0 {
			t.Errorf("waits = %v, want none: a canceled call is not retried", w.get())
		}
	})
	t.Run("ctx already canceled", func(t *testing.T) {
		srv := modeltest.NewServer(t)
		c, _ := newClient(t, srv, model.ClientConfig{})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Generate(ctx, userReq("go"))
		if e := (*model.Error)(nil); !errors.As(err, &e) || e.Kind != model.KindCanceled || e.Attempts != 0 {
			t.Fatalf("err = %v, want canceled, 0 attempts", err)
		}
		if srv.Count() != 0 {
			t.Errorf("server saw %d requests", srv.Count())
		}
	})
	t.Run("ctx deadline during the backoff", func(t *testing.T) {
		srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Status(500, "x")))
		c, err := model.NewClient(model.ClientConfig{BaseURL: srv.URL(), Model: "m", InitialBackoff: time.Hour, MaxBackoff: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err = c.Generate(ctx, userReq("go"))
		if e := (*model.Error)(nil); !errors.As(err, &e) || e.Kind != model.KindCanceled || e.Attempts != 1 {
			t.Fatalf("err = %v, want canceled after 1 attempt", err)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errors.Is(err, context.DeadlineExceeded) = false for %v", err)
		}
	})
}

func TestConcurrencyCap(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(modeltest.Request) modeltest.Reply {
		return modeltest.Slow(20*time.Millisecond, modeltest.Text("ok"))
	}))
	c, _ := newClient(t, srv, model.ClientConfig{MaxConcurrency: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := c.Generate(context.Background(), userReq("go")); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if srv.Count() != 8 {
		t.Errorf("server saw %d requests, want 8", srv.Count())
	}
	if got := srv.MaxInFlight(); got > 2 || got < 1 {
		t.Errorf("max in flight = %d, want 1..2 with MaxConcurrency 2", got)
	}
}

func TestSlotWaitRespectsCtx(t *testing.T) {
	release := make(chan struct{})
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(modeltest.Request) modeltest.Reply {
		<-release
		return modeltest.Text("ok")
	}))
	c, _ := newClient(t, srv, model.ClientConfig{MaxConcurrency: 1})
	first := make(chan error, 1)
	go func() {
		_, err := c.Generate(context.Background(), userReq("holds the slot"))
		first <- err
	}()
	for srv.Count() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Generate(ctx, userReq("waits"))
	if e := (*model.Error)(nil); !errors.As(err, &e) || e.Kind != model.KindCanceled || e.Attempts != 0 {
		t.Errorf("err = %v, want canceled with 0 attempts", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("errors.Is(err, DeadlineExceeded) = false for %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first call: %v", err)
	}
	if srv.Count() != 1 {
		t.Errorf("server saw %d requests, want 1", srv.Count())
	}
}

func TestBadRequestBeforeSending(t *testing.T) {
	srv := modeltest.NewServer(t)
	c, _ := newClient(t, srv, model.ClientConfig{})
	tests := []struct {
		name string
		req  *model.Request
		msg  string
	}{
		{"nil", nil, "nil request"},
		{"no messages", &model.Request{}, "no messages"},
		{"unknown role", &model.Request{Messages: []model.Message{{Role: "narrator", Content: "x"}}}, `unknown role "narrator"`},
		{"schema not JSON", &model.Request{Messages: []model.Message{{Role: "user"}}, Format: model.FormatNative,
			Tools: []model.Tool{{Name: "f", Parameters: json.RawMessage(`{nope`)}}}, "not valid JSON"},
	}
	for _, tt := range tests {
		_, err := c.Generate(context.Background(), tt.req)
		var e *model.Error
		if !errors.As(err, &e) || e.Kind != model.KindBadRequest || e.Attempts != 0 || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("%s: err = %v, want bad_request with 0 attempts mentioning %q", tt.name, err, tt.msg)
		}
	}
	if srv.Count() != 0 {
		t.Errorf("server saw %d requests, want 0", srv.Count())
	}
}

func TestErrorHelpers(t *testing.T) {
	e := &model.Error{Kind: model.KindRateLimited, Endpoint: "http://h/v1/chat/completions", StatusCode: http.StatusTooManyRequests,
		Attempts: 3, Message: "slow down"}
	if got, want := e.Error(), "model: http://h/v1/chat/completions: rate_limited (HTTP 429) after 3 attempts: slow down"; got != want {
		t.Errorf("Error() = %q\nwant      %q", got, want)
	}
	wrapped := errors.Join(errors.New("episode 4"), e)
	if !model.IsInfra(wrapped) || model.KindOf(wrapped) != model.KindRateLimited {
		t.Errorf("IsInfra/KindOf through a wrap failed")
	}
	if !errors.Is(wrapped, &model.Error{Kind: model.KindRateLimited}) || errors.Is(wrapped, &model.Error{Kind: model.KindServer}) {
		t.Errorf("errors.Is by kind wrong")
	}
	if model.IsInfra(errors.New("plain")) || model.IsInfra(nil) || model.KindOf(nil) != "" {
		t.Errorf("IsInfra/KindOf of non-*Error wrong")
	}
	for k, want := range map[model.ErrorKind]bool{
		model.KindUnavailable: true, model.KindTimeout: true, model.KindRateLimited: true, model.KindServer: true,
		model.KindBadRequest: false, model.KindBadResponse: false, model.KindCanceled: false,
	} {
		if k.Retryable() != want {
			t.Errorf("%s.Retryable() = %v", k, !want)
		}
	}
}

func TestServerDiesMidRequest(t *testing.T) {
	// The retry may reach the server before its listener is closed: it
	// must not get an answer either (a dropped connection), so both ways it
	// ends unavailable.
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Slow(time.Minute, modeltest.Text("never")), modeltest.Drop()))
	c, w := newClient(t, srv, model.ClientConfig{MaxRetries: 1})
	go func() {
		for srv.Count() == 0 {
			time.Sleep(time.Millisecond)
		}
		srv.Close()
	}()
	_, err := c.Generate(context.Background(), userReq("go"))
	if e := (*model.Error)(nil); !errors.As(err, &e) || e.Kind != model.KindUnavailable || e.Attempts != 2 {
		t.Fatalf("err = %v, want unavailable after 2 attempts", err)
	}
	if len(w.get()) != 1 {
		t.Errorf("waits = %v, want 1", w.get())
	}
}

// TestNotFoundWithoutVersionPath: a base_url without /v1 makes the client
// post to /chat/completions, which the server does not serve: the 404 says
// the base_url lacks its version path and what to try; a 404 under a
// versioned base_url (an unknown model) does not.
func TestNotFoundWithoutVersionPath(t *testing.T) {
	srv := modeltest.NewServer(t)
	root := strings.TrimSuffix(srv.URL(), "/v1")
	c, err := model.NewClient(model.ClientConfig{BaseURL: root, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Generate(context.Background(), userReq("hello"))
	var me *model.Error
	if !errors.As(err, &me) || me.StatusCode != 404 || me.Kind != model.KindBadRequest {
		t.Fatalf("err = %v, want a 404 bad request", err)
	}
	want := "; base_url \"" + root + "\" has no version path: the client posts to " + root +
		"/chat/completions; OpenAI-compatible servers serve it under /v1 (try \"" + root + "/v1\")"
	if !strings.HasSuffix(me.Message, want) {
		t.Errorf("message %q lacks %q", me.Message, want)
	}
	srv404 := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Reply{Status: 404,
		Body: []byte(`{"object":"error","message":"The model foo does not exist.","code":404}`)}))
	c, _ = newClient(t, srv404, model.ClientConfig{MaxRetries: -1})
	_, err = c.Generate(context.Background(), userReq("hello"))
	if !errors.As(err, &me) || me.Message != "The model foo does not exist." {
		t.Errorf("versioned base_url 404: %v", err)
	}
}
