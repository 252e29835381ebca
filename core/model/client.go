package model

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// Defaults applied by NewClient to zero ClientConfig fields.
const (
	DefaultRequestTimeout = 10 * time.Minute
	DefaultMaxRetries     = 3
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	// MaxRetryAfter caps how long a Retry-After header can make the client
	// wait before one retry.
	MaxRetryAfter = 2 * time.Minute
)

// ClientConfig configures a Client. Zero fields take the defaults above.
type ClientConfig struct {
	// BaseURL is the OpenAI-compatible API root, including the version
	// path, e.g. "http://127.0.0.1:8000/v1". Required. The client POSTs to
	// BaseURL + "/chat/completions".
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" when not empty. The
	// client never reads OPENAI_API_KEY or any other environment variable.
	APIKey string
	// Model is the "model" field of every request. Required.
	Model string
	// RequestTimeout bounds each attempt (not the whole call with its
	// retries; bound that with ctx). 0 = DefaultRequestTimeout, negative =
	// no per-attempt timeout.
	RequestTimeout time.Duration
	// MaxRetries is how many times a retryable failure (ErrorKind.Retryable)
	// is retried, so a call makes at most MaxRetries+1 attempts.
	// 0 = DefaultMaxRetries, negative = no retries.
	MaxRetries int
	// InitialBackoff is the wait before the first retry; it doubles each
	// retry up to MaxBackoff. Each wait is jittered to a uniform value in
	// [w/2, w]. 0 = DefaultInitialBackoff / DefaultMaxBackoff.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxConcurrency is a hard cap on this Client's HTTP requests in
	// flight at once; callers beyond it wait for a slot (the wait ends with
	// KindCanceled when ctx ends). A slot is held for one attempt, not
	// across the backoff between attempts. 0 = no cap.
	MaxConcurrency int
	// HTTPClient sends the requests. Nil = a client whose transport keeps
	// up to max(MaxConcurrency, 64) idle connections to the endpoint.
	HTTPClient *http.Client
	// Logger receives retry warnings and per-attempt debug records. Nil =
	// discard.
	Logger *slog.Logger
	// ExtraBody is merged into every request body's top-level object after
	// the fields the client sets, and wins over them on a key clash; use it
	// for server options such as vLLM's "top_k", "repetition_penalty" or
	// "chat_template_kwargs". Values must encode with encoding/json.
	ExtraBody map[string]any
	// ReturnTokenIDs sends vLLM's "return_token_ids": true and fills
	// Response.TokenIDs from the choice's "token_ids".
	ReturnTokenIDs bool
}

// Client is a Policy backed by an OpenAI-compatible chat-completions
// endpoint (vLLM, SGLang, Ollama, llama.cpp server, OpenAI). It is safe for
// concurrent use.
//
// Requests go through github.com/openai/openai-go/v3 with the library's own
// retries turned off (option.WithMaxRetries(0)): the Client runs the retry
// loop itself so that the backoff is configurable (InitialBackoff,
// MaxBackoff), 429/5xx/timeouts/connection errors are told apart in the
// returned *Error, Attempts is exact, and the concurrency slot is released
// while waiting between attempts. Responses are decoded by the Client from
// the raw body so that server extensions (reasoning_content, token_ids) and
// tool-call arguments sent as a JSON object rather than a string are kept.
type Client struct {
	cfg      ClientConfig
	endpoint string
	svc      openai.ChatCompletionService
	sem      chan struct{}
	log      *slog.Logger
	// sleep waits d or until ctx ends; replaced in tests.
	sleep func(ctx context.Context, d time.Duration) error
}

var _ Policy = (*Client)(nil)

// NewClient checks cfg, fills its defaults and returns a Client. It makes
// no network call. It fails (a plain error, not *Error) when BaseURL is not
// an absolute http(s) URL or Model is empty.
func NewClient(cfg ClientConfig) (*Client, error) {
	if cfg.Model == "" {
		return nil, errors.New("model: ClientConfig.Model is required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model: ClientConfig.BaseURL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = DefaultInitialBackoff
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = DefaultMaxBackoff
	}
	if cfg.MaxBackoff < cfg.InitialBackoff {
		cfg.MaxBackoff = cfg.InitialBackoff
	}
	if cfg.HTTPClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = max(cfg.MaxConcurrency, 64)
		tr.MaxIdleConns = max(tr.MaxIdleConns, tr.MaxIdleConnsPerHost)
		cfg.HTTPClient = &http.Client{Transport: tr}
	}
	c := &Client{
		cfg:      cfg,
		endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions",
		log:      cfg.Logger,
		sleep:    sleepCtx,
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxConcurrency > 0 {
		c.sem = make(chan struct{}, cfg.MaxConcurrency)
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	c.svc = openai.NewChatCompletionService(opts...)
	return c, nil
}

// Endpoint is the chat-completions URL the client posts to.
func (c *Client) Endpoint() string { return c.endpoint }

// Generate sends req to the endpoint and returns the first choice. Every
// error is an *Error (see ErrorKind); retryable kinds are retried up to
// MaxRetries times with jittered exponential backoff, or after the
// endpoint's Retry-After (seconds or an HTTP date, capped at MaxRetryAfter)
// when a 429 or 5xx carries one.
func (c *Client) Generate(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, &Error{Kind: KindBadRequest, Endpoint: c.endpoint, Message: "nil request"}
	}
	body, err := c.encodeRequest(req)
	if err != nil {
		return nil, &Error{Kind: KindBadRequest, Endpoint: c.endpoint, Message: err.Error(), Err: err}
	}
	for attempt := 1; ; attempt++ {
		if err := c.acquire(ctx); err != nil {
			return nil, c.canceled(ctx, attempt-1)
		}
		start := time.Now()
		resp, fail := c.attempt(ctx, body)
		c.release()
		if fail == nil {
			c.log.Debug("model: generated", "endpoint", c.endpoint, "episode", req.EpisodeID,
				"attempt", attempt, "ms", time.Since(start).Milliseconds(), "finish", resp.FinishReason)
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, c.canceled(ctx, attempt)
		}
		fail.Endpoint = c.endpoint
		fail.Attempts = attempt
		if !fail.Kind.Retryable() || attempt > c.cfg.MaxRetries {
			return nil, fail.Error
		}
		wait := c.backoff(attempt, fail.retryAfter)
		c.log.Warn("model: retrying", "endpoint", c.endpoint, "episode", req.EpisodeID,
			"attempt", attempt, "kind", string(fail.Kind), "status", fail.StatusCode,
			"wait_ms", wait.Milliseconds(), "err", fail.Error.Error())
		if err := c.sleep(ctx, wait); err != nil {
			return nil, c.canceled(ctx, attempt)
		}
	}
}

func (c *Client) canceled(ctx context.Context, attempts int) *Error {
	err := ctx.Err()
	if err == nil {
		err = context.Canceled
	}
	return &Error{Kind: KindCanceled, Endpoint: c.endpoint, Attempts: attempts, Err: err}
}

func (c *Client) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.sem == nil {
		return nil
	}
	select {
	case c.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) release() {
	if c.sem != nil {
		<-c.sem
	}
}

// failure is one failed attempt: the *Error to return plus what the retry
// loop needs.
type failure struct {
	*Error
	retryAfter time.Duration // from the Retry-After header; 0 = none
}

// attempt makes one HTTP call.
func (c *Client) attempt(ctx context.Context, body []byte) (*Response, *failure) {
	actx := ctx
	if c.cfg.RequestTimeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
	}
	var raw []byte
	var httpRes *http.Response
	_, err := c.svc.New(actx, openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", body),
		option.WithResponseBodyInto(&raw),
		option.WithResponseInto(&httpRes),
	)
	if err == nil {
		resp, derr := decodeResponse(raw)
		if derr != nil {
			status := 0
			if httpRes != nil {
				status = httpRes.StatusCode
			}
			return nil, &failure{Error: &Error{Kind: KindBadResponse, StatusCode: status, Message: derr.Error(), Err: derr}}
		}
		return resp, nil
	}
	if ctx.Err() != nil {
		return nil, &failure{Error: &Error{Kind: KindCanceled, Err: ctx.Err()}}
	}
	if httpRes != nil && httpRes.StatusCode >= 400 {
		f := statusFailure(httpRes, err)
		if hint := notFoundHint(httpRes.StatusCode, c.cfg.BaseURL); hint != "" {
			f.Message += "; " + hint
		}
		return nil, f
	}
	if actx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return nil, &failure{Error: &Error{Kind: KindTimeout,
			Message: fmt.Sprintf("no answer within %v", c.cfg.RequestTimeout), Err: err}}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil, &failure{Error: &Error{Kind: KindTimeout, Err: err}}
	}
	return nil, &failure{Error: &Error{Kind: KindUnavailable, Err: err}}
}

// notFoundHint explains a 404 from a base URL whose path has no version
// segment ("http://host:8000" instead of "http://host:8000/v1"): the
// client posts to BaseURL + "/chat/completions", which such servers (vLLM,
// SGLang, Ollama, llama.cpp) serve only under /v1. "" otherwise.
func notFoundHint(status int, baseURL string) string {
	if status != http.StatusNotFound {
		return ""
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return ""
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if len(seg) >= 2 && seg[0] == 'v' && strings.Trim(seg[1:], "0123456789") == "" {
			return ""
		}
	}
	return fmt.Sprintf("base_url %q has no version path: the client posts to %s/chat/completions; OpenAI-compatible servers serve it under /v1 (try %q)",
		baseURL, strings.TrimRight(baseURL, "/"), strings.TrimRight(baseURL, "/")+"/v1")
}

// statusFailure maps an HTTP error status to a failure.
func statusFailure(res *http.Response, err error) *failure {
	f := &failure{Error: &Error{StatusCode: res.StatusCode, Err: err}}
	switch code := res.StatusCode; {
	case code == http.StatusTooManyRequests:
		f.Kind = KindRateLimited
	case code == http.StatusRequestTimeout:
		f.Kind = KindTimeout
	case code >= 500:
		f.Kind = KindServer
	default:
		f.Kind = KindBadRequest
	}
	var aerr *openai.Error
	if errors.As(err, &aerr) && aerr.Message != "" {
		f.Message = aerr.Message
	} else {
		f.Message = errorBodyMessage(res)
	}
	if f.Message == "" {
		f.Message = http.StatusText(res.StatusCode)
	}
	if f.Kind.Retryable() {
		f.retryAfter = parseRetryAfter(res.Header, time.Now())
	}
	return f
}

// parseRetryAfter reads "retry-after-ms" (milliseconds, an OpenAI
// extension) or "Retry-After" (seconds or an HTTP date), capped at
// MaxRetryAfter; 0 when absent or unparseable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	var d time.Duration
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	}
	if v := strings.TrimSpace(h.Get("Retry-After")); d == 0 && v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			if s > 0 {
				d = time.Duration(s * float64(time.Second))
			}
		} else if t, err := http.ParseTime(v); err == nil {
			d = t.Sub(now)
		}
	}
	if d < 0 {
		d = 0
	}
	return min(d, MaxRetryAfter)
}

// backoff is the wait after failed attempt n (1-based): the Retry-After
// when given, else InitialBackoff*2^(n-1) capped at MaxBackoff and jittered
// to [w/2, w].
func (c *Client) backoff(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	w := c.cfg.InitialBackoff
	for i := 1; i < n && w < c.cfg.MaxBackoff; i++ {
		w *= 2
	}
	w = min(w, c.cfg.MaxBackoff)
	half := w / 2
	return half + rand.N(w-half+1)
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
