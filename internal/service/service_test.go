package service

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/weft-dev/weft/core/model"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
)

const token = "secret"

// fakeDispatcher emits, per task, turns groups of G candidates whose
// reward is 1 for even samples, waiting on gate (when set) before each
// group; it records the tasks it ran and whether their context ended.
type fakeDispatcher struct {
	turns    int
	gate     chan struct{}
	started  chan string
	fail     map[string]error
	runs     atomic.Int64
	canceled atomic.Int64
}

func (d *fakeDispatcher) Run(ctx context.Context, b *Batch, t *task.Task, emit func(Item) error) (*Summary, error) {
	d.runs.Add(1)
	if d.started != nil {
		d.started <- t.ID
	}
	for turn := 0; turn < d.turns; turn++ {
		if d.gate != nil {
			select {
			case <-d.gate:
			case <-ctx.Done():
				d.canceled.Add(1)
				return nil, ctx.Err()
			}
		}
		if err := d.fail[t.ID]; err != nil {
			return nil, err
		}
		g := fakeGroup(t.ID, turn, b.GRPO.G)
		if err := emit(Item{Group: &g}); err != nil {
			d.canceled.Add(1)
			return nil, err
		}
	}
	return &Summary{Groups: d.turns}, nil
}

func fakeGroup(taskID string, turn, G int) train.Group {
	g := train.Group{ID: fmt.Sprintf("%s/t%d", taskID, turn), TaskID: taskID, Turn: turn, Atomic: fmt.Sprintf("a%d", turn), Level: train.LevelAtomicTurn, Continued: 0}
	var rewards []float64
	for i := 0; i < G; i++ {
		rewards = append(rewards, float64((i+1)%2))
	}
	adv := train.GroupAdvantages(rewards, 0)
	for i := 0; i < G; i++ {
		res := &train.TurnResult{Turn: turn, Atomic: g.Atomic, Reward: rewards[i],
			Prompt:     []model.Message{{Role: "system", Content: "be good"}, {Role: "user", Content: "task " + taskID}},
			Completion: []model.Message{{Role: "assistant", Content: fmt.Sprintf("candidate %d", i)}}}
		g.Candidates = append(g.Candidates, train.GroupCandidate{Sample: uint64(i), Reward: rewards[i], Advantage: adv[i], Result: res})
		g.NonZero = g.NonZero || adv[i] != 0
	}
	return g
}

func tasks(n int) []*task.Task {
	var out []*task.Task
	for i := 0; i < n; i++ {
		out = append(out, &task.Task{ID: fmt.Sprint(i), Atomic: []task.Atomic{{ID: "a0"}}})
	}
	return append(out, &task.Task{ID: "reads-only"})
}

func newService(t *testing.T, d Dispatcher, tune func(*Options)) (*Service, *httptest.Server) {
	t.Helper()
	o := Options{Token: token, Tasks: tasks(20), Harnesses: []string{"native", "react"}, Name: "test", Defaults: DefaultSettings, Dispatcher: d}
	if tune != nil {
		tune(&o)
	}
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return s, ts
}

func body(taskIDs []string, G int, extra string) string {
	ids, _ := json.Marshal(taskIDs)
	return fmt.Sprintf(`{"tasks": %s, "group_size": %d, "policy": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}%s}`, ids, G, extra)
}

func post(t *testing.T, ctx context.Context, url, auth, b string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/rollouts", strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", "Bearer "+auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// lines reads a whole NDJSON stream into decoded objects.
func lines(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stream line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func ids(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprint(i))
	}
	return out
}

// A batch streams accepted, one group line per (task, turn) with the
// exports' shapes, a task_done per task and done last; nothing stays
// pending.
func TestBatchStream(t *testing.T) {
	d := &fakeDispatcher{turns: 2}
	s, ts := newService(t, d, nil)
	resp := post(t, context.Background(), ts.URL, token, body(ids(3), 4, `, "batch_id": "step-1"`))
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	ls := lines(t, resp.Body)
	if ls[0]["type"] != LineAccepted || ls[0]["batch_id"] != "step-1" || ls[0]["tasks"] != 3.0 || ls[0]["group_size"] != 4.0 {
		t.Errorf("first line %v", ls[0])
	}
	last := ls[len(ls)-1]
	want := map[string]any{"type": LineDone, "batch_id": "step-1", "tasks": 3.0, "tasks_failed": 0.0, "groups": 6.0, "segments": 24.0, "canceled": false}
	delete(last, "elapsed_ms")
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("done line (-want +got):\n%s", diff)
	}
	groups, doneTasks := 0, map[string]bool{}
	indexes := map[float64]bool{}
	for _, l := range ls[1 : len(ls)-1] {
		switch l["type"] {
		case LineGroup:
			groups++
			if doneTasks[l["task_id"].(string)] {
				t.Errorf("group %v after its task_done", l["group_id"])
			}
			if diff := cmp.Diff([]any{1.0, 0.0, 1.0, 0.0}, l["rewards"]); diff != "" {
				t.Errorf("rewards (-want +got):\n%s", diff)
			}
			a := 1 / (0.5 + train.DefaultEps) * 0.5
			if diff := cmp.Diff([]any{a, -a, a, -a}, l["advantages"]); diff != "" {
				t.Errorf("advantages (-want +got):\n%s", diff)
			}
			segs := l["segments"].([]any)
			if len(segs) != 4 {
				t.Fatalf("%d segments, want 4", len(segs))
			}
			s0 := segs[1].(map[string]any)
			if s0["group_id"] != l["group_id"] || s0["advantage"] != -a || s0["reward"] != 0.0 || s0["masked"] != false {
				t.Errorf("segment 1 %v", s0)
			}
			v := l["verl"].(map[string]any)
			ei := v["extra_info"].(map[string]any)
			if v["data_source"] != "weft/test" || ei["group_id"] != l["group_id"] || v["reward_model"].(map[string]any)["style"] != "rule" {
				t.Errorf("verl row %v", v)
			}
			indexes[ei["index"].(float64)] = true
		case LineTaskDone:
			doneTasks[l["task_id"].(string)] = true
			if l["groups"] != 2.0 {
				t.Errorf("task_done %v", l)
			}
		default:
			t.Errorf("unexpected line %v", l)
		}
	}
	if groups != 6 || len(doneTasks) != 3 || len(indexes) != 6 {
		t.Errorf("%d groups, %d tasks done, %d distinct verl indexes; want 6, 3, 6", groups, len(doneTasks), len(indexes))
	}
	if s.Pending() != 0 {
		t.Errorf("pending %d after the batch, want 0", s.Pending())
	}
}

// A group line is on the wire before its task ends: the stream does not
// wait for the batch.
func TestGroupsStreamAsTheyFinish(t *testing.T) {
	d := &fakeDispatcher{turns: 2, gate: make(chan struct{})}
	_, ts := newService(t, d, nil)
	resp := post(t, context.Background(), ts.URL, token, body(ids(1), 2, ""))
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	read := func() map[string]any {
		b, err := br.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if l := read(); l["type"] != LineAccepted {
		t.Fatalf("first line %v", l)
	}
	d.gate <- struct{}{}
	if l := read(); l["type"] != LineGroup || l["group_id"] != "0/t0" {
		t.Fatalf("after one group: %v", l)
	}
	// The task is still blocked on its second group here.
	d.gate <- struct{}{}
	if l := read(); l["group_id"] != "0/t1" {
		t.Fatalf("second line %v", l)
	}
	if l := read(); l["type"] != LineTaskDone {
		t.Fatalf("third line %v", l)
	}
}

// Hostile requests get a 4xx with a JSON error body naming the fault; none
// is admitted or dispatched, and a batch running meanwhile loses nothing.
func TestHostileRequests(t *testing.T) {
	d := &fakeDispatcher{turns: 1, gate: make(chan struct{})}
	s, ts := newService(t, d, func(o *Options) {
		o.MaxBatchTasks, o.MaxGroupSize, o.MaxCandidates, o.MaxBody = 10, 16, 64, 4096
	})
	// A batch of 2 tasks runs (blocked) during the hostile requests.
	running := post(t, context.Background(), ts.URL, token, body(ids(2), 2, `, "batch_id": "good"`))
	defer running.Body.Close()
	br := bufio.NewReader(running.Body)
	if _, err := br.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		auth   string
		body   string
		status int
		code   string
		msg    string
		tasks  []string
	}{
		{"no token", "", body(ids(1), 2, ""), 401, CodeUnauthorized, "bearer token", nil},
		{"wrong token", "nope", body(ids(1), 2, ""), 401, CodeUnauthorized, "bearer token", nil},
		{"not JSON", token, "{tasks:", 400, CodeBadRequest, "not a batch request", nil},
		{"empty body", token, "", 400, CodeBadRequest, "not a batch request", nil},
		{"array", token, "[1,2]", 400, CodeBadRequest, "not a batch request", nil},
		{"unknown field", token, body(ids(1), 2, `, "group_sizee": 3`), 400, CodeBadRequest, `unknown field "group_sizee"`, nil},
		{"wrong type", token, `{"tasks": "0", "policy": {"base_url": "http://x/v1", "model": "m"}}`, 400, CodeBadRequest, "cannot unmarshal", nil},
		{"two values", token, body(ids(1), 2, "") + "{}", 400, CodeBadRequest, "more than one JSON value", nil},
		{"no tasks", token, body(nil, 2, ""), 400, CodeBadRequest, "at least one task", nil},
		{"no policy", token, `{"tasks": ["0"]}`, 400, CodeBadRequest, "policy.base_url and policy.model", nil},
		{"bad base_url", token, `{"tasks": ["0"], "policy": {"base_url": "ftp://x", "model": "m"}}`, 422, CodeInvalidArgument, "not an http(s) URL", nil},
		{"bad batch id", token, body(ids(1), 2, `, "batch_id": "a b"`), 400, CodeBadRequest, "batch_id", nil},
		// Trial F5: temperature 99 was accepted; the config's sampling bounds apply.
		{"temperature out of range", token, body(ids(1), 2, `, "sampling": {"temperature": 99}`), 422, CodeInvalidArgument, "sampling: temperature must be in [0, 2], got 99", nil},
		{"top_p 0", token, body(ids(1), 2, `, "sampling": {"top_p": 0}`), 422, CodeInvalidArgument, "sampling: top_p must be in (0, 1], got 0", nil},
		{"negative max_tokens", token, body(ids(1), 2, `, "sampling": {"max_tokens": -1}`), 422, CodeInvalidArgument, "sampling: max_tokens must be at least 0", nil},
		{"G = 1", token, body(ids(1), 1, ""), 422, CodeInvalidArgument, "group_size 1 < 2", nil},
		{"G < 0", token, body(ids(1), -3, ""), 422, CodeInvalidArgument, "group_size -3 < 2", nil},
		{"G too large", token, body(ids(1), 17, ""), 413, CodeTooLarge, "group_size 17, at most 16", nil},
		{"too many tasks", token, body(ids(11), 2, ""), 413, CodeTooLarge, "11 tasks in one batch, at most 10", nil},
		{"too many candidates", token, body(ids(5), 16, ""), 413, CodeTooLarge, "80 candidates per turn, at most 64", nil},
		{"body too large", token, body(ids(1), 2, `, "data_source": "`+strings.Repeat("x", 5000)+`"`), 413, CodeTooLarge, "over 4096 bytes", nil},
		{"unknown tasks", token, body([]string{"0", "nope", "404"}, 2, ""), 422, CodeUnknownTask, `2 task ids are not tasks`, []string{"nope", "404"}},
		{"duplicate task", token, body([]string{"0", "1", "0"}, 2, ""), 422, CodeInvalidArgument, "more than once", []string{"0"}},
		{"no atomic task", token, body([]string{"reads-only"}, 2, ""), 422, CodeNotTrainable, "no atomic task", []string{"reads-only"}},
		{"bad level", token, body(ids(1), 2, `, "level": "episode"`), 422, CodeInvalidArgument, `level "episode"`, nil},
		{"bad continue", token, body(ids(1), 2, `, "continue": "best"`), 422, CodeInvalidArgument, `continue "best"`, nil},
		{"bad reward", token, body(ids(1), 2, `, "reward": "vibes"`), 422, CodeInvalidArgument, `reward "vibes"`, nil},
		{"bad view", token, body(ids(1), 2, `, "view": "oracle"`), 422, CodeInvalidArgument, `view "oracle"`, nil},
		{"undeclared harness", token, body(ids(1), 2, `, "harness": "hermes"`), 422, CodeInvalidArgument, `harness "hermes" is not declared`, nil},
		{"negative eps", token, body(ids(1), 2, `, "eps": -1`), 422, CodeInvalidArgument, "eps -1", nil},
		{"bad sft mode", token, body(ids(1), 2, `, "sft": {"mode": "all"}`), 422, CodeInvalidArgument, `sft.mode "all"`, nil},
		{"extra_body not an object", token, `{"tasks": ["0"], "policy": {"base_url": "http://x/v1", "model": "m", "extra_body": [1]}}`, 422, CodeInvalidArgument, "extra_body must be a JSON object", nil},
		{"active batch id", token, body(ids(1), 2, `, "batch_id": "good"`), 409, CodeConflict, `batch "good" is still running`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, context.Background(), ts.URL, tc.auth, tc.body)
			defer resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("status %d (%s), want %d application/json", resp.StatusCode, resp.Header.Get("Content-Type"), tc.status)
			}
			var e struct{ Error ErrorBody }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatal(err)
			}
			if e.Error.Code != tc.code || !strings.Contains(e.Error.Message, tc.msg) {
				t.Errorf("error %+v, want code %q with %q", e.Error, tc.code, tc.msg)
			}
			if diff := cmp.Diff(tc.tasks, e.Error.Tasks); diff != "" {
				t.Errorf("error tasks (-want +got):\n%s", diff)
			}
		})
	}
	if got := s.Pending(); got != 2 {
		t.Errorf("pending %d during the hostile requests, want 2 (the running batch only)", got)
	}
	if n := d.runs.Load(); n != 2 {
		t.Errorf("%d jobs dispatched, want 2 (the running batch's)", n)
	}
	close(d.gate)
	ls := lines(t, br)
	last := ls[len(ls)-1]
	if last["type"] != LineDone || last["groups"] != 2.0 || last["tasks_failed"] != 0.0 || last["canceled"] != false {
		t.Errorf("running batch ended with %v, want 2 groups, none failed", last)
	}
	if s.Pending() != 0 || len(s.batches) != 0 {
		t.Errorf("after everything: pending %d, %d batches, want 0, 0", s.Pending(), len(s.batches))
	}
}

// Past MaxPending a batch gets 429 with Retry-After and nothing else
// changes; once the running batch is done the same batch is admitted.
func TestBackpressure(t *testing.T) {
	d := &fakeDispatcher{turns: 1, gate: make(chan struct{})}
	s, ts := newService(t, d, func(o *Options) { o.MaxPending, o.RetryAfter = 3, 1500*time.Millisecond })
	first := post(t, context.Background(), ts.URL, token, body(ids(2), 2, ""))
	br := bufio.NewReader(first.Body)
	if _, err := br.ReadBytes('\n'); err != nil {
		t.Fatal(err)
	}
	resp := post(t, context.Background(), ts.URL, token, body([]string{"5", "6"}, 2, ""))
	var e struct{ Error ErrorBody }
	json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" || e.Error.Code != CodeAtCapacity {
		t.Errorf("second batch: %d, Retry-After %q, %+v; want 429, 2, at_capacity", resp.StatusCode, resp.Header.Get("Retry-After"), e.Error)
	}
	if s.Pending() != 2 {
		t.Errorf("pending %d after the refusal, want 2", s.Pending())
	}
	// One task fits.
	small := post(t, context.Background(), ts.URL, token, body([]string{"7"}, 2, ""))
	if small.StatusCode != 200 {
		t.Errorf("a batch within the bound: %d", small.StatusCode)
	}
	close(d.gate)
	lines(t, br)
	lines(t, small.Body)
	first.Body.Close()
	small.Body.Close()
	again := post(t, context.Background(), ts.URL, token, body([]string{"5", "6"}, 2, ""))
	ls := lines(t, again.Body)
	again.Body.Close()
	if again.StatusCode != 200 || ls[len(ls)-1]["groups"] != 2.0 {
		t.Errorf("after the others finished: %d, last line %v", again.StatusCode, ls[len(ls)-1])
	}
}

// DELETE /v1/rollouts/{id} stops the batch's jobs; the stream ends with
// done canceled, and nothing stays pending.
func TestDeleteCancels(t *testing.T) {
	d := &fakeDispatcher{turns: 1, gate: make(chan struct{}), started: make(chan string, 4)}
	s, ts := newService(t, d, nil)
	resp := post(t, context.Background(), ts.URL, token, body(ids(2), 2, `, "batch_id": "c1"`))
	defer resp.Body.Close()
	<-d.started
	<-d.started
	del := func(id string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/v1/rollouts/"+id, nil)
		req.Header.Set("Authorization", "Bearer "+token)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var m map[string]any
		json.NewDecoder(r.Body).Decode(&m)
		return r.StatusCode, m
	}
	if code, m := del("c1"); code != 202 || m["canceled"] != true {
		t.Errorf("DELETE: %d %v", code, m)
	}
	ls := lines(t, resp.Body)
	last := ls[len(ls)-1]
	if last["type"] != LineDone || last["canceled"] != true || last["tasks_failed"] != 2.0 || last["groups"] != 0.0 {
		t.Errorf("last line %v, want done, canceled, 2 tasks failed", last)
	}
	for _, l := range ls {
		if l["type"] == LineTaskError {
			t.Errorf("a canceled batch reports task errors: %v", l)
		}
	}
	if d.canceled.Load() != 2 || s.Pending() != 0 {
		t.Errorf("%d jobs saw the cancel, pending %d; want 2, 0", d.canceled.Load(), s.Pending())
	}
	if code, m := del("c1"); code != 404 || m["error"].(map[string]any)["code"] != CodeNotFound {
		t.Errorf("DELETE of a finished batch: %d %v", code, m)
	}
}

// A client that goes away cancels its batch.
func TestDisconnectCancels(t *testing.T) {
	d := &fakeDispatcher{turns: 1, gate: make(chan struct{}), started: make(chan string, 4)}
	s, ts := newService(t, d, nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, ts.URL, token, body(ids(3), 2, ""))
	for range 3 {
		<-d.started
	}
	cancel()
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for (d.canceled.Load() != 3 || s.Pending() != 0) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if d.canceled.Load() != 3 || s.Pending() != 0 {
		t.Errorf("%d jobs canceled, pending %d; want 3, 0", d.canceled.Load(), s.Pending())
	}
}

// A failing task ends with a task_error line; the others finish.
func TestTaskError(t *testing.T) {
	d := &fakeDispatcher{turns: 1, fail: map[string]error{"1": errors.New("endpoint down")}}
	_, ts := newService(t, d, nil)
	resp := post(t, context.Background(), ts.URL, token, body(ids(3), 2, ""))
	defer resp.Body.Close()
	ls := lines(t, resp.Body)
	var errs []map[string]any
	for _, l := range ls {
		if l["type"] == LineTaskError {
			errs = append(errs, l)
		}
	}
	if len(errs) != 1 || errs[0]["task_id"] != "1" || errs[0]["error"].(map[string]any)["message"] != "endpoint down" {
		t.Errorf("task errors %v", errs)
	}
	if last := ls[len(ls)-1]; last["tasks_failed"] != 1.0 || last["groups"] != 2.0 {
		t.Errorf("done %v", last)
	}
}

func TestHealthzAndRoutes(t *testing.T) {
	_, ts := newService(t, &fakeDispatcher{}, nil)
	r, err := http.Get(ts.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	if r.StatusCode != 200 || string(b) != "ok\n" {
		t.Errorf("healthz %d %q", r.StatusCode, b)
	}
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/v1/rollouts", bytes.NewReader(nil))
	req.Header.Set("Authorization", "Bearer "+token)
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 405 || r.Header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT: %d, Allow %q", r.StatusCode, r.Header.Get("Allow"))
	}
	req, _ = http.NewRequest(http.MethodGet, ts.URL+"/v1/rollouts", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var st Status
	json.NewDecoder(r.Body).Decode(&st)
	r.Body.Close()
	if st.MaxPending != DefaultMaxPending || st.Pending != 0 || len(st.Batches) != 0 {
		t.Errorf("status %+v", st)
	}
}

var _ sync.Locker = (*sync.Mutex)(nil)

// GET /v1/tasks lists the tasks with atomic tasks, in config order.
func TestListTasks(t *testing.T) {
	_, ts := newService(t, &fakeDispatcher{}, func(o *Options) { o.Tasks = tasks(2) })
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/v1/tasks", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	var got struct{ Tasks []TaskInfo }
	if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]TaskInfo{{ID: "0", Atomic: 1}, {ID: "1", Atomic: 1}}, got.Tasks); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
}
