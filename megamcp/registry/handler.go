package registry

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/weft-dev/weft/core/module"
)

// MountPath is where weft serve mounts the handler (with http.StripPrefix).
// A Client's BaseURL is the server's URL followed by it.
const MountPath = "/v1/registry"

// DigestHeader carries a bundle tar's digest, "sha256:<hex>", in both
// directions.
const DigestHeader = "Weft-Digest"

// DefaultMaxBundleBytes is the body limit of a push when
// HandlerOptions.MaxBundleBytes is not set.
const DefaultMaxBundleBytes int64 = 64 << 20

// HandlerOptions configures NewHandler.
type HandlerOptions struct {
	// Token, when non-empty, is required of every request as
	// "Authorization: Bearer <token>".
	Token string
	// MaxBundleBytes caps the body of a push (413 too_large beyond it).
	// Zero or negative means DefaultMaxBundleBytes.
	MaxBundleBytes int64
	// Logger receives stored pushes (info) and internal errors (error).
	// Nil discards them.
	Logger *slog.Logger
}

// The registry's own rules for names, tags and digests (module.Registry.Tag
// and Resolve); checked here so malformed input is a bad_request, not a
// miss or a failure after the upload.
var (
	digestRe = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
	nameRe   = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

func validName(s string) bool { return nameRe.MatchString(s) }
func validTag(s string) bool  { return nameRe.MatchString(strings.ToLower(s)) }

func digestOf(p []byte) string {
	s := sha256.Sum256(p)
	return "sha256:" + hex.EncodeToString(s[:])
}

type handler struct {
	reg      *module.Registry
	token    [sha256.Size]byte
	hasToken bool
	max      int64
	log      *slog.Logger
}

// NewHandler serves reg over HTTP as the package documentation describes.
func NewHandler(reg *module.Registry, opts HandlerOptions) http.Handler {
	h := &handler{reg: reg, max: opts.MaxBundleBytes, log: opts.Logger}
	if h.max <= 0 {
		h.max = DefaultMaxBundleBytes
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if opts.Token != "" {
		h.hasToken = true
		h.token = sha256.Sum256([]byte(opts.Token))
	}
	return h
}

// authorized compares the bearer token in constant time (hashing both sides
// first, so not even the length leaks).
func (h *handler) authorized(r *http.Request) bool {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	got := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	return subtle.ConstantTimeCompare(got[:], h.token[:]) == 1
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.hasToken && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="weft-registry"`)
		writeError(w, http.StatusUnauthorized, CodeUnauthorized, "missing or wrong bearer token")
		return
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case len(segs) == 1 && segs[0] == "modules":
		if allow(w, r, http.MethodGet) {
			h.list(w)
		}
	case len(segs) == 3 && segs[0] == "modules":
		name, tag := segs[1], segs[2]
		if !allow(w, r, http.MethodGet, http.MethodPut) {
			return
		}
		if !validName(name) || !validTag(tag) {
			writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("invalid name or tag %q:%q (lower-case letters, digits, . _ -; at most 64)", name, tag))
			return
		}
		if r.Method == http.MethodPut {
			h.put(w, r, name, tag)
			return
		}
		h.serveTar(w, r, name+":"+tag, "no-cache")
	case len(segs) == 2 && segs[0] == "blobs":
		if !allow(w, r, http.MethodGet) {
			return
		}
		if !digestRe.MatchString(segs[1]) {
			writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("invalid digest %q (want sha256:<64 lower-case hex digits>)", segs[1]))
			return
		}
		// A digest names its content forever.
		h.serveTar(w, r, segs[1], "max-age=31536000, immutable")
	default:
		writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no such path %q", r.URL.Path))
	}
}

// allow answers 405 unless the request's method is one of methods (GET
// implying HEAD).
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m || (m == http.MethodGet && r.Method == http.MethodHead) {
			return true
		}
	}
	all := strings.Join(methods, ", ")
	if strings.Contains(all, http.MethodGet) {
		all += ", " + http.MethodHead
	}
	w.Header().Set("Allow", all)
	writeError(w, http.StatusMethodNotAllowed, CodeMethodNotAllowed, fmt.Sprintf("%s is not allowed here (allowed: %s)", r.Method, all))
	return false
}

func (h *handler) list(w http.ResponseWriter) {
	refs, err := h.reg.List()
	if err != nil {
		h.internal(w, "list", err)
		return
	}
	if refs == nil {
		refs = []module.Ref{}
	}
	writeJSON(w, http.StatusOK, listBody{Modules: refs})
}

// listBody is the JSON of GET /modules.
type listBody struct {
	Modules []module.Ref `json:"modules"`
}

func (h *handler) serveTar(w http.ResponseWriter, r *http.Request, ref, cacheControl string) {
	data, d, err := h.reg.Tar(ref)
	if errors.Is(err, module.ErrNotFound) {
		writeError(w, http.StatusNotFound, CodeNotFound, fmt.Sprintf("no module %s", ref))
		return
	}
	if err != nil {
		h.internal(w, "read "+ref, err)
		return
	}
	// Serve nothing the store did not keep intact.
	if got := digestOf(data); got != d {
		h.internal(w, "read "+ref, fmt.Errorf("stored bundle %s is corrupt (content digest %s)", d, got))
		return
	}
	etag := `"` + d + `"`
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set(DigestHeader, d)
	hd.Set("Cache-Control", cacheControl)
	if etagMatches(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/x-tar")
	hd.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(data)
	}
}

// etagMatches reports whether an If-None-Match value names etag.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == etag {
			return true
		}
	}
	return false
}

func (h *handler) put(w http.ResponseWriter, r *http.Request, name, tag string) {
	want := r.Header.Get(DigestHeader)
	if want == "" {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "the "+DigestHeader+" header (sha256:<hex> of the body) is required")
		return
	}
	if !digestRe.MatchString(want) {
		writeError(w, http.StatusBadRequest, CodeBadRequest, fmt.Sprintf("invalid %s %q (want sha256:<64 lower-case hex digits>)", DigestHeader, want))
		return
	}
	tooLarge := func() {
		writeError(w, http.StatusRequestEntityTooLarge, CodeTooLarge, fmt.Sprintf("the bundle exceeds the limit of %d bytes", h.max))
	}
	if r.ContentLength > h.max {
		tooLarge()
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			tooLarge()
			return
		}
		writeError(w, http.StatusBadRequest, CodeBadRequest, "reading the body: "+err.Error())
		return
	}
	if got := digestOf(body); got != want {
		writeError(w, http.StatusUnprocessableEntity, CodeDigestMismatch, fmt.Sprintf("the %d bytes received have digest %s, %s says %s", len(body), got, DigestHeader, want))
		return
	}
	b, err := module.ReadBundle(bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, err.Error())
		return
	}
	canon, err := b.Digest()
	if err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, err.Error())
		return
	}
	if canon != want {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, fmt.Sprintf("%v: the tar is not in canonical form (its canonical encoding has digest %s); push the bytes Bundle.Tar or `weft module build -o` writes", module.ErrInvalidBundle, canon))
		return
	}
	m := &b.Manifest
	if m.Name != name {
		writeError(w, http.StatusUnprocessableEntity, CodeNameMismatch, fmt.Sprintf("the manifest names module %q, the path %q", m.Name, name))
		return
	}
	if m.Version != "" && !validTag(m.Version) {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, fmt.Sprintf("%v: manifest version %q is not a valid tag (lower-case letters, digits, . _ -)", module.ErrInvalidBundle, m.Version))
		return
	}
	if err := m.Validate(); err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, fmt.Sprintf("%v: manifest: %v", module.ErrInvalidBundle, err))
		return
	}
	if err := b.Check(r.Context()); err != nil {
		writeError(w, http.StatusUnprocessableEntity, CodeInvalidBundle, err.Error())
		return
	}

	status := http.StatusOK
	if !h.holds(want, name, tag, m.Version) {
		status = http.StatusCreated
		d, err := h.reg.PutTar(body, want)
		if err == nil && d != want { // PutTar re-encodes; canonical was checked above
			err = fmt.Errorf("stored digest %s, expected %s", d, want)
		}
		if err == nil {
			err = h.reg.Tag(name, tag, want)
		}
		if err != nil {
			h.internal(w, "store "+name+":"+tag, err)
			return
		}
		h.log.Info("registry: module stored", "name", name, "tag", tag, "digest", want, "bytes", len(body))
	}
	writeJSON(w, status, module.Ref{Name: name, Tag: tag, Digest: want})
}

// holds reports whether the registry already has the blob digest, under
// every tag a push would set: name:tag, name:version and name:latest.
func (h *handler) holds(digest, name, tag, version string) bool {
	if _, err := h.reg.Resolve(digest); err != nil { // stats the blob
		return false
	}
	for _, t := range []string{tag, version, "latest"} {
		if t == "" {
			continue
		}
		if d, err := h.reg.Resolve(name + ":" + t); err != nil || d != digest {
			return false
		}
	}
	return true
}

func (h *handler) internal(w http.ResponseWriter, op string, err error) {
	h.log.Error("registry: "+op+" failed", "err", err)
	// The cause (paths of the server's files) stays in the server's log.
	writeError(w, http.StatusInternalServerError, CodeInternal, op+" failed; the server's log has the cause")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	var e errorBody
	e.Error.Code, e.Error.Message = code, msg
	writeJSON(w, status, e)
}
