package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/internal/service"
)

type rolloutServiceFlags struct {
	moduleFlags
	addr          string
	token         string
	vars          []string
	callTimeout   time.Duration
	concurrency   int
	maxPending    int
	maxBatchTasks int
	maxGroupSize  int
	queue         queueFlags
}

const rolloutServiceLong = `Serve the rollout service: an HTTP API a trainer calls every step to get
the next GRPO groups from its *current* policy (its own OpenAI-compatible
inference server: vLLM, SGLang, ...). See docs/rollout-service.md.

CONFIG is an experiment config (HCL): its modules, tasks, harnesses, limits
and system prompts are built once at start; its grpo block, when present,
gives the batch defaults (G, level, continuation, masking, reward, view,
harness). Its policies are not used: every batch names the trainer's server.

  POST   /v1/rollouts       submit a batch (task ids x G, the policy endpoint,
                            sampling, continuation, masking, SFT prefixes);
                            200 and NDJSON lines streamed as groups finish
  GET    /v1/rollouts       admitted batches
  GET    /v1/rollouts/{id}  one batch's progress
  DELETE /v1/rollouts/{id}  cancel a batch (so does closing the stream)
  GET    /healthz           "ok" (no token)

/v1 needs "Authorization: Bearer TOKEN" (--token, else $WEFT_TOKEN, else a
random one printed on stderr). A batch whose tasks would pass --max-pending
tasks in flight gets 429 with Retry-After. With --queue each task runs as
one job on a NATS JetStream work queue served by weft worker processes
(its groups then arrive together when the task is done). The Python client
clients/python/weft_rollout.py uses only the standard library.`

func newRolloutServiceCmd(a *app) *cobra.Command {
	f := &rolloutServiceFlags{}
	cmd := &cobra.Command{
		Use:   "rollout-service CONFIG",
		Short: "Serve GRPO groups to a trainer each step over HTTP (NDJSON stream)",
		Long:  rolloutServiceLong,
		Example: `  WEFT_TOKEN=secret weft rollout-service configs/tau2-retail.hcl --addr 127.0.0.1:7431
  curl -sN -H "Authorization: Bearer secret" -d '{"tasks":["0"],"group_size":8,
    "policy":{"base_url":"http://gpu:8000/v1","model":"Qwen/Qwen3-8B"}}' http://127.0.0.1:7431/v1/rollouts`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("rollout-service takes exactly one config FILE, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRolloutService(cmd.Context(), a, f, args[0])
		},
	}
	f.moduleFlags.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:7431", "listen address HOST:PORT (port 0 picks a free one)")
	fl.StringVar(&f.token, "token", "", "bearer token of /v1 (default $WEFT_TOKEN, else random)")
	fl.StringArrayVar(&f.vars, "var", nil, "set a config variable, NAME=VALUE (repeatable)")
	fl.DurationVar(&f.callTimeout, "call-timeout", 30*time.Second, "deadline of one tool call in a module")
	fl.IntVar(&f.concurrency, "concurrency", service.DefaultConcurrency, "tasks run at once over all batches (each runs G candidates at once)")
	fl.IntVar(&f.maxPending, "max-pending", service.DefaultMaxPending, "tasks admitted and not finished, over all batches; a batch past it gets 429")
	fl.IntVar(&f.maxBatchTasks, "max-batch-tasks", service.DefaultMaxBatchTasks, "tasks of one batch at most (413 past it)")
	fl.IntVar(&f.maxGroupSize, "max-group-size", service.DefaultMaxGroupSize, "G of one batch at most (413 past it)")
	f.queue.add(cmd, `run each task's GRPO on a NATS JetStream work queue served by weft worker processes: nats://HOST:PORT, or "embedded" (an in-process server on 127.0.0.1:4222, or embedded://HOST:PORT); overrides rollout.queue; groups then arrive per task, not per turn`)
	return cmd
}

// serviceDefaults are the batch defaults of cfg's grpo block (or
// service.DefaultSettings).
func serviceDefaults(cfg *config.Config) service.Defaults {
	d := service.DefaultSettings
	if g := cfg.GRPO; g != nil {
		d = service.Defaults{GroupSize: g.GroupSize, Level: g.Level, Continue: g.Continue, Mask: g.Mask, Reward: g.Reward,
			Eps: g.Eps, View: g.View, Harness: g.Harness}
	}
	return d
}

func runRolloutService(ctx context.Context, a *app, f *rolloutServiceFlags, file string) error {
	for _, c := range []error{
		flagPositive("--call-timeout", f.callTimeout),
		flagAtLeast("--concurrency", f.concurrency, 1, false),
		flagAtLeast("--max-pending", f.maxPending, 1, false),
		flagAtLeast("--max-batch-tasks", f.maxBatchTasks, 1, false),
		flagAtLeast("--max-group-size", f.maxGroupSize, 2, false), // G >= 2: a group compares candidates
	} {
		if c != nil {
			return c
		}
	}
	vm, err := parseVars(f.vars)
	if err != nil {
		return err
	}
	cfg, diags := config.Load(file, config.LoadOptions{Vars: vm})
	if cfg == nil {
		for _, d := range diags {
			fmt.Fprintln(a.env.Stderr, config.FormatDiagnostic(d))
		}
		return fmt.Errorf("%s: invalid config: %s", file, countErrors(diags))
	}
	token := f.token
	if token == "" {
		token = os.Getenv("WEFT_TOKEN")
	}
	generated := token == ""
	if generated {
		token = randomToken()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()

	rt, err := f.runtimeWith(ctx, module.Config{CallTimeout: f.callTimeout})
	if err != nil {
		return err
	}
	defer rt.Close(context.WithoutCancel(ctx))
	var reg *module.Registry
	if f.registry != "" {
		if reg, err = f.openRegistry(); err != nil {
			return err
		}
	}
	start := time.Now()
	b, err := pipeline.FromConfig(ctx, cfg, pipeline.Env{Runtime: rt, Registry: reg})
	if err != nil {
		return err
	}
	defer b.Close()
	var disp service.Dispatcher = &service.InProcess{Spec: b.Spec}
	q, run, closeQueue, err := queueFor(ctx, a, &f.queue, cfg.Rollout.Queue, file, vm, b)
	if err != nil {
		return err
	}
	defer closeQueue()
	if q != nil {
		disp = &service.Queue{Q: q, Experiment: run}
	}
	var harnesses []string
	for name := range b.Harnesses {
		harnesses = append(harnesses, name)
	}
	sort.Strings(harnesses)
	svc, err := service.New(service.Options{
		Token: token, Tasks: b.Tasks, Harnesses: harnesses, Name: b.Name, Defaults: serviceDefaults(cfg),
		CheckHarness: func(ctx context.Context, name string) error { return b.CheckResume(ctx, "rollout-service", name) },
		Dispatcher:   disp,
		Concurrency:  f.concurrency, MaxPending: f.maxPending, MaxBatchTasks: f.maxBatchTasks, MaxGroupSize: f.maxGroupSize,
		Log: a.log(),
	})
	if err != nil {
		return err
	}
	if generated {
		fmt.Fprintf(a.env.Stderr, "weft: rollout-service token (set WEFT_TOKEN to choose one): %s\n", token)
	}
	if exposureWarning(ln.Addr()) != "" {
		a.log().Info("rollout service listening beyond loopback", "addr", ln.Addr().String())
	}
	base := "http://" + ln.Addr().String()
	info := map[string]any{"addr": ln.Addr().String(), "rollouts": base + "/v1/rollouts", "tasks": len(b.Tasks),
		"ready_ms": time.Since(start).Milliseconds()}
	if err := a.print(info, func(w io.Writer) error {
		_, err := fmt.Fprintf(w, "weft rollout-service: listening on %s (%d tasks, POST %s/v1/rollouts)\n", ln.Addr(), len(b.Tasks), base)
		return err
	}); err != nil {
		return err
	}
	hs := &http.Server{Handler: svc.Handler(), ReadHeaderTimeout: 10 * time.Second}
	return serveUntilDone(ctx, a, hs, ln, svc.Close)
}
