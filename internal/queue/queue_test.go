package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/megamcp/megamcptest"
	"github.com/weft-dev/weft/plugins/host"
)

// TestMain lets the test binary stand in for weft when the launcher
// re-executes it as `weft plugin serve NAME`.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "plugin" && os.Args[2] == "serve" {
		if err := host.ServeBuiltin(os.Args[3]); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testConfig is a small offline experiment over the retail module pinned
// by digest: 2 tau2 tasks x 2 episodes over two harnesses and both views,
// SFT and GRPO (G = 2) on the scripted policy with faults.
func testConfig(digest string) string {
	root := megamcptest.Root()
	return fmt.Sprintf(`module "retail" {
  digest = %q
}
tasks "retail" {
  tau2          = "%[2]s/examples/data/tau2-retail/tasks.json"
  system_prompt = "%[2]s/examples/data/tau2-retail/policy.md"
  modules       = ["retail"]
  limit         = 2
}
policy "scripted" {
  scripted {
    seed = 7
    faults {
      wrong_argument = 0.15
      skip_step      = 0.1
      early_stop     = 0.05
    }
  }
}
harness "react" {}
harness "native" {}
view "agentic" {}
view "simuser" {}
mix {
  entry {
    view    = "agentic"
    harness = "react"
  }
  entry {
    view    = "simuser"
    harness = "native"
  }
}
rollout {
  policy            = "scripted"
  episodes_per_task = 2
  concurrency       = 2
  retries           = 1
  max_turns         = 40
  seed              = 3
}
sft {
  policy  = "scripted"
  retries = 1
  view    = "simuser"
  harness = "native"
}
grpo {
  policy     = "scripted"
  group_size = 2
  view       = "simuser"
  harness    = "native"
}
pipeline {
  stages = ["import", "rollout", "verify", "attribute", "sft", "grpo", "export", "report"]
}
output {
  dir = "unused"
}
`, digest, root)
}

// The experiment's episodes (2 tasks x 2) and all its units (plus 2 SFT
// and 2 GRPO tasks).
const (
	wantEpisodes = 4
	wantUnits    = wantEpisodes + 4
)

type fixture struct {
	regDir string
	file   string
	src    []byte
	rt     *module.Runtime
	// ref is the in-process run's folder.
	ref string
}

var (
	fixOnce sync.Once
	fix     fixture
	fixErr  error
)

// setup builds the registry, the config file and the in-process
// reference run once per test process.
func setup(t *testing.T) *fixture {
	t.Helper()
	fixOnce.Do(func() {
		dir, err := os.MkdirTemp("", "weft-queue-test-")
		if err != nil {
			fixErr = err
			return
		}
		reg, err := module.OpenRegistry(filepath.Join(dir, "registry"))
		if err != nil {
			fixErr = err
			return
		}
		d, err := reg.PutTar(megamcptest.Bundle(t, "retail"), "")
		if err != nil {
			fixErr = err
			return
		}
		fix.regDir = reg.Dir()
		fix.src = []byte(testConfig(d))
		fix.file = filepath.Join(dir, "exp.hcl")
		if fixErr = os.WriteFile(fix.file, fix.src, 0o644); fixErr != nil {
			return
		}
		if fix.rt, fixErr = module.NewRuntime(context.Background(), module.Config{CacheDir: megamcptest.CacheDir(), CallTimeout: 30 * time.Second}); fixErr != nil {
			return
		}
		fix.ref = filepath.Join(dir, "ref")
		b, err := fix.build(context.Background(), fix.regDir)
		if err != nil {
			fixErr = err
			return
		}
		defer b.Close()
		_, fixErr = pipeline.Run(context.Background(), b.Spec, pipeline.Options{Dir: fix.ref, GeneratedAt: "t"})
	})
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return &fix
}

func (f *fixture) build(ctx context.Context, regDir string) (*pipeline.Built, error) {
	cfg, diags := config.Parse(f.src, f.file, config.LoadOptions{})
	if cfg == nil {
		return nil, diags
	}
	reg, err := module.OpenRegistry(regDir)
	if err != nil {
		return nil, err
	}
	return pipeline.FromConfig(ctx, cfg, pipeline.Env{Runtime: f.rt, Registry: reg})
}

// cluster is an embedded NATS server and in-process workers.
type cluster struct {
	t       *testing.T
	store   string
	port    int
	srv     *Embedded
	opts    Options
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	workers []*Worker
	ctxs    context.Context
}

func newCluster(t *testing.T, o Options) *cluster {
	t.Helper()
	c := &cluster{t: t, store: t.TempDir(), opts: o}
	e, err := StartEmbedded(EmbeddedOptions{Port: -1, StoreDir: c.store})
	if err != nil {
		t.Fatal(err)
	}
	c.srv = e
	fmt.Sscanf(e.URL()[len("nats://127.0.0.1:"):], "%d", &c.port)
	t.Cleanup(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.wg.Wait()
		c.srv.Shutdown()
	})
	return c
}

func (c *cluster) connect() *Queue {
	c.t.Helper()
	q, err := Connect(context.Background(), c.srv.URL(), c.opts)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(q.Close)
	return q
}

// start starts a worker over registry regDir, each with its own
// connection.
func (c *cluster) start(regDir string, o WorkerOptions) *Worker {
	c.t.Helper()
	reg, err := module.OpenRegistry(regDir)
	if err != nil {
		c.t.Fatal(err)
	}
	o.Registry, o.Runtime = reg, fix.rt
	if o.Name == "" {
		o.Name = fmt.Sprintf("w%d", len(c.workers))
	}
	w := c.connect().Worker(o)
	if c.cancel == nil {
		var ctx context.Context
		ctx, c.cancel = context.WithCancel(context.Background())
		c.ctxs = ctx
	}
	c.workers = append(c.workers, w)
	c.wg.Go(func() {
		if err := w.Run(c.ctxs); err != nil {
			c.t.Error(err)
		}
	})
	return w
}

// run runs the experiment through d into a fresh folder.
func (c *cluster) run(ctx context.Context, d *Dispatcher) (string, *pipeline.Result, error) {
	c.t.Helper()
	f := setup(c.t)
	b, err := f.build(ctx, f.regDir)
	if err != nil {
		c.t.Fatal(err)
	}
	defer b.Close()
	if d.run.Config == nil {
		d.run = Run{ID: d.run.ID, Config: f.src, File: f.file, Modules: b.Modules}
	}
	out := filepath.Join(c.t.TempDir(), "run")
	res, err := pipeline.Run(ctx, b.Spec, pipeline.Options{Dir: out, GeneratedAt: "t", Dispatcher: d})
	return out, res, err
}

// sameFolder compares two run folders: metrics.json and every dataset
// byte for byte, the journals line for line after sorting by key with the
// wall times dropped; episodes.jsonl must hold each job once.
func sameFolder(t *testing.T, want, got string) {
	t.Helper()
	for _, name := range []string{"metrics.json", "config.json", "tasks.weft.json", "failures.json"} {
		sameFile(t, filepath.Join(want, name), filepath.Join(got, name))
	}
	ds, err := os.ReadDir(filepath.Join(want, "datasets"))
	if err != nil || len(ds) == 0 {
		t.Fatalf("reference datasets: %v (%d files)", err, len(ds))
	}
	for _, e := range ds {
		sameFile(t, filepath.Join(want, "datasets", e.Name()), filepath.Join(got, "datasets", e.Name()))
	}
	for _, name := range []string{"episodes.jsonl", "trajectories.jsonl", "sft.jsonl", "grpo.jsonl"} {
		w, g := journal(t, filepath.Join(want, name)), journal(t, filepath.Join(got, name))
		if len(w) != len(g) {
			t.Errorf("%s: %d lines, want %d", name, len(g), len(w))
			continue
		}
		for i := range w {
			if w[i] != g[i] {
				t.Errorf("%s line %d differs:\n got %.300s\nwant %.300s", name, i, g[i], w[i])
				break
			}
		}
	}
	if n := len(journal(t, filepath.Join(got, "episodes.jsonl"))); n != wantEpisodes {
		t.Errorf("episodes.jsonl holds %d episodes, want %d", n, wantEpisodes)
	}
}

func sameFile(t *testing.T, want, got string) {
	t.Helper()
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(w, g) {
		t.Errorf("%s differs from the in-process run's (%d vs %d bytes)", got, len(g), len(w))
	}
}

// dropDurations removes every "duration_ms" (wall clock) from v.
func dropDurations(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "duration_ms")
		for k, e := range x {
			x[k] = dropDurations(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropDurations(e)
		}
	}
	return v
}

// journal is a journal's lines sorted, each without "duration_ms"; a key
// appearing twice fails the test.
func journal(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]bool{}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		k := string(m["key"])
		if seen[k] {
			t.Errorf("%s: key %s twice", path, k)
		}
		seen[k] = true
		var v any
		json.Unmarshal(l, &v)
		c, _ := json.Marshal(dropDurations(v))
		out = append(out, string(c))
	}
	sort.Strings(out)
	return out
}

// volume skips a test outside make queue-test (WEFT_QUEUE_TEST=1): a
// queued run each, tens of seconds on 2 cores.
func volume(t *testing.T) {
	if os.Getenv("WEFT_QUEUE_TEST") == "" {
		t.Skip("set WEFT_QUEUE_TEST=1 (make queue-test)")
	}
}

// Three workers on an embedded server give the in-process run's folder.
func TestThreeWorkersSameResults(t *testing.T) {
	f := setup(t)
	c := newCluster(t, Options{AckWait: 5 * time.Second})
	for range 3 {
		c.start(f.regDir, WorkerOptions{Concurrency: 2})
	}
	d := c.connect().Dispatcher(Run{ID: NewRunID()})
	out, res, err := c.run(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	sameFolder(t, f.ref, out)
	s := d.Stats()
	// A refusal (a worker whose build of the experiment failed, say under
	// -race on a loaded machine) is retried elsewhere: allowed, logged.
	if s.Published != wantUnits || s.Results != wantUnits || s.Malformed != 0 || s.RefusedOut != 0 {
		t.Errorf("stats %+v, want every unit published and one result each", s)
	}
	t.Logf("dispatcher stats %+v", s)
	done := 0
	for _, w := range c.workers {
		done += w.Stats().Done
	}
	if done < wantUnits {
		t.Errorf("workers did %d jobs, want at least %d", done, wantUnits)
	}
	if res.Metrics.Episodes != wantEpisodes {
		t.Errorf("metrics: %d episodes, want %d", res.Metrics.Episodes, wantEpisodes)
	}
}

// Malformed messages on the job and result subjects are reported as
// *MessageError and dropped; the run loses nothing.
func TestMalformedMessagesLoseNothing(t *testing.T) {
	f := setup(t)
	c := newCluster(t, Options{AckWait: 5 * time.Second})
	var mu sync.Mutex
	var jobErrs, resErrs []*MessageError
	w := c.start(f.regDir, WorkerOptions{Concurrency: 2, OnMalformed: func(e *MessageError) {
		mu.Lock()
		jobErrs = append(jobErrs, e)
		mu.Unlock()
	}})
	q := c.connect()
	id := NewRunID()
	ctx := context.Background()
	for _, bad := range []string{"not json", `{"v":1,"run":{"id":"` + id + `"},"unit":{"stage":"rollout","key":"x"}}`, `{"v":9}`} {
		if err := q.publish(ctx, jobsPrefix+id, []byte(bad), ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []string{"{", `{"v":1,"run":"` + id + `","worker":"evil","result":{"stage":"rollout","key":"k"}}`} {
		if err := q.publish(ctx, resultsPrefix+id, []byte(bad), ""); err != nil {
			t.Fatal(err)
		}
	}
	d := q.Dispatcher(Run{ID: id})
	d.OnMalformed = func(e *MessageError) { resErrs = append(resErrs, e) }
	out, _, err := c.run(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	sameFolder(t, f.ref, out)
	if s := d.Stats(); s.Malformed != 2 || s.Results != wantUnits {
		t.Errorf("dispatcher stats %+v, want 2 malformed and one result per unit", s)
	}
	if len(resErrs) != 2 || !errors.Is(resErrs[0], ErrMalformed) || resErrs[0].Subject != resultsPrefix+id || resErrs[0].Seq == 0 {
		t.Errorf("result errors %v, want 2 *MessageError on %s with a sequence", resErrs, resultsPrefix+id)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(jobErrs) != 3 || w.Stats().Malformed != 3 {
		t.Errorf("job errors %v (stats %+v), want 3", jobErrs, w.Stats())
	}
}

// A worker whose registry lacks the module refuses every job as a typed
// infrastructure failure; another worker runs them and the results are
// the in-process run's.
func TestWorkerLackingModuleRefuses(t *testing.T) {
	volume(t)
	f := setup(t)
	c := newCluster(t, Options{AckWait: 5 * time.Second, MaxRefusals: 1000})
	empty := t.TempDir()
	lacking := c.start(empty, WorkerOptions{Concurrency: 1, Name: "lacking"})
	// The lacking worker alone for a moment takes (and refuses) the first
	// jobs; then one that has the module joins.
	d := c.connect().Dispatcher(Run{ID: NewRunID()})
	go func() {
		for lacking.Stats().Refused == 0 {
			time.Sleep(20 * time.Millisecond)
		}
		c.start(f.regDir, WorkerOptions{Concurrency: 2, Name: "full"})
	}()
	out, _, err := c.run(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	sameFolder(t, f.ref, out)
	if lacking.Stats().Done != 0 || lacking.Stats().Refused == 0 || d.Stats().Refusals == 0 {
		t.Errorf("lacking worker %+v, dispatcher %+v: want refusals and no job done", lacking.Stats(), d.Stats())
	}
}

// With no worker able to get the module, each unit ends after
// MaxRefusals refusals as the typed failure (module no_such_module).
func TestNoWorkerHasModule(t *testing.T) {
	setup(t)
	c := newCluster(t, Options{AckWait: 5 * time.Second, MaxRefusals: 2})
	c.start(t.TempDir(), WorkerOptions{Concurrency: 4})
	d := c.connect().Dispatcher(Run{ID: NewRunID()})
	_, res, err := c.run(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Metrics.Episodes != wantEpisodes || res.Metrics.ScoredEpisodes != 0 {
		t.Errorf("metrics: %d episodes, %d scored; want %d, 0", res.Metrics.Episodes, res.Metrics.ScoredEpisodes, wantEpisodes)
	}
	if len(res.Infra) != 1 || res.Infra[0].Kind != "module_no_such_module" || res.Infra[0].Episodes != wantEpisodes {
		t.Errorf("infra %+v, want %d episodes of module_no_such_module", res.Infra, wantEpisodes)
	}
	if len(res.Failures) != wantUnits-wantEpisodes || res.Failures[0].Kind != "module_no_such_module" {
		t.Errorf("training failures %+v, want %d of module_no_such_module", res.Failures, wantUnits-wantEpisodes)
	}
	if s := d.Stats(); s.RefusedOut != wantUnits {
		t.Errorf("stats %+v, want every unit refused out", s)
	}
}

// The NATS server restarted mid-run (same port, same store): the run
// completes with the in-process run's results.
func TestNATSRestartMidRun(t *testing.T) {
	volume(t)
	f := setup(t)
	c := newCluster(t, Options{AckWait: 3 * time.Second})
	for range 2 {
		c.start(f.regDir, WorkerOptions{Concurrency: 1})
	}
	d := c.connect().Dispatcher(Run{ID: NewRunID()})
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		for d.Stats().Results < 4 {
			time.Sleep(20 * time.Millisecond)
		}
		c.srv.Shutdown()
		time.Sleep(500 * time.Millisecond)
		e, err := StartEmbedded(EmbeddedOptions{Port: c.port, StoreDir: c.store})
		if err != nil {
			t.Error(err)
			return
		}
		c.srv = e
	}()
	out, _, err := c.run(context.Background(), d)
	<-restarted
	if err != nil {
		t.Fatal(err)
	}
	sameFolder(t, f.ref, out)
}

// A worker with MaxBuilt 1 given jobs of three distinct configs (the same
// experiment, each config with another comment) keeps one experiment
// built, closing the others, and every run still completes.
func TestWorkerBoundsBuiltExperiments(t *testing.T) {
	f := setup(t)
	c := newCluster(t, Options{AckWait: 5 * time.Second})
	w := c.start(f.regDir, WorkerOptions{MaxBuilt: 1})
	ctx := context.Background()
	b, err := f.build(ctx, f.regDir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	q := c.connect()
	for i := range 3 {
		src := append(slices.Clone(f.src), fmt.Sprintf("\n# config %d\n", i)...)
		d := q.Dispatcher(Run{ID: NewRunID(), Config: src, File: f.file, Modules: b.Modules})
		res, err := pipeline.Run(ctx, b.Spec, pipeline.Options{Dir: filepath.Join(t.TempDir(), "run"), GeneratedAt: "t", Dispatcher: d})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if res.Metrics.Episodes != wantEpisodes {
			t.Errorf("run %d: %d episodes, want %d", i, res.Metrics.Episodes, wantEpisodes)
		}
	}
	if s := w.Stats(); s.Built != 1 || s.Evicted != 2 || s.Done < 3*wantUnits {
		t.Errorf("worker stats %+v, want 1 built, 2 evicted, at least %d done", s, 3*wantUnits)
	}
}
