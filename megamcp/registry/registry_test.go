package registry

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/module"
)

// emptyWasm is the smallest valid wasm module (magic and version). The
// registry never compiles a module, so a bundle needs no more.
var emptyWasm = []byte("\x00asm\x01\x00\x00\x00")

// testBundle is a well-formed bundle owning one seeded table.
func testBundle(name, version string) *module.Bundle {
	return &module.Bundle{
		Manifest: module.Manifest{
			ABI:     module.ABIVersion,
			Name:    name,
			Version: version,
			Tools: []module.Tool{{
				Name:        "add_note",
				Description: "Add a note.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			}},
			Tables: module.Tables{Owns: []string{"notes"}},
			Hosts:  map[string]string{"sql": "v1"},
		},
		Wasm:   emptyWasm,
		Schema: "CREATE TABLE notes (id INT NOT NULL, text VARCHAR(200), PRIMARY KEY (id));",
		Seed:   []byte(`{"notes": [{"id": 1, "text": "hello"}]}`),
	}
}

func tarOf(t *testing.T, b *module.Bundle) ([]byte, string) {
	t.Helper()
	data, err := b.Tar()
	if err != nil {
		t.Fatal(err)
	}
	d, err := b.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return data, d
}

// newServer serves a fresh registry mounted as weft serve mounts it.
func newServer(t *testing.T, opts HandlerOptions) (*module.Registry, *httptest.Server) {
	t.Helper()
	reg, err := module.OpenRegistry(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle(MountPath+"/", http.StripPrefix(MountPath, NewHandler(reg, opts)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return reg, srv
}

func list(t *testing.T, reg *module.Registry) []module.Ref {
	t.Helper()
	refs, err := reg.List()
	if err != nil {
		t.Fatal(err)
	}
	return refs
}

// request sends a raw request and returns the status, headers and body.
func request(t *testing.T, method, url, token string, body io.Reader, hdr map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// wantError asserts a JSON error body with code.
func wantError(t *testing.T, status int, body []byte, wantStatus int, wantCode string) string {
	t.Helper()
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %q", err, body)
	}
	if status != wantStatus || e.Error.Code != wantCode || e.Error.Message == "" {
		t.Fatalf("got %d %q (%q), want %d %q", status, e.Error.Code, e.Error.Message, wantStatus, wantCode)
	}
	return e.Error.Message
}

func wantAPIError(t *testing.T, err error, status int, code string) *APIError {
	t.Helper()
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != status || ae.Code != code || ae.Message == "" {
		t.Fatalf("got error %v, want *APIError %d %s", err, status, code)
	}
	return ae
}

func TestPushPullRoundTrip(t *testing.T) {
	const token = "s3cret"
	reg, srv := newServer(t, HandlerOptions{Token: token})
	c := &Client{BaseURL: srv.URL + MountPath, Token: token}
	ctx := context.Background()
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))

	ref, err := c.Push(ctx, tar, "hello", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(module.Ref{Name: "hello", Tag: "dev", Digest: digest}, ref); diff != "" {
		t.Fatalf("push answer (-want +got):\n%s", diff)
	}
	// The push tags name:tag and, as PutTar does, name:version and name:latest.
	want := []module.Ref{{Name: "hello", Tag: "0.1.0", Digest: digest}, {Name: "hello", Tag: "dev", Digest: digest}, {Name: "hello", Tag: "latest", Digest: digest}}
	if diff := cmp.Diff(want, list(t, reg)); diff != "" {
		t.Fatalf("server registry (-want +got):\n%s", diff)
	}
	remote, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, remote); diff != "" {
		t.Fatalf("Client.List (-want +got):\n%s", diff)
	}

	for _, r := range []string{"hello:dev", "hello", "hello:0.1.0", digest} {
		got, d, err := c.Pull(ctx, r)
		if err != nil {
			t.Fatalf("pull %s: %v", r, err)
		}
		if d != digest || !bytes.Equal(got, tar) {
			t.Fatalf("pull %s: digest %s (want %s), %d bytes identical=%v", r, d, digest, len(got), bytes.Equal(got, tar))
		}
	}

	// The tar is served with its digest, as header and ETag.
	status, hdr, body := request(t, http.MethodGet, srv.URL+MountPath+"/modules/hello/dev", token, nil, nil)
	if status != http.StatusOK || hdr.Get("Content-Type") != "application/x-tar" || hdr.Get(DigestHeader) != digest ||
		hdr.Get("ETag") != `"`+digest+`"` || !bytes.Equal(body, tar) {
		t.Fatalf("GET: %d %v (%d bytes)", status, hdr, len(body))
	}
	status, hdr, body = request(t, http.MethodHead, srv.URL+MountPath+"/blobs/"+digest, token, nil, nil)
	if status != http.StatusOK || hdr.Get(DigestHeader) != digest || hdr.Get("Content-Length") != "5120" || len(body) != 0 || len(tar) != 5120 {
		t.Fatalf("HEAD: %d %v %d (tar %d bytes)", status, hdr, len(body), len(tar))
	}
	status, _, body = request(t, http.MethodGet, srv.URL+MountPath+"/blobs/"+digest, token, nil, map[string]string{"If-None-Match": `"` + digest + `"`})
	if status != http.StatusNotModified || len(body) != 0 {
		t.Fatalf("If-None-Match: %d %q", status, body)
	}

	// Pushing identical content again changes nothing and says so (200).
	before := list(t, reg)
	status, _, body = request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/dev", token, bytes.NewReader(tar), map[string]string{DigestHeader: digest})
	var again module.Ref
	if status != http.StatusOK || json.Unmarshal(body, &again) != nil || again != ref {
		t.Fatalf("re-push: %d %s", status, body)
	}
	if diff := cmp.Diff(before, list(t, reg)); diff != "" {
		t.Fatalf("re-push changed the registry (-before +after):\n%s", diff)
	}
	// The same content under a new tag is a change (201).
	status, _, body = request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/stable", token, bytes.NewReader(tar), map[string]string{DigestHeader: digest})
	if status != http.StatusCreated || !strings.Contains(string(body), `"tag":"stable"`) {
		t.Fatalf("push new tag: %d %s", status, body)
	}
	if d, err := reg.Resolve("hello:stable"); err != nil || d != digest {
		t.Fatalf("hello:stable = %s, %v", d, err)
	}
}

// A body that is not what its Weft-Digest says is refused before anything
// is stored.
func TestPushTamperedBody(t *testing.T) {
	reg, srv := newServer(t, HandlerOptions{})
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))
	// Something is already stored, so "unchanged" is not just "empty".
	other, otherDigest := tarOf(t, testBundle("other", "1"))
	if _, err := (&Client{BaseURL: srv.URL + MountPath}).Push(context.Background(), other, "other", "1"); err != nil {
		t.Fatal(err)
	}
	before := list(t, reg)
	if len(before) != 2 || before[0].Digest != otherDigest {
		t.Fatalf("setup: %v", before)
	}

	for _, i := range []int{0, 600, len(tar) / 2, len(tar) - 1} {
		bad := bytes.Clone(tar)
		bad[i] ^= 0x01
		status, _, body := request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/0.1.0", "", bytes.NewReader(bad), map[string]string{DigestHeader: digest})
		msg := wantError(t, status, body, http.StatusUnprocessableEntity, CodeDigestMismatch)
		if !strings.Contains(msg, digestOf(bad)) || !strings.Contains(msg, digest) {
			t.Fatalf("flip byte %d: message names neither digest: %s", i, msg)
		}
	}
	if diff := cmp.Diff(before, list(t, reg)); diff != "" {
		t.Fatalf("a tampered push changed the registry (-before +after):\n%s", diff)
	}
	if _, err := reg.Resolve(digest); !errors.Is(err, module.ErrNotFound) {
		t.Fatalf("blob of the tampered push: %v, want not found", err)
	}

	// A digest that matches the bytes does not make a damaged tar a bundle:
	// with a byte of its first header flipped the header checksum fails.
	bad := bytes.Clone(tar)
	bad[140] ^= 0x01 // in the mtime field of manifest.json's header
	status, _, body := request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/0.1.0", "", bytes.NewReader(bad), map[string]string{DigestHeader: digestOf(bad)})
	wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle)
	if diff := cmp.Diff(before, list(t, reg)); diff != "" {
		t.Fatalf("an invalid push changed the registry (-before +after):\n%s", diff)
	}
}

func TestAuth(t *testing.T) {
	reg, srv := newServer(t, HandlerOptions{Token: "right"})
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))
	base := srv.URL + MountPath
	for _, auth := range []string{"", "Bearer wrong", "Bearer righ", "Bearer rightt", "Basic right", "right"} {
		for _, c := range []struct {
			method, path string
			body         []byte
		}{
			{http.MethodPut, "/modules/hello/dev", tar},
			{http.MethodGet, "/modules", nil},
			{http.MethodGet, "/blobs/" + digest, nil},
		} {
			status, hdr, body := request(t, c.method, base+c.path, "", bytes.NewReader(c.body), map[string]string{"Authorization": auth, DigestHeader: digest})
			wantError(t, status, body, http.StatusUnauthorized, CodeUnauthorized)
			if hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("%s %s with %q: no WWW-Authenticate", c.method, c.path, auth)
			}
		}
	}
	_, err := (&Client{BaseURL: base, Token: "wrong"}).Push(context.Background(), tar, "hello", "dev")
	wantAPIError(t, err, http.StatusUnauthorized, CodeUnauthorized)
	_, err = (&Client{BaseURL: base}).List(context.Background())
	wantAPIError(t, err, http.StatusUnauthorized, CodeUnauthorized)
	if refs := list(t, reg); len(refs) != 0 {
		t.Fatalf("unauthorized pushes stored %v", refs)
	}
	if _, err := reg.Resolve(digest); !errors.Is(err, module.ErrNotFound) {
		t.Fatalf("blob of an unauthorized push: %v, want not found", err)
	}
	// The scheme is case-insensitive (RFC 9110).
	status, _, body := request(t, http.MethodGet, base+"/modules", "", nil, map[string]string{"Authorization": "bearer right"})
	if status != http.StatusOK || strings.TrimSpace(string(body)) != `{"modules":[]}` {
		t.Fatalf("lower-case scheme: %d %s", status, body)
	}
}

func TestPushNameMismatch(t *testing.T) {
	reg, srv := newServer(t, HandlerOptions{})
	tar, _ := tarOf(t, testBundle("hello", "0.1.0"))
	_, err := (&Client{BaseURL: srv.URL + MountPath}).Push(context.Background(), tar, "other", "0.1.0")
	ae := wantAPIError(t, err, http.StatusUnprocessableEntity, CodeNameMismatch)
	if !strings.Contains(ae.Message, `"hello"`) || !strings.Contains(ae.Message, `"other"`) {
		t.Fatalf("message: %s", ae.Message)
	}
	if refs := list(t, reg); len(refs) != 0 {
		t.Fatalf("a mismatched push stored %v", refs)
	}
}

func TestPushTooLarge(t *testing.T) {
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))
	reg, srv := newServer(t, HandlerOptions{MaxBundleBytes: int64(len(tar)) - 1})
	// With a Content-Length (the client's way) ...
	_, err := (&Client{BaseURL: srv.URL + MountPath}).Push(context.Background(), tar, "hello", "dev")
	wantAPIError(t, err, http.StatusRequestEntityTooLarge, CodeTooLarge)
	// ... and chunked, where only reading finds out.
	status, _, body := request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/dev", "", io.MultiReader(bytes.NewReader(tar)), map[string]string{DigestHeader: digest})
	wantError(t, status, body, http.StatusRequestEntityTooLarge, CodeTooLarge)
	if refs := list(t, reg); len(refs) != 0 {
		t.Fatalf("an oversize push stored %v", refs)
	}
	// Exactly at the limit is accepted.
	_, srv2 := newServer(t, HandlerOptions{MaxBundleBytes: int64(len(tar))})
	if _, err := (&Client{BaseURL: srv2.URL + MountPath}).Push(context.Background(), tar, "hello", "dev"); err != nil {
		t.Fatal(err)
	}
}

func TestPullUnknown(t *testing.T) {
	_, srv := newServer(t, HandlerOptions{})
	c := &Client{BaseURL: srv.URL + MountPath}
	for _, ref := range []string{"nosuch", "nosuch:v1", "sha256:" + strings.Repeat("ab", 32)} {
		_, _, err := c.Pull(context.Background(), ref)
		wantAPIError(t, err, http.StatusNotFound, CodeNotFound)
		if !errors.Is(err, module.ErrNotFound) {
			t.Fatalf("pull %s: %v does not match module.ErrNotFound", ref, err)
		}
	}
}

// The client believes no server: content is checked against the digest the
// server announces and, for a digest reference, against the reference.
func TestClientDetectsLyingServer(t *testing.T) {
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))
	other, otherDigest := tarOf(t, testBundle("hello", "0.2.0"))
	var serve func(w http.ResponseWriter, r *http.Request)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(w, r) }))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	ctx := context.Background()

	// Announces the digest of one bundle, sends a byte-flipped copy.
	serve = func(w http.ResponseWriter, r *http.Request) {
		bad := bytes.Clone(tar)
		bad[700] ^= 0x80
		w.Header().Set(DigestHeader, digest)
		w.Write(bad)
	}
	_, _, err := c.Pull(ctx, "hello:0.1.0")
	var dm *DigestMismatchError
	if !errors.As(err, &dm) || !errors.Is(err, ErrDigestMismatch) || dm.Want != digest || dm.Got == digest {
		t.Fatalf("tampered content: %v", err)
	}

	// Consistent header and body, but not the digest that was asked for.
	serve = func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/blobs/"+digest {
			t.Errorf("path %s", r.URL.Path)
		}
		w.Header().Set(DigestHeader, otherDigest)
		w.Write(other)
	}
	_, _, err = c.Pull(ctx, digest)
	if !errors.As(err, &dm) || dm.Want != digest || dm.Got != otherDigest {
		t.Fatalf("substituted content: %v", err)
	}

	// No digest at all: nothing to verify against, so nothing is returned.
	serve = func(w http.ResponseWriter, r *http.Request) { w.Write(tar) }
	if data, _, err := c.Pull(ctx, "hello"); err == nil || data != nil || !strings.Contains(err.Error(), "no Weft-Digest header") {
		t.Fatalf("missing header: %d bytes, %v", len(data), err)
	}

	// A push answered with another digest than the one sent.
	serve = func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(module.Ref{Name: "hello", Tag: "dev", Digest: otherDigest})
	}
	if _, err := c.Push(ctx, tar, "hello", "dev"); !errors.As(err, &dm) || dm.Want != digest || dm.Got != otherDigest {
		t.Fatalf("push answer with another digest: %v", err)
	}

	// A non-JSON error answer is still an *APIError.
	serve = func(w http.ResponseWriter, r *http.Request) { http.Error(w, "upstream down", http.StatusBadGateway) }
	_, _, err = c.Pull(ctx, "hello")
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadGateway || ae.Code != "" || ae.Message != "upstream down" {
		t.Fatalf("plain error: %v", err)
	}
}

// nonCanonical re-encodes a bundle tar with a modification time on every
// entry.
func nonCanonical(t *testing.T, canonical []byte) []byte {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(canonical))
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		hdr.ModTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		tw.Write(data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(buf.Bytes(), canonical) {
		t.Fatal("re-encoding changed nothing")
	}
	return buf.Bytes()
}

func TestBadRequests(t *testing.T) {
	reg, srv := newServer(t, HandlerOptions{})
	base := srv.URL + MountPath
	tar, digest := tarOf(t, testBundle("hello", "0.1.0"))
	put := func(path string, body []byte, hdr map[string]string) (int, []byte) {
		status, _, b := request(t, http.MethodPut, base+path, "", bytes.NewReader(body), hdr)
		return status, b
	}

	status, body := put("/modules/hello/dev", tar, nil)
	wantError(t, status, body, http.StatusBadRequest, CodeBadRequest)
	status, body = put("/modules/hello/dev", tar, map[string]string{DigestHeader: "sha256:XYZ"})
	wantError(t, status, body, http.StatusBadRequest, CodeBadRequest)
	status, body = put("/modules/Hello/dev", tar, map[string]string{DigestHeader: digest})
	wantError(t, status, body, http.StatusBadRequest, CodeBadRequest)
	status, body = put("/modules/hello/-dev", tar, map[string]string{DigestHeader: digest})
	wantError(t, status, body, http.StatusBadRequest, CodeBadRequest)

	// Not a tar at all.
	junk := []byte("not a tar")
	status, body = put("/modules/hello/dev", junk, map[string]string{DigestHeader: digestOf(junk)})
	wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle)
	// Parts that disagree: the manifest owns a table the schema lacks.
	b := testBundle("hello", "0.1.0")
	b.Manifest.Tables.Owns = append(b.Manifest.Tables.Owns, "users")
	bt, bd := tarOf(t, b)
	status, body = put("/modules/hello/dev", bt, map[string]string{DigestHeader: bd})
	if msg := wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle); !strings.Contains(msg, `"users"`) {
		t.Fatalf("message: %s", msg)
	}
	// A manifest that fails validation.
	b = testBundle("hello", "0.1.0")
	b.Manifest.ABI = "weft/v0"
	bt, bd = tarOf(t, b)
	status, body = put("/modules/hello/dev", bt, map[string]string{DigestHeader: bd})
	if msg := wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle); !strings.Contains(msg, "weft/v0") {
		t.Fatalf("message: %s", msg)
	}
	// A well-formed bundle, but not in canonical form: what is stored and
	// served must be byte for byte what was pushed, under its digest.
	nc := nonCanonical(t, tar)
	status, body = put("/modules/hello/dev", nc, map[string]string{DigestHeader: digestOf(nc)})
	if msg := wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle); !strings.Contains(msg, "canonical") || !strings.Contains(msg, digest) {
		t.Fatalf("message: %s", msg)
	}
	// A version the registry cannot use as a tag.
	bt, bd = tarOf(t, testBundle("hello", "1.0/evil"))
	status, body = put("/modules/hello/dev", bt, map[string]string{DigestHeader: bd})
	wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle)

	if refs := list(t, reg); len(refs) != 0 {
		t.Fatalf("refused pushes stored %v", refs)
	}

	status, _, body = request(t, http.MethodGet, base+"/blobs/sha256:short", "", nil, nil)
	wantError(t, status, body, http.StatusBadRequest, CodeBadRequest)
	status, _, body = request(t, http.MethodGet, base+"/nowhere", "", nil, nil)
	wantError(t, status, body, http.StatusNotFound, CodeNotFound)
	status, hdr, body := request(t, http.MethodDelete, base+"/modules/hello/dev", "", nil, nil)
	wantError(t, status, body, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
	if hdr.Get("Allow") != "GET, PUT, HEAD" {
		t.Fatalf("Allow: %q", hdr.Get("Allow"))
	}
	status, _, body = request(t, http.MethodPut, base+"/blobs/"+digest, "", bytes.NewReader(tar), nil)
	wantError(t, status, body, http.StatusMethodNotAllowed, CodeMethodNotAllowed)
}

// TestPushSparseBomb: a 5 KiB push of GNU sparse entries claiming 1 GiB
// each (core/module/testdata/sparse-bomb.tar) is refused as an invalid
// bundle without the server allocating what the entries claim (issue 15
// item 12), and nothing is stored.
func TestPushSparseBomb(t *testing.T) {
	bomb, err := os.ReadFile(filepath.Join("..", "..", "core", "module", "testdata", "sparse-bomb.tar"))
	if err != nil {
		t.Fatal(err)
	}
	reg, srv := newServer(t, HandlerOptions{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	status, _, body := request(t, http.MethodPut, srv.URL+MountPath+"/modules/hello/dev", "", bytes.NewReader(bomb), map[string]string{DigestHeader: digestOf(bomb)})
	runtime.ReadMemStats(&after)
	wantError(t, status, body, http.StatusUnprocessableEntity, CodeInvalidBundle)
	if !strings.Contains(string(body), "is not a regular file") {
		t.Errorf("body: %s", body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Fatalf("the push allocated %d bytes for %d bytes of tar", alloc, len(bomb))
	}
	if refs := list(t, reg); len(refs) != 0 {
		t.Fatalf("stored %v", refs)
	}
}
