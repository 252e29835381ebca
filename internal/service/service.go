package service

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/rollout"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/internal/pipeline"
)

// Bounds' defaults (Options).
const (
	DefaultMaxBatchTasks = 1024
	DefaultMaxGroupSize  = 64
	DefaultMaxCandidates = 16384
	DefaultMaxPending    = 256
	DefaultConcurrency   = 8
	DefaultMaxBody       = 1 << 20
	DefaultRetryAfter    = time.Second
)

// Defaults are the batch settings a request leaves unset (the config's
// grpo block, else DefaultSettings).
type Defaults struct {
	GroupSize int
	Level     string
	Continue  string
	Mask      bool
	Reward    string
	Eps       float64
	View      string
	Harness   string
}

// DefaultSettings are the defaults without a grpo block: G = 8,
// atomic-turn groups continued from the first success, masking on, binary
// reward, the simuser view, the native harness.
var DefaultSettings = Defaults{GroupSize: 8, Level: train.LevelAtomicTurn, Continue: train.ContinueFirst, Mask: true,
	Reward: pipeline.RewardBinary, Eps: train.DefaultEps, View: task.ViewSimUser, Harness: "native"}

// Options configure New.
type Options struct {
	// Token guards /v1/... with "Authorization: Bearer TOKEN" (as weft
	// serve's admin API); "" = no authentication (tests).
	Token string
	// Tasks are the tasks a batch may name, by id.
	Tasks []*task.Task
	// Harnesses are the harness names a batch may name.
	Harnesses []string
	// Name is the config's name: the verl rows' data_source is
	// "weft/<Name>" unless a request gives one.
	Name     string
	Defaults Defaults
	// CheckHarness says whether a harness can run turn-by-turn episodes
	// (pipeline.Spec.CheckResume); it is called once per harness name and
	// its answer kept. nil = every harness can.
	CheckHarness func(ctx context.Context, name string) error
	// Dispatcher runs the jobs. Required.
	Dispatcher Dispatcher
	// MaxBatchTasks bounds the tasks of one batch, MaxGroupSize its G and
	// MaxCandidates tasks x G (413 past them); MaxPending the tasks of
	// all admitted batches not finished yet (429 past it); Concurrency
	// the jobs run at once over all batches; MaxBody the request body in
	// bytes. 0 = the Default* constants.
	MaxBatchTasks, MaxGroupSize, MaxCandidates, MaxPending, Concurrency int
	MaxBody                                                             int64
	// RetryAfter is the Retry-After of a 429 (0 = DefaultRetryAfter).
	RetryAfter time.Duration
	// Log receives batch events (nil = discarded).
	Log *slog.Logger
}

// Service is the rollout service's state: admitted batches and the
// admission count. Its methods are safe for concurrent use.
type Service struct {
	opts      Options
	tasks     map[string]*task.Task
	harnesses map[string]bool
	sem       chan struct{}
	log       *slog.Logger

	mu       sync.Mutex
	pending  int
	batches  map[string]*active
	closed   bool
	harnessC map[string]error
}

// active is an admitted batch while its stream runs.
type active struct {
	b      *Batch
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	done   int // tasks finished
	groups int
}

// New makes a service. It fails without a dispatcher or with defaults a
// request could not run with (an unknown harness, G < 2).
func New(opts Options) (*Service, error) {
	if opts.Dispatcher == nil {
		return nil, errors.New("service: no dispatcher")
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&opts.MaxBatchTasks, DefaultMaxBatchTasks)
	def(&opts.MaxGroupSize, DefaultMaxGroupSize)
	def(&opts.MaxCandidates, DefaultMaxCandidates)
	def(&opts.MaxPending, DefaultMaxPending)
	def(&opts.Concurrency, DefaultConcurrency)
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.RetryAfter <= 0 {
		opts.RetryAfter = DefaultRetryAfter
	}
	s := &Service{opts: opts, tasks: map[string]*task.Task{}, harnesses: map[string]bool{}, sem: make(chan struct{}, opts.Concurrency),
		batches: map[string]*active{}, harnessC: map[string]error{}, log: opts.Log}
	if s.log == nil {
		s.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	for _, t := range opts.Tasks {
		s.tasks[t.ID] = t
	}
	for _, h := range opts.Harnesses {
		s.harnesses[h] = true
	}
	if d := opts.Defaults; d.GroupSize < train.MinGroupSize {
		return nil, fmt.Errorf("service: default group size %d < %d", d.GroupSize, train.MinGroupSize)
	}
	return s, nil
}

// Pending is the number of admitted tasks not finished yet (all batches).
func (s *Service) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

// Close refuses new batches (503) and cancels the running ones.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	for _, a := range s.batches {
		a.cancel(errShutdown)
	}
	s.mu.Unlock()
}

var (
	errShutdown = errors.New("the rollout service is shutting down")
	errDeleted  = errors.New("batch canceled by DELETE")
)

// Handler serves the API (docs/rollout-service.md):
//
//	POST   /v1/rollouts       submit a batch; 200 and an NDJSON stream
//	GET    /v1/rollouts       admitted batches and the admission count
//	GET    /v1/rollouts/{id}  one batch's progress
//	DELETE /v1/rollouts/{id}  cancel a batch (202)
//	GET    /v1/tasks          the trainable tasks (TaskInfo), in config order
//	GET    /healthz           "ok" (no token)
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/v1/rollouts", s.bearer(http.HandlerFunc(s.rollouts)))
	mux.Handle("/v1/rollouts/", s.bearer(http.HandlerFunc(s.rollout)))
	mux.Handle("/v1/tasks", s.bearer(http.HandlerFunc(s.listTasks)))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, refuse(http.StatusNotFound, CodeNotFound, "no route %s %s (see docs/rollout-service.md)", r.Method, r.URL.Path))
	})
	return mux
}

func (s *Service) bearer(h http.Handler) http.Handler {
	if s.opts.Token == "" {
		return h
	}
	want := []byte(s.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
			writeError(w, refuse(http.StatusUnauthorized, CodeUnauthorized, "missing or wrong bearer token"))
			return
		}
		h.ServeHTTP(w, r)
	})
}

func writeError(w http.ResponseWriter, e *RequestError) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(e.RetryAfter.Seconds()))))
	}
	writeJSON(w, e.Status, map[string]ErrorBody{"error": e.Body})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (s *Service) rollouts(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
		s.submit(w, r)
	case http.MethodGet:
		s.mu.Lock()
		list := Status{Pending: s.pending, MaxPending: s.opts.MaxPending, Batches: []BatchStatus{}}
		for _, a := range s.batches {
			list.Batches = append(list.Batches, a.status())
		}
		s.mu.Unlock()
		slices.SortFunc(list.Batches, func(a, b BatchStatus) int { return strings.Compare(a.BatchID, b.BatchID) })
		writeJSON(w, http.StatusOK, list)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, refuse(http.StatusMethodNotAllowed, CodeMethod, "%s /v1/rollouts: use POST to submit a batch, GET to list them", r.Method))
	}
}

func (s *Service) rollout(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/v1/rollouts/")
	s.mu.Lock()
	a := s.batches[id]
	s.mu.Unlock()
	if r.Method != http.MethodGet && r.Method != http.MethodDelete {
		w.Header().Set("Allow", "GET, DELETE")
		writeError(w, refuse(http.StatusMethodNotAllowed, CodeMethod, "%s /v1/rollouts/{id}: use GET or DELETE", r.Method))
		return
	}
	if a == nil {
		writeError(w, refuse(http.StatusNotFound, CodeNotFound, "no active batch %q (finished batches are forgotten)", id))
		return
	}
	if r.Method == http.MethodDelete {
		a.cancel(errDeleted)
		s.log.Info("batch canceled", "batch", id)
		writeJSON(w, http.StatusAccepted, map[string]any{"batch_id": id, "canceled": true})
		return
	}
	writeJSON(w, http.StatusOK, a.status())
}

// TaskInfo is one task of GET /v1/tasks: its id, its number of atomic
// tasks (the groups of an atomic-turn batch, unless it stops early) and
// its source.
type TaskInfo struct {
	ID     string `json:"id"`
	Atomic int    `json:"atomic"`
	Source string `json:"source,omitempty"`
}

func (s *Service) listTasks(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeError(w, refuse(http.StatusMethodNotAllowed, CodeMethod, "%s /v1/tasks: use GET", r.Method))
		return
	}
	out := struct {
		Tasks []TaskInfo `json:"tasks"`
	}{Tasks: []TaskInfo{}}
	for _, t := range s.opts.Tasks {
		if len(t.Atomic) > 0 {
			out.Tasks = append(out.Tasks, TaskInfo{ID: t.ID, Atomic: len(t.Atomic), Source: t.Source})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// Status is GET /v1/rollouts.
type Status struct {
	Pending    int           `json:"pending"`
	MaxPending int           `json:"max_pending"`
	Batches    []BatchStatus `json:"batches"`
}

// BatchStatus is one admitted batch.
type BatchStatus struct {
	BatchID   string  `json:"batch_id"`
	Tasks     int     `json:"tasks"`
	TasksDone int     `json:"tasks_done"`
	Groups    int     `json:"groups"`
	ElapsedMS float64 `json:"elapsed_ms"`
}

func (a *active) status() BatchStatus {
	a.mu.Lock()
	defer a.mu.Unlock()
	return BatchStatus{BatchID: a.b.ID, Tasks: len(a.b.Tasks), TasksDone: a.done, Groups: a.groups, ElapsedMS: ms(time.Since(a.b.Admitted))}
}

func ms(d time.Duration) float64 { return math.Round(float64(d.Microseconds())) / 1000 }

var batchIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// decode reads a request strictly: one JSON object, no unknown fields, no
// trailing data, at most MaxBody bytes.
func (s *Service) decode(w http.ResponseWriter, r *http.Request) (*Request, *RequestError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body over %d bytes", s.opts.MaxBody)
	}
	if err != nil {
		return nil, refuse(http.StatusBadRequest, CodeBadRequest, "reading the body: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	var req Request
	if err := dec.Decode(&req); err != nil {
		return nil, refuse(http.StatusBadRequest, CodeBadRequest, "the body is not a batch request: %v", err)
	}
	if dec.More() {
		return nil, refuse(http.StatusBadRequest, CodeBadRequest, "the body holds more than one JSON value")
	}
	return &req, nil
}

// resolve checks req and makes its batch (without admitting it).
func (s *Service) resolve(ctx context.Context, req *Request) (*Batch, *RequestError) {
	o, d := s.opts, s.opts.Defaults
	if req.BatchID != "" && !batchIDRE.MatchString(req.BatchID) {
		return nil, refuse(http.StatusBadRequest, CodeBadRequest, "batch_id %q: want 1 to 128 of A-Z a-z 0-9 . _ -", req.BatchID)
	}
	if len(req.Tasks) == 0 {
		return nil, refuse(http.StatusBadRequest, CodeBadRequest, "tasks: at least one task id is required")
	}
	if e := checkEndpoint(req.Policy); e != nil {
		return nil, e
	}
	// The sampling block's own bounds (core/config), not the endpoint's:
	// a temperature a model server refuses per request would turn every
	// task into a task_error.
	if err := req.Sampling.Check(); err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "sampling: %v", err)
	}
	g := req.GroupSize
	if g == 0 {
		g = d.GroupSize
	}
	if len(req.Tasks) > o.MaxBatchTasks {
		return nil, refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, "%d tasks in one batch, at most %d", len(req.Tasks), o.MaxBatchTasks)
	}
	if g > o.MaxGroupSize {
		return nil, refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, "group_size %d, at most %d", g, o.MaxGroupSize)
	}
	if n := len(req.Tasks) * g; n > o.MaxCandidates {
		return nil, refuse(http.StatusRequestEntityTooLarge, CodeTooLarge, "%d tasks x G = %d is %d candidates per turn, at most %d; split the batch", len(req.Tasks), g, n, o.MaxCandidates)
	}
	if g < train.MinGroupSize {
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "group_size %d < %d: a group-normalised advantage compares each candidate with the others", g, train.MinGroupSize)
	}
	gp := pipeline.GRPOSpec{G: g, Eps: req.Eps, Level: or(req.Level, d.Level), Continue: or(req.Continue, d.Continue), Mask: d.Mask,
		Reward: or(req.Reward, d.Reward), View: or(req.View, d.View), Harness: or(req.Harness, d.Harness), Seed: req.Seed}
	if req.Mask != nil {
		gp.Mask = *req.Mask
	}
	if gp.Eps == 0 {
		gp.Eps = d.Eps
	}
	switch {
	case gp.Eps < 0 || math.IsNaN(gp.Eps) || math.IsInf(gp.Eps, 0):
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "eps %v: want a finite number > 0", gp.Eps)
	case gp.Level != train.LevelAtomicTurn && gp.Level != train.LevelTrajectory:
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "level %q: want %q or %q", gp.Level, train.LevelAtomicTurn, train.LevelTrajectory)
	case !slices.Contains([]string{train.ContinueFirst, train.ContinueRandom, train.ContinueReference}, gp.Continue):
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "continue %q: want %q, %q or %q", gp.Continue, train.ContinueFirst, train.ContinueRandom, train.ContinueReference)
	case !slices.Contains(pipeline.RewardNames(), gp.Reward):
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "reward %q: want one of %s", gp.Reward, strings.Join(pipeline.RewardNames(), ", "))
	case gp.View != task.ViewAgentic && gp.View != task.ViewSimUser:
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "view %q: want %q or %q", gp.View, task.ViewAgentic, task.ViewSimUser)
	case !s.harnesses[gp.Harness]:
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "harness %q is not declared in the service's config (declared: %s)", gp.Harness, strings.Join(sortedKeys(s.harnesses), ", "))
	}
	b := &Batch{ID: req.BatchID, GRPO: gp, Endpoint: req.Policy, Sampling: req.Sampling, DataSource: req.DataSource}
	if b.DataSource == "" {
		b.DataSource = "weft/" + o.Name
	}
	if sr := req.SFT; sr != nil {
		mode := or(sr.Mode, train.ModePrefix)
		if mode != train.ModePrefix && mode != train.ModeEndToEnd {
			return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "sft.mode %q: want %q or %q", sr.Mode, train.ModePrefix, train.ModeEndToEnd)
		}
		if sr.Retries < 0 || sr.Threshold < 0 || sr.Threshold > 1 {
			return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "sft: retries must be >= 0 and threshold in [0, 1]")
		}
		b.SFT = &pipeline.SFTSpec{View: gp.View, Harness: gp.Harness, Mode: mode, Retries: sr.Retries, Threshold: sr.Threshold, Seed: req.Seed}
	}
	seen := map[string]bool{}
	var unknown, untrainable, dup []string
	for _, id := range req.Tasks {
		t, ok := s.tasks[id]
		switch {
		case seen[id]:
			dup = append(dup, id)
		case !ok:
			unknown = append(unknown, id)
		case len(t.Atomic) == 0:
			untrainable = append(untrainable, id)
		}
		seen[id] = true
		b.Tasks = append(b.Tasks, t)
	}
	if len(unknown) > 0 {
		e := refuse(http.StatusUnprocessableEntity, CodeUnknownTask, "%d task ids are not tasks of the service's config, e.g. %q", len(unknown), unknown[0])
		e.Body.Tasks = unknown
		return nil, e
	}
	if len(dup) > 0 {
		e := refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "task %q is named more than once (its groups would share ids)", dup[0])
		e.Body.Tasks = dup
		return nil, e
	}
	if len(untrainable) > 0 {
		e := refuse(http.StatusUnprocessableEntity, CodeNotTrainable, "%d tasks have no atomic task (no turn to sample a group at), e.g. %q", len(untrainable), untrainable[0])
		e.Body.Tasks = untrainable
		return nil, e
	}
	if err := s.checkHarness(ctx, gp.Harness); err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "%v", err)
	}
	pol, err := pipeline.EndpointPolicy(b.ConfigEndpoint(), b.Sampling, b.getenv)
	if err != nil {
		return nil, refuse(http.StatusUnprocessableEntity, CodeInvalidArgument, "policy: %v", err)
	}
	b.policy = pol
	return b, nil
}

func (s *Service) checkHarness(ctx context.Context, name string) error {
	if s.opts.CheckHarness == nil {
		return nil
	}
	s.mu.Lock()
	err, ok := s.harnessC[name]
	s.mu.Unlock()
	if ok {
		return err
	}
	err = s.opts.CheckHarness(ctx, name)
	if ctx.Err() != nil {
		return err // not kept: the caller went away
	}
	s.mu.Lock()
	s.harnessC[name] = err
	s.mu.Unlock()
	return err
}

func or(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func sortedKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// admit registers b and counts its tasks as pending, or refuses it.
func (s *Service) admit(b *Batch, cancel context.CancelCauseFunc) (*active, *RequestError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, refuse(http.StatusServiceUnavailable, CodeShuttingDown, "%v", errShutdown)
	}
	if b.ID == "" {
		var r [8]byte
		_, _ = rand.Read(r[:])
		b.ID = "b-" + hex.EncodeToString(r[:])
	}
	if _, dup := s.batches[b.ID]; dup {
		return nil, refuse(http.StatusConflict, CodeConflict, "batch %q is still running (DELETE /v1/rollouts/%s cancels it)", b.ID, b.ID)
	}
	if n := len(b.Tasks); s.pending+n > s.opts.MaxPending {
		e := refuse(http.StatusTooManyRequests, CodeAtCapacity, "%d tasks pending, %d more would pass the bound of %d; retry after the Retry-After", s.pending, n, s.opts.MaxPending)
		e.RetryAfter = s.opts.RetryAfter
		return nil, e
	}
	s.pending += len(b.Tasks)
	b.Admitted = time.Now()
	a := &active{b: b, cancel: cancel}
	s.batches[b.ID] = a
	return a, nil
}

// finish releases one task of a (or, with all, the rest of them) from the
// admission count.
func (s *Service) release(n int) {
	s.mu.Lock()
	s.pending -= n
	s.mu.Unlock()
}

func (s *Service) forget(a *active) {
	s.mu.Lock()
	delete(s.batches, a.b.ID)
	s.mu.Unlock()
}

// out is one item of a job on its way to the stream writer.
type out struct {
	task *task.Task
	item *Item
	sum  *Summary // job ended: done ...
	err  error    // ... or failed
	end  bool
}

func (s *Service) submit(w http.ResponseWriter, r *http.Request) {
	req, rerr := s.decode(w, r)
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	b, rerr := s.resolve(r.Context(), req)
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	a, rerr := s.admit(b, cancel)
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	defer s.forget(a)
	s.log.Info("batch admitted", "batch", b.ID, "tasks", len(b.Tasks), "group_size", b.GRPO.G)

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	rc := http.NewResponseController(w)
	writeFailed := false
	send := func(v any) {
		if writeFailed {
			return
		}
		if err := enc.Encode(v); err == nil {
			if err = bw.Flush(); err == nil {
				err = rc.Flush()
			}
			if err == nil {
				return
			}
		}
		writeFailed = true
		cancel(errors.New("the client stopped reading the stream"))
	}
	send(Accepted{Type: LineAccepted, BatchID: b.ID, Tasks: len(b.Tasks), GroupSize: b.GRPO.G, Level: b.GRPO.Level, View: b.GRPO.View, Harness: b.GRPO.Harness})

	ch := make(chan out)
	var wg sync.WaitGroup
	for _, t := range b.Tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.job(ctx, a, t, ch)
		}()
	}
	go func() { wg.Wait(); close(ch) }()

	d := Done{Type: LineDone, BatchID: b.ID, Tasks: len(b.Tasks)}
	for o := range ch {
		switch {
		case o.item != nil && o.item.Group != nil:
			gl := groupLine(b, o.item.Group, d.Groups)
			d.Groups++
			d.Segments += len(gl.Segments)
			a.mu.Lock()
			a.groups++
			a.mu.Unlock()
			send(gl)
		case o.item != nil && o.item.SFT != nil:
			send(sftLine(b, o.item.SFT))
		case o.end && o.err == nil:
			send(TaskDone{Type: LineTaskDone, BatchID: b.ID, TaskID: o.task.ID, Groups: o.sum.Groups, Stopped: o.sum.Stopped,
				StopReason: o.sum.StopReason, ElapsedMS: ms(time.Since(b.Admitted))})
		case o.end:
			d.TasksFailed++
			if ctx.Err() == nil {
				send(TaskError{Type: LineTaskError, BatchID: b.ID, TaskID: o.task.ID, Error: errorBody(o.err)})
			}
		}
	}
	d.Canceled = ctx.Err() != nil
	d.ElapsedMS = ms(time.Since(b.Admitted))
	if d.Canceled {
		s.log.Info("batch canceled", "batch", b.ID, "cause", context.Cause(ctx))
	}
	send(d)
	s.log.Info("batch done", "batch", b.ID, "groups", d.Groups, "failed", d.TasksFailed, "canceled", d.Canceled, "elapsed_ms", d.ElapsedMS)
}

// job runs one task of a batch through the dispatcher, at most
// Concurrency jobs at once over all batches.
func (s *Service) job(ctx context.Context, a *active, t *task.Task, ch chan<- out) {
	defer s.release(1)
	end := func(o out) {
		o.task, o.end = t, true
		a.mu.Lock()
		a.done++
		a.mu.Unlock()
		ch <- o // the writer drains ch until every job has ended
	}
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		end(out{err: context.Cause(ctx)})
		return
	}
	defer func() { <-s.sem }()
	emit := func(it Item) error {
		select {
		case ch <- out{task: t, item: &it}:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	sum, err := s.opts.Dispatcher.Run(ctx, a.b, t, emit)
	if err == nil && ctx.Err() != nil {
		err = context.Cause(ctx)
	}
	end(out{sum: sum, err: err})
}

// errorBody is the task_error body of a failed job: the infrastructure
// failure's kind (rollout.InfraError.Code) or "error".
func errorBody(err error) ErrorBody {
	if ie, ok := rollout.IsInfra(err); ok {
		return ErrorBody{Code: ie.Code(), Message: err.Error()}
	}
	return ErrorBody{Code: "error", Message: err.Error()}
}

// groupLine encodes a finished group with the exports' own code
// (GRPOResult.Segments and VerlRecords over a one-group result); index is
// the verl row's extra_info.index, the group's position in the batch's
// stream.
func groupLine(b *Batch, g *train.Group, index int) GroupLine {
	one := &train.GRPOResult{TaskID: g.TaskID, Level: g.Level, Groups: []train.Group{*g}}
	gl := GroupLine{Type: LineGroup, BatchID: b.ID, TaskID: g.TaskID, GroupID: g.ID, Turn: g.Turn, Atomic: g.Atomic, Level: g.Level,
		NonZero: g.NonZero, Continued: g.Continued, Segments: one.Segments(), ElapsedMS: ms(time.Since(b.Admitted))}
	if gl.Segments == nil {
		gl.Segments = []train.RLSegment{}
	}
	// Lists are [] even for a group without candidates, never null.
	gl.Rewards = make([]float64, 0, len(g.Candidates))
	gl.Advantages = make([]float64, 0, len(g.Candidates))
	gl.Masked = make([]bool, 0, len(g.Candidates))
	for _, c := range g.Candidates {
		gl.Rewards = append(gl.Rewards, c.Reward)
		gl.Advantages = append(gl.Advantages, c.Advantage)
		gl.Masked = append(gl.Masked, c.Masked)
	}
	if recs := one.VerlRecords(train.VerlOptions{DataSource: b.DataSource, StartIndex: int64(index)}); len(recs) == 1 {
		gl.Verl = &recs[0]
	}
	return gl
}

func sftLine(b *Batch, r *train.SampleResult) SFTLine {
	l := SFTLine{Type: LineSFT, BatchID: b.ID, TaskID: r.TaskID, Mode: r.Mode, Accepted: r.Accepted, KeptTurns: r.KeptTurns,
		Attempts: r.Attempts, ElapsedMS: ms(time.Since(b.Admitted))}
	if rec, ok := r.SFT(); ok {
		l.Record = &rec
	}
	return l
}
