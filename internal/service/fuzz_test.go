package service

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Any body POSTed as a batch gets either a stream that ends with "done"
// or a 4xx with a JSON error body and a known code, and leaves nothing
// pending.
func FuzzBatchRequest(f *testing.F) {
	f.Add(body(ids(2), 2, ""))
	f.Add(body(ids(1), 1, ""))
	f.Add(`{"tasks": ["0"], "policy": {"base_url": "http://x/v1", "model": "m"}, "sft": {"mode": "prefix"}}`)
	f.Add(`{"tasks": [], "policy": null}`)
	f.Add(`{"tasks": ["0", "0"], "group_size": 1e9, "policy": {"base_url": "http://x/v1", "model": "m"}}`)
	f.Add("[]")
	f.Add("")
	codes := map[string]bool{CodeBadRequest: true, CodeTooLarge: true, CodeInvalidArgument: true, CodeUnknownTask: true,
		CodeNotTrainable: true, CodeConflict: true, CodeAtCapacity: true}
	d := &fakeDispatcher{turns: 1}
	s, err := New(Options{Tasks: tasks(4), Harnesses: []string{"native"}, Name: "fuzz", Defaults: DefaultSettings, Dispatcher: d,
		MaxBatchTasks: 8, MaxGroupSize: 8, MaxBody: 1 << 14})
	if err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, b string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/rollouts", strings.NewReader(b)))
		if rec.Code == http.StatusOK {
			out := strings.TrimSpace(rec.Body.String())
			last := out[strings.LastIndexByte(out, '\n')+1:]
			var done Done
			if err := json.Unmarshal([]byte(last), &done); err != nil || done.Type != LineDone {
				t.Fatalf("200 stream does not end with done: %q", last)
			}
		} else {
			var e struct{ Error ErrorBody }
			if rec.Code < 400 || rec.Code >= 500 || json.Unmarshal(rec.Body.Bytes(), &e) != nil || !codes[e.Error.Code] || e.Error.Message == "" {
				t.Fatalf("status %d body %q", rec.Code, rec.Body.String())
			}
		}
		if s.Pending() != 0 {
			t.Fatalf("pending %d after the request", s.Pending())
		}
	})
}
