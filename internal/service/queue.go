package service

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/weft-dev/weft/core/task"
	"github.com/weft-dev/weft/core/train"
	"github.com/weft-dev/weft/internal/pipeline"
	"github.com/weft-dev/weft/internal/queue"
)

// Queue runs jobs on a NATS JetStream work queue (internal/queue, served
// by `weft worker` processes): each task of a batch is one grpo unit
// (pipeline.Unit{Stage: "grpo", Key: task id}) of its own queue run,
// which is Run with a fresh ID and the batch's settings and endpoint
// (queue.Run.Batch); a worker runs the task's whole GRPO run against the
// trainer's endpoint and its result, the task's grpo.jsonl line, gives
// the task's groups, emitted in turn order when it arrives. So through
// the queue groups arrive per task, not per turn as in process. When the
// batch asks for SFT, the task's sft unit follows on the same run and
// its result (the task's sft.jsonl line) is emitted as the SFT item.
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
	run.Batch = &pipeline.Batch{GRPO: b.GRPO, Endpoint: *b.ConfigEndpoint(), Sampling: b.Sampling, SFT: b.SFT}
	qd := d.Q.Dispatcher(run)
	var line struct {
		Result *train.GRPOResult `json:"result"`
	}
	if err := dispatchOne(ctx, qd, pipeline.StageGRPO, t.ID, &line); err != nil {
		return nil, err
	}
	if line.Result == nil {
		return nil, fmt.Errorf("service: task %s: a grpo line without a result from the queue", t.ID)
	}
	for i := range line.Result.Groups {
		if err := emit(Item{Group: &line.Result.Groups[i]}); err != nil {
			return nil, err
		}
	}
	sum := &Summary{Groups: len(line.Result.Groups), Stopped: line.Result.Stopped, StopReason: line.Result.StopReason}
	if b.SFT != nil {
		var sl struct {
			Result *train.SampleResult `json:"result"`
		}
		if err := dispatchOne(ctx, qd, pipeline.StageSFT, t.ID, &sl); err != nil {
			return nil, fmt.Errorf("sft: %w", err)
		}
		if sl.Result == nil {
			return nil, fmt.Errorf("sft: task %s: an sft line without a result from the queue", t.ID)
		}
		if err := emit(Item{SFT: sl.Result}); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// dispatchOne runs the unit stage/key through qd and decodes its one
// journal line into line.
func dispatchOne(ctx context.Context, qd *queue.Dispatcher, stage, key string, line any) error {
	var res *pipeline.UnitResult
	err := qd.Dispatch(ctx, []pipeline.Unit{{Stage: stage, Key: key}}, func(r pipeline.UnitResult) error {
		res = &r
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case res == nil:
		return fmt.Errorf("service: no result of %s unit %s from the queue", stage, key)
	case res.Infra != nil:
		return res.Infra
	case res.Failure != nil:
		return fmt.Errorf("%s (%s)", res.Failure.Message, res.Failure.Kind)
	case len(res.Lines) != 1:
		return fmt.Errorf("service: %s unit %s: %d lines from the queue, want 1", stage, key, len(res.Lines))
	}
	if err := json.Unmarshal(res.Lines[0].Value, line); err != nil {
		return fmt.Errorf("service: %s unit %s: a line that does not decode: %w", stage, key, err)
	}
	return nil
}
