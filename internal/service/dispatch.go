package service

import (
	"context"
	"fmt"
	"time"

	"github.com/weft-dev/weft/core/config"
	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/plugins/host"
)

// Batch is an admitted request, resolved: what a Dispatcher runs.
type Batch struct {
	ID string
	// Tasks in request order.
	Tasks []*task.Task
	// GRPO are the group settings (Policy is unused: the policy is
	// Endpoint).
	GRPO pipeline.GRPOSpec
	// SFT, when not nil, asks for rejection sampling in SFT.Mode.
	SFT *pipeline.SFTSpec
	// Endpoint and Sampling are the trainer's policy.
	Endpoint Endpoint
	Sampling config.Sampling
	// DataSource is the verl rows' data_source.
	DataSource string
	// Admitted is when the batch was admitted (latencies are from it).
	Admitted time.Time

	policy pipeline.Policy
}

// Policy is the batch's endpoint policy (pipeline.EndpointPolicy of
// Endpoint and Sampling), built once at admission.
func (b *Batch) Policy() pipeline.Policy { return b.policy }

// ConfigEndpoint is Endpoint as a config endpoint block; the API key is
// read through the getenv of EndpointGetenv.
func (b *Batch) ConfigEndpoint() *config.Endpoint {
	e := b.Endpoint
	ce := &config.Endpoint{BaseURL: e.BaseURL, Model: e.Model, Timeout: time.Duration(e.TimeoutSeconds * float64(time.Second)),
		MaxRetries: e.MaxRetries, MaxConcurrency: e.MaxConcurrency, ExtraBody: e.ExtraBody}
	if e.APIKey != "" {
		ce.APIKeyEnv = apiKeyVar
	}
	return ce
}

const apiKeyVar = "WEFT_ROLLOUT_POLICY_API_KEY"

func (b *Batch) getenv(name string) string {
	if name == apiKeyVar {
		return b.Endpoint.APIKey
	}
	return ""
}

// Item is what a job reports while it runs: exactly one of Group (a
// finished GRPO group, in turn order) and SFT (a task's rejection
// sampling).
type Item struct {
	Group *train.Group
	SFT   *train.SampleResult
}

// Summary is a finished job's outcome.
type Summary struct {
	Groups     int
	Stopped    bool
	StopReason string
}

// Dispatcher runs the jobs of batches: one task of a batch each. Run
// calls emit for each item as it is ready (from one goroutine at a time
// per job; emit blocks while the client is slow, which is the stream's
// backpressure) and returns when the task is done, or with an error when
// it failed or ctx ended. Run is called concurrently for different jobs.
type Dispatcher interface {
	Run(ctx context.Context, b *Batch, t *task.Task, emit func(Item) error) (*Summary, error)
}

// InProcess runs jobs in this process over a built spec (pipeline.Spec
// from FromConfig: server, launcher, harnesses, system prompts, limits):
// core/train.GRPO with the grpo stage's configuration
// (pipeline.GRPOConfigFor) and each group emitted as it completes, then,
// when asked, core/train.RejectionSample (pipeline.SamplingConfigFor).
type InProcess struct {
	Spec *pipeline.Spec
	refs host.ReferenceCache
}

// Run implements Dispatcher.
func (d *InProcess) Run(ctx context.Context, b *Batch, t *task.Task, emit func(Item) error) (*Summary, error) {
	env := d.Spec.TrainEnvFor(b.policy.Turn, &d.refs)
	cfg := pipeline.GRPOConfigFor(&b.GRPO, t.ID)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var emitErr error
	cfg.OnGroup = func(g train.Group) {
		if emitErr != nil {
			return
		}
		if emitErr = emit(Item{Group: &g}); emitErr != nil {
			cancel(emitErr)
		}
	}
	res, err := train.GRPO(ctx, env, t, cfg)
	if emitErr != nil {
		return nil, emitErr
	}
	if err != nil {
		return nil, err
	}
	sum := &Summary{Groups: len(res.Groups), Stopped: res.Stopped, StopReason: res.StopReason}
	if b.SFT != nil {
		sr, err := train.RejectionSample(ctx, env, t, pipeline.SamplingConfigFor(b.SFT, b.SFT.Mode, t.ID))
		if err != nil {
			return nil, fmt.Errorf("sft: %w", err)
		}
		if err := emit(Item{SFT: sr}); err != nil {
			return nil, err
		}
	}
	return sum, nil
}
