package modeltest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/weft-dev/weft/core/model/modeltest"
)

func post(t *testing.T, url, body string) (*http.Response, []byte) {
	t.Helper()
	res, err := http.Post(url+"/chat/completions", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, b
}

func TestRepliesRecordedInOrder(t *testing.T) {
	srv := modeltest.NewServer(t,
		modeltest.WithReplies(
			modeltest.Reply{Status: 429, ErrorMessage: "busy", Header: map[string]string{"Retry-After": "3"}},
			modeltest.Reply{Content: "hi", Tokens: []string{"h", "i"}, Logprobs: []float64{-1, -2}, TokenIDs: []int64{5, 6}},
		),
		modeltest.WithHandler(func(r modeltest.Request) modeltest.Reply {
			return modeltest.Text("handler saw request " + string(rune('0'+r.N)))
		}))

	res, b := post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"one"}]}`)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "3" {
		t.Errorf("first: status %d Retry-After %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	var eb struct {
		Error struct {
			Message string `json:"message"`
			Code    int    `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(b, &eb); err != nil || eb.Error.Message != "busy" || eb.Error.Code != 429 {
		t.Errorf("error body = %s", b)
	}

	_, b = post(t, srv.URL(), `{"model":"m","messages":[{"role":"user","content":"two"}]}`)
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	choice := got["choices"].([]any)[0].(map[string]any)
	want := map[string]any{
		"index": 0.0, "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": "hi"},
		"logprobs": map[string]any{"content": []any{
			map[string]any{"token": "h", "logprob": -1.0, "bytes": nil, "top_logprobs": []any{}},
			map[string]any{"token": "i", "logprob": -2.0, "bytes": nil, "top_logprobs": []any{}},
		}},
		"token_ids": []any{5.0, 6.0},
	}
	if diff := cmp.Diff(want, choice); diff != "" {
		t.Errorf("choice (-want +got):\n%s", diff)
	}

	_, b = post(t, srv.URL(), `not json`)
	if !bytes.Contains(b, []byte("handler saw request 3")) {
		t.Errorf("third answer = %s, want the handler's", b)
	}

	reqs := srv.Requests()
	if len(reqs) != 3 || srv.Count() != 3 {
		t.Fatalf("recorded %d, count %d; want 3", len(reqs), srv.Count())
	}
	if reqs[0].N != 1 || reqs[0].Messages()[0]["content"] != "one" || reqs[1].Messages()[0]["content"] != "two" {
		t.Errorf("recorded bodies out of order: %+v", reqs)
	}
	if reqs[2].Body != nil || string(reqs[2].Raw) != "not json" {
		t.Errorf("non-JSON request: Body %v Raw %q", reqs[2].Body, reqs[2].Raw)
	}
}

func TestModels(t *testing.T) {
	srv := modeltest.NewServer(t)
	res, err := http.Get(srv.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil || len(v.Data) != 1 || v.Data[0].ID != modeltest.DefaultModel {
		t.Errorf("models = %+v, %v", v, err)
	}
	if srv.Count() != 0 {
		t.Errorf("Count counts chat completions only; got %d", srv.Count())
	}
}

// TestMaxInFlightMeasures checks the measurement the client's concurrency
// test relies on: three requests held in the server at once read as 3.
func TestMaxInFlightMeasures(t *testing.T) {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	srv := modeltest.NewServer(t, modeltest.WithHandler(func(modeltest.Request) modeltest.Reply {
		mu.Lock()
		arrived++
		if arrived == 3 {
			close(all)
		}
		mu.Unlock()
		<-all
		return modeltest.Text("ok")
	}))
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() { post(t, srv.URL(), `{}`) })
	}
	wg.Wait()
	if got := srv.MaxInFlight(); got != 3 {
		t.Errorf("MaxInFlight = %d, want 3", got)
	}
}

func TestCloseEndsSlowRequestsAndRefuses(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Slow(time.Minute, modeltest.Text("never"))))
	done := make(chan error, 1)
	go func() {
		res, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewBufferString(`{}`))
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	for srv.Count() == 0 {
		time.Sleep(time.Millisecond)
	}
	srv.Close()
	srv.Close() // idempotent
	select {
	case err := <-done:
		if err == nil {
			t.Error("slow request got an answer from a closed server")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("slow request still pending 10s after Close")
	}
	if _, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewBufferString(`{}`)); err == nil {
		t.Error("request after Close succeeded")
	}
}

func TestDropAndGarbage(t *testing.T) {
	srv := modeltest.NewServer(t, modeltest.WithReplies(modeltest.Drop(), modeltest.Garbage()))
	if _, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewBufferString(`{}`)); err == nil {
		t.Error("dropped request got an answer")
	}
	res, b := post(t, srv.URL(), `{}`)
	if res.StatusCode != 200 || json.Valid(b) {
		t.Errorf("garbage: status %d body %q", res.StatusCode, b)
	}
}
