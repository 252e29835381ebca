package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/internal/queue"
	"github.com/weft-dev/weft/megamcp/registry"
)

// queueFlags are the work-queue flags of weft run and weft worker.
type queueFlags struct {
	url     string
	store   string
	ackWait time.Duration
	wait    time.Duration // how long to wait for the server (weft worker: long)
}

func (q *queueFlags) add(cmd *cobra.Command, what string) {
	cmd.Flags().StringVar(&q.url, "queue", "", what)
	cmd.Flags().StringVar(&q.store, "queue-store", "", "JetStream store directory of an embedded NATS server (default: the user cache dir's weft/nats)")
	cmd.Flags().DurationVar(&q.ackWait, "queue-ack-wait", 30*time.Second, "how long a job may run without a sign of life before NATS redelivers it to another worker")
}

// open opens the flags' queue at url with queue.Open (starting an embedded
// NATS server first when the URL says so); stop closes the queue, then
// the server. A malformed URL is a usage error.
func (q *queueFlags) open(ctx context.Context, a *app, url string) (*queue.Queue, func(), error) {
	qu, e, err := queue.Open(ctx, url, queue.OpenOptions{
		Options:  queue.Options{AckWait: q.ackWait, Log: a.log(), Name: "weft", Wait: q.wait},
		StoreDir: q.store,
	})
	if errors.Is(err, queue.ErrBadURL) {
		return nil, nil, &UsageError{Err: err}
	}
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return qu, qu.Close, nil
	}
	fmt.Fprintf(a.env.Stderr, "weft: embedded NATS JetStream at %s (store %s); start workers with: weft worker --queue %s\n", e.URL(), e.StoreDir(), e.URL())
	return qu, func() { qu.Close(); e.Shutdown() }, nil
}

func newWorkerCmd(a *app) *cobra.Command {
	var qf queueFlags
	var f moduleFlags
	var conc, maxJobs, maxBuilt int
	var registryURL string
	var callTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "worker --queue URL",
		Short: "Run rollout, SFT and GRPO jobs from a NATS JetStream work queue (weft run --queue)",
		Long: `Takes the jobs weft run --queue publishes (rollout episodes, SFT tasks, a task's
whole GRPO run) from the queue's durable work stream, runs each with this
process's own MegaMCP server and plugin processes, and publishes the result;
a job is acked only after its result is durable, so a worker that dies has
its jobs redelivered to another after --queue-ack-wait.

Each job carries its run's config (HCL source and path) and the digests of
its modules: the worker rebuilds the experiment with the modules taken by
digest from --registry (a directory shared with the coordinator) or pulled
from --registry-url (weft serve's registry). A worker that cannot get a
digest refuses the job as an infrastructure failure (module no_such_module)
and hands it back for another worker. Task and data files are read at the
paths the config names (one machine, or a shared volume).

Until the server is reachable the worker keeps trying (up to 24 h, so it
may start before NATS), logging a warning at once and every 10 s.

SIGINT/SIGTERM hand the running jobs back and exit 0. See docs/design/033-work-queue.md.`,
		Example: `  # Three local workers beside weft run --queue embedded
  weft worker --queue nats://127.0.0.1:4222 &
  weft worker --queue nats://127.0.0.1:4222 &
  weft worker --queue nats://127.0.0.1:4222 &
  weft run configs/tau2-retail.hcl --queue embedded`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if qf.url == "" {
				return usageErrorf("weft worker needs --queue URL (nats://HOST:PORT)")
			}
			if queue.IsEmbedded(qf.url) {
				return usageErrorf("weft worker --queue %s: a worker connects to the NATS server of a coordinator (nats://HOST:PORT); \"embedded\" starts one inside weft run or weft rollout-service", qf.url)
			}
			if conc < 1 {
				return usageErrorf("--concurrency must be at least 1, got %d", conc)
			}
			if maxBuilt < 1 {
				return usageErrorf("--max-built must be at least 1, got %d", maxBuilt)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			rt, err := f.runtimeWith(ctx, module.Config{CallTimeout: callTimeout})
			if err != nil {
				return err
			}
			defer rt.Close(context.Background())
			reg, err := f.openRegistry()
			if err != nil {
				return err
			}
			qf.wait = 24 * time.Hour // a worker waits for its server
			q, closeQ, err := qf.open(ctx, a, qf.url)
			if err != nil {
				return err
			}
			defer closeQ()
			o := queue.WorkerOptions{Concurrency: conc, Runtime: rt, Registry: reg, MaxJobs: maxJobs, MaxBuilt: maxBuilt}
			if registryURL != "" {
				c := &registry.Client{BaseURL: registryURL}
				o.Pull = func(ctx context.Context, digest string) ([]byte, error) {
					tar, _, err := c.Pull(ctx, digest)
					return tar, err
				}
			}
			w := q.Worker(o)
			fmt.Fprintf(a.env.Stderr, "weft worker: taking jobs from %s (concurrency %d)\n", qf.url, conc)
			if err := w.Run(ctx); err != nil {
				return err
			}
			s := w.Stats()
			fmt.Fprintf(a.env.Stderr, "weft worker: %d jobs done, %d refused, %d malformed dropped, %d handed back\n", s.Done, s.Refused, s.Malformed, s.Requeued)
			return nil
		},
	}
	qf.add(cmd, "the NATS server's URL, nats://HOST:PORT (required)")
	cmd.Flags().IntVar(&conc, "concurrency", 1, "jobs run at once")
	cmd.Flags().IntVar(&maxJobs, "max-jobs", 0, "exit after this many jobs (0 = run until stopped)")
	cmd.Flags().IntVar(&maxBuilt, "max-built", queue.DefaultMaxBuilt, "distinct experiments (run configs) kept built between jobs; the least recently used idle one is closed past this")
	cmd.Flags().StringVar(&registryURL, "registry-url", "", "a weft serve registry to pull module digests from when --registry has not them")
	cmd.Flags().DurationVar(&callTimeout, "call-timeout", 30*time.Second, "deadline of one tool call in a module")
	f.add(cmd)
	return cmd
}

// dispatcherFor is weft run's dispatcher when a queue is configured (the
// --queue flag, else the config's rollout.queue): nil, nil for none.
func dispatcherFor(ctx context.Context, a *app, qf *queueFlags, cfgQueue, file string, vars map[string]string, b *pipeline.Built) (*queue.Dispatcher, func(), error) {
	q, run, stop, err := queueFor(ctx, a, qf, cfgQueue, file, vars, b)
	if q == nil || err != nil {
		return nil, stop, err
	}
	return q.Dispatcher(run), stop, nil
}

// queueFor opens the queue configured (the --queue flag, else cfgQueue)
// and returns it with the run descriptor of the experiment b built from
// file with vars; a nil queue when none is configured.
func queueFor(ctx context.Context, a *app, qf *queueFlags, cfgQueue, file string, vars map[string]string, b *pipeline.Built) (*queue.Queue, queue.Run, func(), error) {
	url := qf.url
	if url == "" {
		url = cfgQueue
	}
	if url == "" {
		return nil, queue.Run{}, func() {}, nil
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, queue.Run{}, nil, err
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, queue.Run{}, nil, err
	}
	q, stop, err := qf.open(ctx, a, url)
	if err != nil {
		return nil, queue.Run{}, nil, err
	}
	return q, queue.Run{ID: queue.NewRunID(), Config: src, File: abs, Vars: vars, Modules: b.Modules}, stop, nil
}
