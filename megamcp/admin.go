package megamcp

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
)

// GenerationHeader carries a request's generation (fencing) on the admin
// API and on MCP requests; the admin API also takes a "generation" JSON
// field or query parameter.
const GenerationHeader = "Weft-Generation"

// maxAdminBody bounds admin request bodies (state imports included).
const maxAdminBody = 256 << 20

// CodeAtCapacity is the error code of a refusal at a bound (sessions,
// /mcp sessions, connections): HTTP 503 with Retry-After.
const CodeAtCapacity = "at_capacity"

// apiError is the JSON error body of the admin API.
type apiError struct {
	Error struct {
		Code              string `json:"code"`
		Message           string `json:"message"`
		CurrentGeneration uint64 `json:"current_generation,omitempty"`
	} `json:"error"`
}

func httpStatus(err error) int {
	switch {
	case errors.Is(err, ErrNoSuchSession), errors.Is(err, ErrNoSuchVersion), errors.Is(err, ErrNoSuchModule):
		return http.StatusNotFound
	case errors.Is(err, ErrStaleGeneration):
		return http.StatusConflict
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest
	case errors.Is(err, ErrLedger), errors.Is(err, ErrClosed):
		return http.StatusServiceUnavailable
	case errors.Is(err, module.ErrDeadline), errors.Is(err, module.ErrStepBudget), errors.Is(err, module.ErrCanceled), errors.Is(err, module.ErrTrap),
		errors.Is(err, module.ErrMemoryLimit), errors.Is(err, module.ErrMalformedOutput):
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

func writeError(w http.ResponseWriter, err error) {
	var body apiError
	body.Error.Code = errorKind(err)
	body.Error.Message = err.Error()
	if errors.Is(err, errTooLarge) {
		body.Error.Code = "too_large"
		writeJSON(w, http.StatusRequestEntityTooLarge, body)
		return
	}
	if errors.Is(err, ErrAtCapacity) {
		// A refusal, not a failure of anything: code "at_capacity".
		body.Error.Code = CodeAtCapacity
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	var fe *FencedError
	if errors.As(err, &fe) {
		body.Error.CurrentGeneration = fe.Current
		w.Header().Set(GenerationHeader, strconv.FormatUint(fe.Current, 10))
	}
	writeJSON(w, httpStatus(err), body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// bearer wraps h with token authentication: "Authorization: Bearer TOKEN".
// An empty token disables the check.
func bearer(token string, h http.Handler) http.Handler {
	if token == "" {
		return h
	}
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The scheme is case-insensitive (RFC 7235); the token is not.
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			var body apiError
			body.Error.Code, body.Error.Message = "unauthorized", "missing or wrong bearer token"
			writeJSON(w, http.StatusUnauthorized, body)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// decodeBody reads a JSON request body into v (an empty body leaves v
// unchanged).
func decodeBody(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: request body: %v", ErrBadRequest, err)
	}
	if dec.More() {
		return fmt.Errorf("%w: request body: data after the JSON value", ErrBadRequest)
	}
	return nil
}

// errTooLarge is a request body over maxAdminBody (HTTP 413, code
// "too_large").
var errTooLarge = fmt.Errorf("%w: request body over %d MiB", ErrBadRequest, maxAdminBody>>20)

// readBody reads a request body of at most maxAdminBody bytes.
func readBody(r *http.Request) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxAdminBody+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	if len(b) > maxAdminBody {
		return nil, errTooLarge
	}
	return b, nil
}

// generation reads the request's generation: header, then query, then the
// body field (passed in as fromBody).
func generation(r *http.Request, fromBody uint64) (uint64, error) {
	for _, s := range []string{r.Header.Get(GenerationHeader), r.URL.Query().Get("generation")} {
		if s != "" {
			g, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%w: generation %q", ErrBadRequest, s)
			}
			return g, nil
		}
	}
	return fromBody, nil
}

// AdminHandler returns the admin API (docs/api.md), rooted at /v1/.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		var req CreateOptions
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		info, err := s.Create(r.Context(), req)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, sessionBody(info))
	})
	mux.HandleFunc("GET /v1/modules", s.loadedHandler)
	mux.HandleFunc("GET /v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"sessions": s.Sessions()})
	})
	mux.HandleFunc("GET /v1/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		ss, err := s.Session(r.PathValue("id"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, sessionBody(ss.Info()))
	})
	mux.HandleFunc("DELETE /v1/sessions/{id}", func(w http.ResponseWriter, r *http.Request) {
		gen, err := generation(r, 0)
		if err == nil {
			err = s.Delete(r.Context(), r.PathValue("id"), gen)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /v1/sessions/{id}/calls", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Tool       string          `json:"tool"`
			Arguments  json.RawMessage `json:"arguments"`
			Generation uint64          `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err == nil && req.Tool == "" {
			err = fmt.Errorf("%w: a call needs a tool", ErrBadRequest)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		res, err := s.Call(r.Context(), r.PathValue("id"), CallRequest{Generation: gen, Tool: req.Tool, Arguments: req.Arguments})
		if err != nil {
			writeError(w, err)
			return
		}
		writeCallResult(w, res)
	})
	mux.HandleFunc("POST /v1/sessions/{id}/snapshot", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Generation uint64 `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err != nil {
			writeError(w, err)
			return
		}
		vid, err := s.Snapshot(r.Context(), r.PathValue("id"), gen)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]string{"version": vid})
	})
	mux.HandleFunc("POST /v1/sessions/{id}/restore", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Version    string `json:"version"`
			Generation uint64 `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err == nil && req.Version == "" {
			err = fmt.Errorf("%w: restore needs a version", ErrBadRequest)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		g, err := s.Restore(r.Context(), r.PathValue("id"), gen, req.Version)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set(GenerationHeader, strconv.FormatUint(g, 10))
		writeJSON(w, http.StatusOK, map[string]uint64{"generation": g})
	})
	mux.HandleFunc("POST /v1/sessions/{id}/fork", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Version    string `json:"version"`
			Generation uint64 `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err != nil {
			writeError(w, err)
			return
		}
		info, err := s.Fork(r.Context(), r.PathValue("id"), gen, req.Version)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, sessionBody(info))
	})
	mux.HandleFunc("POST /v1/sessions/{id}/clock", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Time       *time.Time `json:"time"` // nil: absent (0001-01-01 is a time, out of range)
			Generation uint64     `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err == nil && req.Time == nil {
			err = fmt.Errorf("%w: clock needs a time (RFC 3339)", ErrBadRequest)
		}
		if err == nil {
			err = s.SetClock(r.Context(), r.PathValue("id"), gen, *req.Time)
		}
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]time.Time{"clock": req.Time.UTC()})
	})
	mux.HandleFunc("GET /v1/sessions/{id}/ledger", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		from, limit := uint64(0), 100
		if v := q.Get("from"); v != "" {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				writeError(w, fmt.Errorf("%w: from %q", ErrBadRequest, v))
				return
			}
			from = n
		}
		if v := q.Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 10000 {
				writeError(w, fmt.Errorf("%w: limit %q (1..10000)", ErrBadRequest, v))
				return
			}
			limit = n
		}
		recs, err := s.Ledger(r.Context(), r.PathValue("id"), from, limit)
		if err != nil {
			writeError(w, err)
			return
		}
		body := map[string]any{"records": recs}
		if len(recs) == limit {
			body["next"] = from + uint64(limit)
		}
		writeJSON(w, http.StatusOK, body)
	})
	mux.HandleFunc("GET /v1/sessions/{id}/state", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.Current(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = v.Export(w)
	})
	mux.HandleFunc("GET /v1/sessions/{id}/diff", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		from := r.URL.Query().Get("from")
		if from == "" {
			ss, err := s.Session(id)
			if err != nil {
				writeError(w, err)
				return
			}
			from = ss.base
		}
		c, err := s.Diff(r.Context(), from, "session:"+id)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, diffBody(c))
	})
	mux.HandleFunc("POST /v1/sessions/{id}/verify", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Checks     []Check `json:"checks"`
			Generation uint64  `json:"generation"`
		}
		if err := decodeBody(r, &req); err != nil {
			writeError(w, err)
			return
		}
		gen, err := generation(r, req.Generation)
		if err != nil {
			writeError(w, err)
			return
		}
		res, err := s.Verify(r.Context(), r.PathValue("id"), gen, req.Checks)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /v1/sessions/{id}/replay", func(w http.ResponseWriter, r *http.Request) {
		res, err := s.Replay(r.Context(), r.PathValue("id"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, res)
	})
	mux.HandleFunc("POST /v1/versions", func(w http.ResponseWriter, r *http.Request) {
		b, err := readBody(r)
		if err != nil {
			writeError(w, err)
			return
		}
		vid, err := s.ImportVersion(r.Context(), b)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"version": vid})
	})
	mux.HandleFunc("GET /v1/versions/{vid}", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.Version(r.Context(), r.PathValue("vid"))
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = v.Export(w)
	})
	mux.HandleFunc("GET /v1/diff", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("a") == "" || q.Get("b") == "" {
			writeError(w, fmt.Errorf("%w: diff needs a and b (version ids or session:<id>)", ErrBadRequest))
			return
		}
		c, err := s.Diff(r.Context(), q.Get("a"), q.Get("b"))
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, diffBody(c))
	})
	mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		var body apiError
		body.Error.Code, body.Error.Message = "not_found", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotFound, body)
	})
	return mux
}

// diffBody is c with an empty table list as [] rather than null.
func diffBody(c *state.Changes) *state.Changes {
	if c.Tables == nil {
		c.Tables = []state.TableDiff{}
	}
	return c
}

// sessionBody is a session's admin representation: its info and where its
// MCP endpoint is.
func sessionBody(info *SessionInfo) any {
	return struct {
		*SessionInfo
		MCP string `json:"mcp"`
	}{info, "/mcp/sessions/" + info.ID}
}
