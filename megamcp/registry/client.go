package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/weft-dev/weft/core/module"
)

// maxPullBytes caps what Pull reads (module.ReadBundle's per-file limit).
const maxPullBytes = 1 << 30

// Client talks to a registry server.
type Client struct {
	// BaseURL is where the handler is mounted, e.g.
	// "https://weft.example.com/v1/registry" (see MountPath).
	BaseURL string
	// Token, when non-empty, is sent as "Authorization: Bearer <token>".
	Token string
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, hdr http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.BaseURL, "/")+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	return hc.Do(req)
}

// apiError turns a non-2xx answer into an *APIError.
func apiError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var e errorBody
	if json.Unmarshal(raw, &e) == nil && e.Error.Code != "" {
		return &APIError{Status: resp.StatusCode, Code: e.Error.Code, Message: e.Error.Message}
	}
	msg := strings.TrimSpace(string(raw))
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &APIError{Status: resp.StatusCode, Message: msg}
}

// Push uploads a bundle tar as name:tag. The tar must be canonical (what
// module.Bundle.Tar returns); the server checks it, stores it and tags it
// (see the package documentation). It returns the stored reference, whose
// digest is checked against the tar's.
func (c *Client) Push(ctx context.Context, tar []byte, name, tag string) (module.Ref, error) {
	ref := name + ":" + tag
	if name == "" || tag == "" {
		return module.Ref{}, fmt.Errorf("registry push %s: name and tag are required", ref)
	}
	d := digestOf(tar)
	hdr := http.Header{}
	hdr.Set(DigestHeader, d)
	hdr.Set("Content-Type", "application/x-tar")
	resp, err := c.do(ctx, http.MethodPut, "/modules/"+url.PathEscape(name)+"/"+url.PathEscape(tag), tar, hdr)
	if err != nil {
		return module.Ref{}, fmt.Errorf("registry push %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return module.Ref{}, fmt.Errorf("registry push %s: %w", ref, apiError(resp))
	}
	var out module.Ref
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&out); err != nil {
		return module.Ref{}, fmt.Errorf("registry push %s: decoding the answer: %w", ref, err)
	}
	if out.Digest != d {
		return module.Ref{}, &DigestMismatchError{Ref: ref, Want: d, Got: out.Digest}
	}
	return out, nil
}

// Pull downloads the bundle tar a reference names: "sha256:<hex>", "name"
// (name:latest) or "name:tag". It returns the tar and its digest after
// checking the sha256 of the bytes received against the server's
// Weft-Digest header and, for a digest reference, against the reference; a
// mismatch is a *DigestMismatchError (errors.Is ErrDigestMismatch).
func (c *Client) Pull(ctx context.Context, ref string) ([]byte, string, error) {
	var path string
	if strings.HasPrefix(ref, "sha256:") {
		if !digestRe.MatchString(ref) {
			return nil, "", fmt.Errorf("registry pull %s: invalid digest (want sha256:<64 lower-case hex digits>)", ref)
		}
		path = "/blobs/" + ref
	} else {
		name, tag, ok := strings.Cut(ref, ":")
		if !ok {
			tag = "latest"
		}
		if !validName(name) || !validTag(tag) {
			return nil, "", fmt.Errorf("registry pull %s: not a digest or name[:tag]", ref)
		}
		path = "/modules/" + url.PathEscape(name) + "/" + url.PathEscape(tag)
	}
	resp, err := c.do(ctx, http.MethodGet, path, nil, nil)
	if err != nil {
		return nil, "", fmt.Errorf("registry pull %s: %w", ref, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("registry pull %s: %w", ref, apiError(resp))
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxPullBytes+1))
	if err != nil {
		return nil, "", fmt.Errorf("registry pull %s: %w", ref, err)
	}
	if len(data) > maxPullBytes {
		return nil, "", fmt.Errorf("registry pull %s: the bundle exceeds %d bytes", ref, maxPullBytes)
	}
	announced := resp.Header.Get(DigestHeader)
	if announced == "" {
		return nil, "", fmt.Errorf("registry pull %s: the server sent no %s header, so the content cannot be verified", ref, DigestHeader)
	}
	got := digestOf(data)
	if digestRe.MatchString(ref) && got != ref {
		return nil, "", &DigestMismatchError{Ref: ref, Want: ref, Got: got}
	}
	if got != announced {
		return nil, "", &DigestMismatchError{Ref: ref, Want: announced, Got: got}
	}
	return data, got, nil
}

// List returns every name:tag the server holds, sorted by name and tag.
func (c *Client) List(ctx context.Context) ([]module.Ref, error) {
	resp, err := c.do(ctx, http.MethodGet, "/modules", nil, nil)
	if err != nil {
		return nil, fmt.Errorf("registry list: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("registry list: %w", apiError(resp))
	}
	var out listBody
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, fmt.Errorf("registry list: decoding the answer: %w", err)
	}
	if out.Modules == nil {
		return nil, errors.New("registry list: the answer has no \"modules\" list")
	}
	return out.Modules, nil
}
