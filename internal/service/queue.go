package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/internal/queue"
)

// ErrSFTThroughQueue is the error of a task of a batch asking for SFT
// prefixes when jobs run on the queue (the queue's jobs carry only the
// batch's GRPO settings): its groups are emitted, then the task ends
// with this error.
var ErrSFTThroughQueue = errors.New("service: sft prefixes are not available through the queue (run the service without --queue)")

// Queue runs jobs on a NATS JetStream work queue (internal/queue, served
// by `weft worker` processes): each task of a batch is one grpo unit
// (pipeline.Unit{Stage: "grpo", Key: task id}) of its own queue run,
// which is Run with a fresh ID and the batch's settings and endpoint
// (queue.Run.Batch); a worker runs the task's whole GRPO run against the
// trainer's endpoint and its result, the task's grpo.jsonl line, gives
// the task's groups, emitted in turn order when it arrives. So through
// the queue groups arrive per task, not per turn as in process.
// Cancelling a job purges its pending job from the stream.
type Queue struct {
	Q *queue.Queue
	// Experiment is the service's experiment as workers rebuild it: Config, File,
	// Vars and Modules (ID and Batch are set per job).
	Experiment queue.Run
}

// Run implements Dispatcher.
func (d *Queue) Run(ctx context.Context, b *Batch, t *task.Task, emit func(Item) error) (*Summary, error) {
	run := d.Experiment
	run.ID = queue.NewRunID()
	ep := *b.ConfigEndpoint()
	run.Batch = &pipeline.Batch{GRPO: b.GRPO, Endpoint: ep, Sampling: b.Sampling}
	var res *pipeline.UnitResult
	err := d.Q.Dispatcher(run).Dispatch(ctx, []pipeline.Unit{{Stage: pipeline.StageGRPO, Key: t.ID}}, func(r pipeline.UnitResult) error {
		res = &r
		return nil
	})
	if err != nil {
		return nil, err
	}
	switch {
	case res == nil:
		return nil, fmt.Errorf("service: no result of task %s from the queue", t.ID)
	case res.Infra != nil:
		return nil, res.Infra
	case res.Failure != nil:
		return nil, fmt.Errorf("%s (%s)", res.Failure.Message, res.Failure.Kind)
	case len(res.Lines) != 1:
		return nil, fmt.Errorf("service: task %s: %d grpo lines from the queue, want 1", t.ID, len(res.Lines))
	}
	var line struct {
		Result *train.GRPOResult `json:"result"`
	}
	if err := json.Unmarshal(res.Lines[0].Value, &line); err != nil || line.Result == nil {
		return nil, fmt.Errorf("service: task %s: a grpo line that does not decode: %v", t.ID, err)
	}
	for i := range line.Result.Groups {
		if err := emit(Item{Group: &line.Result.Groups[i]}); err != nil {
			return nil, err
		}
	}
	sum := &Summary{Groups: len(line.Result.Groups), Stopped: line.Result.Stopped, StopReason: line.Result.StopReason}
	if b.SFT != nil {
		return sum, ErrSFTThroughQueue
	}
	return sum, nil
}
