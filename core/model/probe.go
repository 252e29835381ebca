package model

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
)

// DefaultProbeTimeout bounds each request of Probe when ctx has no
// earlier deadline.
const DefaultProbeTimeout = 30 * time.Second

// ProbeResult is what Probe found out about an endpoint.
type ProbeResult struct {
	// ModelsURL is the models-list URL asked (BaseURL + "/models").
	ModelsURL string
	// Models are the model ids GET ModelsURL listed, in its order; nil
	// when the endpoint has no models list (404 or 405 under a versioned
	// base URL).
	Models []string
	// Listed reports whether ClientConfig.Model is among Models.
	Listed bool
	// Generated reports that a one-token chat completion was sent (the
	// endpoint has no models list, or does not list the model) and
	// answered.
	Generated bool
}

// Probe checks, before any episode depends on it, that the endpoint
// answers and serves ClientConfig.Model. It asks GET BaseURL/models (with
// the API key); when that lists the model, it is done. When the endpoint
// has no models list, or lists other models only (a proxy may serve
// aliases it does not list), it sends one chat completion of at most one
// token to Endpoint() and accepts any answer. Each request is one attempt
// (no retries) bounded by DefaultProbeTimeout or ctx.
//
// Every error is an *Error: KindUnavailable (cannot connect), KindTimeout,
// KindBadRequest (a 4xx: 401/403 for the API key; 404 from a base URL
// without a version path carries the hint "has no version path ... (try
// .../v1)"; a model the endpoint does not serve names the models it
// lists), KindServer (5xx), KindBadResponse (a models list that is not
// JSON), KindCanceled.
func (c *Client) Probe(ctx context.Context) (*ProbeResult, error) {
	res := &ProbeResult{ModelsURL: strings.TrimRight(c.cfg.BaseURL, "/") + "/models"}
	models, status, err := c.listModels(ctx, res.ModelsURL)
	if err != nil {
		return res, err
	}
	switch {
	case status == http.StatusOK:
		res.Models = models
		if slices.Contains(models, c.cfg.Model) {
			res.Listed = true
			return res, nil
		}
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		if hint := notFoundHint(http.StatusNotFound, c.cfg.BaseURL); hint != "" {
			return res, &Error{Kind: KindBadRequest, Endpoint: res.ModelsURL, StatusCode: status, Attempts: 1, Message: hint}
		}
	}
	// No models list, or a list without the model: one short generation.
	body, err := c.encodeRequest(&Request{Messages: []Message{{Role: RoleUser, Content: "ping"}}, Sampling: Sampling{MaxTokens: 1}})
	if err != nil {
		return res, &Error{Kind: KindBadRequest, Endpoint: c.endpoint, Message: err.Error(), Err: err}
	}
	pctx, cancel := probeContext(ctx)
	defer cancel()
	if _, fail := c.attempt(pctx, body); fail != nil {
		fail.Endpoint, fail.Attempts = c.endpoint, 1
		if ctx.Err() != nil {
			return res, c.canceled(ctx, 1)
		}
		if fail.Kind == KindCanceled || fail.Kind == KindTimeout && pctx.Err() != nil {
			fail.Kind, fail.Message = KindTimeout, "no answer within "+probeTimeout(ctx).String()
		}
		if res.Models != nil {
			fail.Message = fmt.Sprintf("model %q is not among the %d models %s lists (%s), and a one-token request for it failed: %s",
				c.cfg.Model, len(res.Models), res.ModelsURL, shortList(res.Models), fail.Error.messageText())
		}
		return res, fail.Error
	}
	res.Generated = true
	return res, nil
}

// listModels is GET url: the ids of a 200's OpenAI models list, and the
// status. A status other than 200, 404 and 405 is an *Error.
func (c *Client) listModels(ctx context.Context, url string) ([]string, int, error) {
	pctx, cancel := probeContext(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(pctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, &Error{Kind: KindBadRequest, Endpoint: url, Message: err.Error(), Err: err}
	}
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	res, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, 0, c.canceled(ctx, 1)
		case pctx.Err() != nil:
			return nil, 0, &Error{Kind: KindTimeout, Endpoint: url, Attempts: 1, Message: "no answer within " + probeTimeout(ctx).String(), Err: err}
		}
		return nil, 0, &Error{Kind: KindUnavailable, Endpoint: url, Attempts: 1, Err: err}
	}
	defer res.Body.Close()
	switch res.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return nil, res.StatusCode, nil
	default:
		f := statusFailure(res, nil)
		f.Endpoint, f.Attempts = url, 1
		return nil, res.StatusCode, f.Error
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return nil, 0, &Error{Kind: KindUnavailable, Endpoint: url, StatusCode: res.StatusCode, Attempts: 1, Err: err}
	}
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &list); err != nil || list.Data == nil {
		msg := "not an OpenAI models list ({\"data\": [{\"id\": ...}]})"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, 0, &Error{Kind: KindBadResponse, Endpoint: url, StatusCode: res.StatusCode, Attempts: 1, Message: msg, Err: err}
	}
	ids := make([]string, 0, len(list.Data))
	for _, m := range list.Data {
		ids = append(ids, m.ID)
	}
	return ids, http.StatusOK, nil
}

// probeContext bounds one probe request by DefaultProbeTimeout unless ctx
// ends earlier.
func probeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, DefaultProbeTimeout)
}

func probeTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Deadline(); ok && time.Until(d) < DefaultProbeTimeout {
		return time.Until(d).Round(time.Millisecond)
	}
	return DefaultProbeTimeout
}

// messageText is e's message, or its cause's text.
func (e *Error) messageText() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return string(e.Kind)
}

// shortList quotes the first few ids of a list.
func shortList(ids []string) string {
	const n = 5
	q := make([]string, 0, n)
	for i, id := range ids {
		if i == n {
			q = append(q, fmt.Sprintf("and %d more", len(ids)-n))
			break
		}
		q = append(q, fmt.Sprintf("%q", id))
	}
	if len(q) == 0 {
		return "none"
	}
	return strings.Join(q, ", ")
}
