package tool

import (
	"encoding/json"
	"testing"
)

// useRegistry gives the test a fresh registry.
func useRegistry(t *testing.T) {
	t.Helper()
	old := reg
	reg = &registry{}
	t.Cleanup(func() { reg = old })
}

// fakeHost records what the SDK sends and answers SQL from a table keyed by
// the statement text.
type fakeHost struct {
	answers  map[string]string // sql -> response JSON
	requests []string
	logs     []string
	progress []string
}

func (h *fakeHost) SQL(req []byte) []byte {
	h.requests = append(h.requests, string(req))
	var r struct {
		SQL string `json:"sql"`
	}
	if err := json.Unmarshal(req, &r); err != nil {
		return []byte(`{"error":{"kind":"other","message":"bad request"}}`)
	}
	if a, ok := h.answers[r.SQL]; ok {
		return []byte(a)
	}
	return []byte(`{"columns":[],"types":[],"rows":[],"rows_affected":0,"last_insert_id":0,"error":{"kind":"syntax","message":"no answer for ` + r.SQL + `"}}`)
}

func (h *fakeHost) Now() int64    { return 0 }
func (h *fakeHost) Rand(p []byte) { clear(p) }
func (h *fakeHost) Log(l int, m string) {
	h.logs = append(h.logs, string(rune('0'+l))+":"+m)
}
func (h *fakeHost) Progress(p, t float64, m string) {
	h.progress = append(h.progress, m)
}
